"""Capture: a graph that writes in place a tensor computed from a number passed as a graph input (an attribute's
float made dynamic by a recompile) guards its tensor inputs' storage overlap without taking the number for a
written tensor input (it failed while building the graph module: fuzz seed 173 of the soundness campaign). As
eager, both doors, no fallback."""

import pytest
import torch

import jitcore as jit
from tests.support import check_against_eager, check_registered_against_eager


class Knob:
    def __init__(self, gain):
        self.gain = gain


def f(va, vb, knob):
    t = va * knob.gain
    t[0] = vb[-1] * 0.5
    return t + vb


def test_a_write_to_a_tensor_made_from_a_dynamic_number(monkeypatch):
    monkeypatch.setattr(jit.config, "strict", True)  # an internal error raises instead of running natively
    base = torch.randn(9, generator=torch.Generator().manual_seed(3))
    arg_sets = [(base[:4], base[5:], Knob(gain)) for gain in (-1.0, 1.0, 0.5)]
    check_against_eager(f, *arg_sets, expected_graphs=None)
    check_registered_against_eager(f, *arg_sets)
