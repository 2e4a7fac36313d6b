"""Does a compiled model's output match eager's? Outputs are nested tuples, lists, dicts (Hugging Face ModelOutput,
detection dicts) and dataclasses of tensors and plain values; both sides are flattened and compared leaf by leaf,
tensors with allclose scaled to the size of eager's values, everything else with ==.
Entry points: `leaves(output)`, `max_difference(expected, actual)` -> float (inf for a mismatch of structure).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import torch

__all__ = ["leaves", "max_difference", "close"]

#: relative tolerance, and absolute tolerance as a fraction of the largest eager value (float32 reductions
#: reordered by a compiler differ at the 1e-6 level; anything near 1e-3 of the scale is a wrong result)
RTOL = 1e-3
ATOL = 1e-4


_PLAIN = (type(None), bool, int, float, complex, str, bytes, torch.dtype, torch.device, torch.Size)


def leaves(output) -> list:
    """(path, leaf) pairs in a fixed order. Objects other than containers and plain values (a Hugging Face
    Cache, say) are walked through their attributes: two runs make two objects, equal in what they hold."""
    found: list = []
    seen: set = set()

    def walk(value, path):
        if not isinstance(value, _PLAIN):
            if id(value) in seen:  # shared or cyclic: compared where first met
                return
            seen.add(id(value))
        if isinstance(value, torch.Tensor):
            found.append((path, value))
        elif isinstance(value, Mapping):
            for key in value:
                walk(value[key], f"{path}.{key}")
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, f"{path}[{i}]")
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for field in dataclasses.fields(value):
                walk(getattr(value, field.name), f"{path}.{field.name}")
        elif hasattr(value, "__dict__") and not isinstance(value, (type, torch.nn.Module)) and not callable(value):
            found.append((f"{path}:type", type(value)))
            for key, item in sorted(vars(value).items()):
                walk(item, f"{path}.{key}")
        else:
            found.append((path, value))

    walk(output, "out")
    return found


def max_difference(expected, actual) -> float:
    """The largest |expected - actual| over every tensor leaf, scaled by the tolerance (so <= 1 means close);
    inf when the structures, shapes, dtypes or plain values differ."""
    want, got = leaves(expected), leaves(actual)
    if [p for p, _ in want] != [p for p, _ in got]:
        return math.inf
    worst = 0.0
    for (_, a), (_, b) in zip(want, got):
        if isinstance(a, torch.Tensor) != isinstance(b, torch.Tensor):
            return math.inf
        if not isinstance(a, torch.Tensor):
            if a != b:
                return math.inf
            continue
        if a.shape != b.shape or a.dtype != b.dtype:
            return math.inf
        if a.numel() == 0:
            continue
        a, b = a.detach().cpu(), b.detach().cpu()
        if not a.is_floating_point() and not a.is_complex():
            if not torch.equal(a, b):
                return math.inf
            continue
        a, b = a.double(), b.double()
        if not torch.equal(torch.isnan(a), torch.isnan(b)):
            return math.inf
        finite = ~torch.isnan(a)
        a, b = a[finite], b[finite]
        if a.numel() == 0:
            continue
        scale = max(a.abs().max().item(), 1.0)
        allowed = ATOL * scale + RTOL * a.abs()
        worst = max(worst, ((a - b).abs() / allowed).max().item())
    return worst


def close(expected, actual) -> bool:
    return max_difference(expected, actual) <= 1.0
