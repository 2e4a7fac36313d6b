"""A small classifier trained with SGD: the loop logs every few steps and skips a step whose loss is not finite.

Run it as it is, or with `JITCORE=1 python examples/train_loop.py` to see what jitcore compiles (add
`JITCORE_LOG=breaks,graphs` for the details). The output is the same either way.
"""
import logging
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(levelname)s %(message)s")
log = logging.getLogger("train")


class Classifier(nn.Module):
    def __init__(self, features=16, hidden=32, classes=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(self.body(x))


def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    if not torch.isfinite(loss):  # a data-dependent guard: the tensor's value decides
        return None
    loss.backward()
    optimizer.step()
    return loss.detach()


def batches(steps, batch=8, features=16, classes=4):
    generator = torch.Generator().manual_seed(0)
    for _ in range(steps):
        x = torch.randn(batch, features, generator=generator)
        yield x, (x[:, :classes].argmax(dim=1))


def main():
    torch.manual_seed(0)
    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    total = 0.0
    for step, (x, y) in enumerate(batches(30)):
        loss = train_step(model, optimizer, x, y)
        if loss is None:
            log.warning("step %d: loss is not finite, skipped", step)
            continue
        total += loss.item()
        if step % 10 == 9:
            log.info("step %d: mean loss %.4f", step + 1, total / 10)
            total = 0.0
    print(f"final weight norm {model.head.weight.norm().item():.4f}")


if __name__ == "__main__":
    main()
