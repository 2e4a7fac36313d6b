"""Graphs and inputs for backends/ tests, made the way jitcore makes them, and a gradient helper.

jitcore hands a backend a GraphModule whose nodes carry FakeTensors in meta["val"] and meta["example_value"],
with example inputs that are FakeTensors of one FakeTensorMode (static shapes) keeping requires_grad, dtype,
device and strides. `graph_and_fake_inputs` builds exactly that from a plain function of tensors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.fx
from torch._subclasses import FakeTensorMode
from torch.fx.passes.fake_tensor_prop import FakeTensorProp

__all__ = ["grads_of", "graph_and_fake_inputs", "leaf"]


def graph_and_fake_inputs(fn: Callable[..., Any], *inputs: torch.Tensor) -> tuple[torch.fx.GraphModule, list[Any]]:
    """`fn` traced into a GraphModule with FakeTensor metadata, and FakeTensor copies of `inputs` from one mode."""
    gm = torch.fx.symbolic_trace(fn)
    mode = FakeTensorMode()
    fake_inputs = [mode.from_tensor(tensor) for tensor in inputs]
    FakeTensorProp(gm, mode).propagate(*fake_inputs)
    for node in gm.graph.nodes:
        if "val" in node.meta:
            node.meta["example_value"] = node.meta["val"]
    return gm, fake_inputs


def leaf(*shape: int, seed: int, requires_grad: bool = False, device: str = "cpu") -> torch.Tensor:
    """A reproducible random leaf tensor."""
    generator = torch.Generator().manual_seed(seed)
    tensor = torch.randn(*shape, generator=generator).to(device)
    return tensor.requires_grad_(requires_grad)


def grads_of(outputs: Any, inputs: list[torch.Tensor]) -> list[torch.Tensor | None]:
    """The gradients of sum(every output's sum) with respect to `inputs`, through torch.autograd.grad."""
    total = sum(output.sum() for output in outputs)
    wanted = [tensor for tensor in inputs if tensor.requires_grad]
    grads = iter(torch.autograd.grad(total, wanted))
    return [next(grads) if tensor.requires_grad else None for tensor in inputs]
