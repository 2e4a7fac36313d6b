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
Note [Input writes under AOTAutograd]: AOTAutograd functionalizes a graph that writes an input in place, and that
goes wrong where autograd saw the input's data before the write: a graph that reads an input into an op whose
result requires grad and then writes the input in place fails to compile ("a variable needed for gradient
computation has been modified by an inplace operation", where eager, which never runs backward, is fine), and a
graph that reads one view of a base and then writes grad-requiring data into another view of it returns the first
read's results as requiring grad (the synthetic base carries the write's history). Neither happens to a graph whose
first reader of the input is the write itself, so for a graph bound for AOTAutograd with grad mode on, such a write
breaks the graph before it: the next graph starts with the write. The same holds for a tensor the graph made: a
write to it breaks when an earlier op's autograd node saved it for backward (its `_saved_*` tensors; one that
saved only its result, as sigmoid does, is no reason). An earlier item write into the same tensor (`out[rows] =
...` per expert) is no such read: index_put's backward keeps the indices only.
Imports torch and capture's graph, sources and breaks only. Entry points: `note_writes`, `check_may_raise`,
`check_input_write`.
"""
from __future__ import annotations

import operator

import torch
from torch.fx.experimental.symbolic_shapes import is_concrete_int
from torch.multiprocessing.reductions import StorageWeakRef

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.sources import ModuleDictSource

__all__ = ["RAISES_ON_DATA", "SNAPSHOT_LIMIT", "check_input_write", "check_may_raise", "note_writes"]

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


#: ids of graph targets that may raise on tensor data whatever their name says (NumPy operations run on
#: torch._numpy: indexing, integer division, linalg; values/ndarray.py adds each one it makes and keeps it alive)
RAISES_ON_DATA: set = set()


def _name(target) -> str:
    return target if isinstance(target, str) else getattr(target, "__name__", "") or ""


def _storage_key(example):
    """The storage a (fake) tensor's data lives in, as a key: views and detached aliases share it; None when it
    cannot be told (then any input the value was computed from counts as written)."""
    try:
        return _storage(example) if isinstance(example, torch.Tensor) else None
    except Exception:
        return None


def note_writes(graph, target, mutated: list) -> None:
    """Record that `target` wrote the tensor values `mutated` in place: the graph inputs it wrote (those whose data
    shares storage with a written value: a view of an input, the input itself; where the storage cannot be told,
    any input the value was computed from), and whether what it wrote can no longer be put back by copying values
    (Note [Raising after a write that cannot be undone]). A tensor computed from an input (`h = x @ w; h /= 2`) is
    a new tensor: writing it writes no input."""
    if not mutated:
        return
    graph.write_count += 1
    name = _name(target)
    todo = [value.node for value in mutated if isinstance(getattr(value, "node", None), torch.fx.Node)]
    written = {_storage_key(value.fake) for value in mutated}
    unknown = None in written

    def aliased(node) -> bool:
        if unknown:
            return True
        key = _storage_key(node.meta.get("example_value"))
        return key is None or key in written
    seen, holds = set(), False
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.op == "get_attr" and aliased(node):
            holds = True
        if node.op == "placeholder" and aliased(node):
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
    if id(target) in RAISES_ON_DATA:
        return True
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


def _storage(fake):
    return StorageWeakRef(fake.untyped_storage())


def _requires_grad(fake) -> bool:
    if isinstance(fake, torch.Tensor):
        return fake.requires_grad
    if isinstance(fake, (list, tuple)):
        return any(_requires_grad(item) for item in fake)
    return False


def _aliases(fake, storages) -> bool:
    return isinstance(fake, torch.Tensor) and not fake.is_sparse and _storage(fake) in storages


def check_input_write(graph, target, written: list) -> None:
    """Break before the in-place `target` that wrote `written` (values, fake state already past the write) when the
    graph goes to AOTAutograd and it writes an input whose data an earlier op of the graph read for autograd
    (Note [Input writes under AOTAutograd])."""
    if not graph.autograd_backend or not written or not torch.is_grad_enabled():
        return
    fakes = [v.fake for v in written if isinstance(getattr(v, "fake", None), torch.Tensor) and not v.fake.is_sparse]
    storages = {_storage(fake) for fake in fakes}
    if not storages:
        return
    writes_grad = any(fake.requires_grad for fake in fakes)
    inputs = [value.node for source, value in graph.inputs.items()
              if not isinstance(source, ModuleDictSource) and _aliases(getattr(value, "fake", None), storages)]
    # a tensor the graph made (or a view of it) that an earlier op saved for backward: AOTAutograd cannot trace
    # that write either
    made = [node for node in graph.graph.nodes
            if node.op in _CALLS and _aliases(node.meta.get("example_value"), storages)]
    _check_readers(target, inputs, storages, writes_grad)
    _check_readers(target, made, storages, False)


_CALLS = ("call_function", "call_method", "call_module")


def _input_grad_fns(node) -> set:
    fns = set()
    for arg in node.all_input_nodes:
        example = arg.meta.get("example_value")
        if isinstance(example, torch.Tensor) and example.grad_fn is not None:
            fns.add(example.grad_fn)
    return fns


def _saves(out, storages, stop) -> bool:
    """An autograd node the op that made `out` recorded (down to `stop`, its inputs' nodes) saved a tensor over
    `storages` for backward (reading a saved tensor that was written since raises: the write at hand)."""
    if isinstance(out, (list, tuple)):
        return any(_saves(item, storages, stop) for item in out)
    grad_fn = getattr(out, "grad_fn", None) if isinstance(out, torch.Tensor) else None
    todo, seen = [grad_fn], set()
    while todo and len(seen) < 64:
        fn = todo.pop()
        if fn is None or fn in stop or fn in seen:
            continue
        seen.add(fn)
        for name in dir(fn):
            if not name.startswith("_saved_"):
                continue
            try:
                saved = getattr(fn, name)
            except RuntimeError:
                return True  # saved, then modified in place: by this very write
            except Exception:
                continue
            items = saved if isinstance(saved, (list, tuple)) else (saved,)
            if any(_aliases(item, storages) for item in items):
                return True
        todo.extend(next_fn for next_fn, _ in fn.next_functions)
    return False


def _item_write_into(user, node) -> bool:
    """`user` is `node[index] = value`: an earlier write, not a read autograd keeps (index_put's backward saves the
    indices only), so AOTAutograd compiles a second write after it (`out[rows] = ...` once per expert)."""
    return user.target is operator.setitem and user.args[0] is node


def _check_readers(target, todo, storages, writes_grad) -> None:
    seen = set()
    while todo:
        node = todo.pop()
        for user in node.users:
            if user in seen or user.op not in _CALLS:
                continue
            seen.add(user)
            out = user.meta.get("example_value")
            if _aliases(out, storages):
                todo.append(user)  # a view of the written tensor: what reads it counts
            elif (writes_grad and not _item_write_into(user, node)) or _saves(out, storages, _input_grad_fns(user)):
                raise GraphBreak("input_write_autograd", f"in-place {_name(target) or target} of a tensor read "
                                f"earlier in the graph by {user.name}")
