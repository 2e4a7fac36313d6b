"""A one-element integer tensor where an op needs a number (`F.interpolate(size=(h, w))`, `F.pad` amounts, as ViLT
computes them per image) needs the tensor's value: the capture breaks there as `data_dependent` (as torch.compile
does on `.item()`), the op runs in Python, and the result equals eager (Note [A tensor used as a number],
capture/graph.py)."""

import torch
import torch.nn.functional as F

import jitcore as jit
from tests.support import check_against_eager


def _resize_per_row(pos, mask):
    heights = mask.sum(dim=1)[:, 0]
    widths = mask.sum(dim=2)[:, 0]
    parts = [F.pad(F.interpolate(pos, size=(h, w), mode="bilinear", align_corners=True), (0, 6 - w, 0, 6 - h))
             for h, w in zip(heights, widths)]
    return torch.cat(parts) * 2


def _stack_of_scalars(a, b):
    # a 0-d integer tensor in a list is ordinary here: no break
    return torch.stack([a.sum(), b.sum()]) + 1


def _inputs(cut):
    mask = torch.ones(2, 6, 6, dtype=torch.long)
    mask[1, cut:, :] = 0
    return torch.randn(1, 2, 4, 4), mask


def test_tensor_sizes_in_interpolate_and_pad_break_as_data_dependent_and_match_eager():
    check_against_eager(_resize_per_row, _inputs(4), _inputs(4), expected_graphs=None)
    report = jit.explain(_resize_per_row, *_inputs(4))
    kinds = {b.reason.split(" (")[0] for b in report.breaks}
    assert any("value of a tensor is needed" in b.reason and "interpolate" in b.reason for b in report.breaks), kinds
    assert not any("fake tensors" in b.reason for b in report.breaks)


def test_zero_dim_integer_tensors_in_a_list_still_trace():
    ints = (torch.arange(4), torch.arange(3))
    check_against_eager(_stack_of_scalars, ints, ints, expected_graphs=1)
