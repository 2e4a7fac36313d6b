"""Greedy generation with a tiny GRU language model: one token at a time until an end token or a length limit.

Run it as it is, or with `JITCORE=1 python examples/generate.py` to see what jitcore compiles. The output is the
same either way.
"""
import torch
import torch.nn as nn

END = 0


class TinyLM(nn.Module):
    def __init__(self, vocab=32, dim=24):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens, state=None):
        h, state = self.rnn(self.embed(tokens), state)
        return self.out(h[:, -1]), state


def next_token(model, tokens, state, temperature):
    logits, state = model(tokens, state)
    return (logits / temperature).argmax(dim=-1, keepdim=True), state


def generate(model, prompt, max_new=12, temperature=1.0):
    tokens = prompt
    token, state = next_token(model, prompt, None, temperature)
    for _ in range(max_new):
        tokens = torch.cat([tokens, token], dim=1)
        if (token == END).all():
            break
        token, state = next_token(model, token, state, temperature)
    return tokens


def main():
    torch.manual_seed(0)
    model = TinyLM().eval()
    with torch.no_grad():
        for seed in range(3):
            prompt = torch.randint(1, 32, (1, 4), generator=torch.Generator().manual_seed(seed))
            print(" ".join(str(t) for t in generate(model, prompt)[0].tolist()))


if __name__ == "__main__":
    main()
