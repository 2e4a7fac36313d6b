"""Keeping Python's order when a graph op raises after an in-place write the entry cannot undo.

Note [Raising after a write that cannot be undone]: when a graph raises, the entry puts back the inputs it wrote
and runs the frame natively from its start (Note [A graph that raises], codegen/transform.py), so the side effects
before the error and the user's `try` are Python's own. That needs copies of the written inputs; an input that
requires grad, a module's state, a write to metadata or more than SNAPSHOT_LIMIT elements cannot be copied, and
then the graph's exception leaves the frame as it comes: the Python side effects recorded before the raising op
(replayed only after the graph) would be lost, and a handler around it in the frame would never see it. So an op
that can raise on tensor data (an index, a gather, an embedding lookup) that follows such a write breaks the graph
before it, where side effects are pending or a handler is active: the write and the side effects happen first,
and the op runs in Python (or in the next graph, whose own entry can start over).
Imports torch and capture's graph and breaks only. Entry points: `note_writes`, `check_may_raise`.
"""
from __future__ import annotations

import operator

import torch
from torch.fx.experimental.symbolic_shapes import is_concrete_int

from jitcore.capture.breaks import GraphBreak

__all__ = ["SNAPSHOT_LIMIT", "check_may_raise", "note_writes"]

#: the most elements an entry copies per call to be able to put its inputs back (a KV cache written in place is
#: not copied on every call: such a graph raises as it comes)
SNAPSHOT_LIMIT = 1 << 16

#: operations that change a tensor's metadata or storage, which a copy of its values cannot put back
METADATA_MUTATIONS = frozenset({"resize_", "resize_as_", "set_", "as_strided_", "transpose_", "t_", "squeeze_",
                                "unsqueeze_", "swapaxes_", "swapdims_", "detach_", "requires_grad_",
                                "share_memory_", "sparse_resize_", "sparse_resize_and_clear_", "retain_grad"})

#: words in the names of operations that check tensor data (indices, probabilities) and raise when it is invalid
_CHECKING_WORDS = ("index", "gather", "scatter", "take", "embedding", "one_hot", "bincount", "multinomial", "put",
                   "cholesky", "_assert")


def _name(target) -> str:
    return target if isinstance(target, str) else getattr(target, "__name__", "") or ""


def note_writes(graph, target, mutated: list) -> None:
    """Record that `target` wrote the tensor values `mutated` in place: the graph inputs it may have written (any
    input they were computed from: conservative), and whether what it wrote can no longer be put back by copying
    values (Note [Raising after a write that cannot be undone])."""
    if not mutated:
        return
    name = _name(target)
    todo = [value.node for value in mutated if isinstance(getattr(value, "node", None), torch.fx.Node)]
    seen, holds = set(), False
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        holds = holds or node.op == "get_attr"
        if node.op == "placeholder":
            graph.written_inputs.add(node)
        todo.extend(node.all_input_nodes)
    if graph.unrestorable_write is not None:
        return
    if name in METADATA_MUTATIONS:
        graph.unrestorable_write = name
        return
    if holds:
        graph.unrestorable_write = f"{name} (a tensor the graph holds)"
        return
    total = 0
    for node in graph.written_inputs:
        example = node.meta.get("example_value")
        if not isinstance(example, torch.Tensor):
            continue
        numel = example.numel()
        if example.requires_grad or not is_concrete_int(numel):
            graph.unrestorable_write = f"{name} ({node.meta.get('source', node.name)})"
            return
        total += int(numel)
    if total > SNAPSHOT_LIMIT:
        graph.unrestorable_write = f"{name} ({total} elements)"


def _integral_tensor(fake) -> bool:
    if isinstance(fake, torch.Tensor):
        return not fake.dtype.is_floating_point and not fake.dtype.is_complex and fake.dtype is not torch.bool
    if isinstance(fake, (list, tuple)):
        return any(_integral_tensor(item) for item in fake)
    return False


def _checks_data(target, fake_args: list, fake_kwargs: dict) -> bool:
    """`target` may raise on the values of its tensor arguments (an index out of range)."""
    name = _name(target)
    if target in (operator.getitem, operator.setitem) or name in ("__getitem__", "__setitem__"):
        return any(_integral_tensor(arg) for arg in fake_args[1:2])
    if any(word in name for word in _CHECKING_WORDS):
        return True
    return False


def check_may_raise(state, target, fake_args: list, fake_kwargs: dict) -> None:
    """Break before `target` when it may raise on tensor data after a write the entry cannot undo, and something
    observable depends on where it raises (Note [Raising after a write that cannot be undone])."""
    write = state.graph.unrestorable_write
    if write is None or not _checks_data(target, fake_args, fake_kwargs):
        return
    if state.ctx.side_effects or state.has_handler():
        raise GraphBreak("raise_after_write", f"{_name(target) or target} after the in-place {write}")
