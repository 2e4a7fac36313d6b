"""A module that keeps a Python-side cache: rotary-style position tables built once per sequence length.

Run it as it is, or with `JITCORE=1 python examples/cached_module.py` to see what jitcore compiles. The output is
the same either way.
"""
import torch
import torch.nn as nn


class PositionTables(nn.Module):
    """Adds a sinusoidal table to its input; the table for each length is built on first use and kept."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.cache = {}
        self.built = 0

    def table(self, length):
        if length not in self.cache:
            position = torch.arange(length, dtype=torch.float32)[:, None]
            frequency = torch.exp(torch.arange(0, self.dim, 2, dtype=torch.float32) * (-4.0 / self.dim))
            angles = position * frequency
            self.cache[length] = torch.cat([angles.sin(), angles.cos()], dim=-1)
            self.built += 1
        return self.cache[length]

    def forward(self, x):
        return x + self.table(x.shape[1])


class Encoder(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.positions = PositionTables(dim)
        self.mix = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        h = self.positions(x)
        return self.norm(h + torch.tanh(self.mix(h)))


def encode(encoder, x):
    return encoder(x).mean(dim=1)


def main():
    torch.manual_seed(0)
    encoder = Encoder()
    generator = torch.Generator().manual_seed(1)
    for length in (5, 7, 5, 9, 7, 5):
        x = torch.randn(2, length, 16, generator=generator)
        out = encode(encoder, x)
        print(f"length {length}: {out.pow(2).sum().item():.4f}")
    print(f"tables built: {encoder.positions.built}, cached lengths: {sorted(encoder.positions.cache)}")


if __name__ == "__main__":
    main()
