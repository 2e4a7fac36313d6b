"""TorchFunctionModes entered inside the captured code: every torch call under one goes through its
__torch_function__, traced.

Note [Torch function modes traced]
`with mode:` (a `torch.overrides.TorchFunctionMode`; an __enter__ of its own is traced, and reaches torch's
through super()) pushes the mode on a stack that capture keeps (`CaptureContext.function_modes`), not on torch's: nothing is pushed for real while tracing, and
the graph holds what the mode's __torch_function__ made of each call. While the stack is not empty, each torch
function, Tensor method, operator, indexing and tensor property read of the traced code (`dispatch`, called where
those are modelled) becomes an inlined call of the innermost mode's `__torch_function__(func, types, args, kwargs)`
with that mode taken off the stack, as torch's handle_torch_function does: a call of `func` inside reaches the next
mode, or the op itself. `func` is the callable eager hands the mode (`x + 1` is `Tensor.add`: learnt from torch
once, `_OPERATOR_FUNCS`); `types` is empty (eager passes () or (Tensor,) by the C entry point, for plain
tensors alike).
Where eager shows the mode calls that capture keeps inside one node, capture shows them too or breaks: a torch
function taken as one op although it is Python code that does not ask `has_torch_function` itself breaks (the mode
would see the calls inside it); an autograd.Function call breaks (its forward's calls); torch.vmap makes its own
dim()/size() questions through the mode (Note [vmap under a TorchFunctionMode], values/vmap.py).
What stays sound around it:
- a mode already on torch's stack when the frame starts: the frame runs natively (Note [Torch function modes],
  capture/frame.py), and GlobalStateMatch guards the depth of the stack;
- a graph break while a traced mode is active, a function that returns with one still pushed, or a capture that
  stops inside one, moves the break to the root-frame instruction that entered the outermost of them (`relocate`):
  that `with` (or the call that entered it) runs in Python, the mode is real from there, and the rest of the block
  runs natively under it, as before this module; no resume function ever starts inside a traced mode;
- what reads torch's mode stack (`_len_torch_function_stack` and the like) breaks the same way.
Imports capture's breaks and values. Entry points: `dispatch` (tensor.py, torch_rules.py), `relocate` (the
interpreter and capture/frame.py), `ModeEntry`; the call rules that enter and leave modes are in
values/function_mode_rules.py.
"""
from __future__ import annotations

import linecache
import operator
import types

import torch
import torch.overrides

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.constant import const
from jitcore.capture.values.sequence import TupleValue
from jitcore.capture.values.wrapping import wrap

__all__ = ["ModeEntry", "dispatch", "relocate", "mode_break", "is_mode", "operator_func", "property_getter"]

_MODE = torch.overrides.TorchFunctionMode


def _ignored():
    """The callables eager never shows a mode (torch.overrides.get_ignored_functions: torch.is_tensor, ...)."""
    out = set()
    for fn in torch.overrides.get_ignored_functions():
        try:
            out.add(fn)
        except TypeError:
            pass
    return frozenset(out)


_IGNORED = _ignored()


class ModeEntry:
    """A mode on capture's stack, the root-frame (offset, visit) of the instruction that entered it and the user's
    line that did (a break's location)."""

    __slots__ = ("mode", "origin", "location")

    def __init__(self, state, mode):
        self.mode = mode
        self.origin = state.origin()
        code = state.code
        self.location = (code.co_filename, state.lineno, linecache.getline(code.co_filename, state.lineno),
                         code.co_name)


def relocate(ctx, brk: GraphBreak) -> GraphBreak:
    """A break while traced modes are active happens at the instruction that entered the outermost one instead
    (Note [Torch function modes traced]); the detail names the mode."""
    if not ctx.function_modes or brk.whole_frame:
        return brk
    outer = ctx.function_modes[0]
    brk.root_offset, brk.root_visit = outer.origin
    if brk.location is None:
        brk.location = outer.location
    name = outer.mode.python_type().__name__
    if f"under {name}" not in brk.detail:
        brk.detail = f"{brk.detail} (under {name}, entered here: the block runs in Python)" if brk.detail \
            else f"under {name}, entered here: the block runs in Python"
    return brk


def mode_break(state, what: str) -> GraphBreak:
    name = state.ctx.function_modes[-1].mode.python_type().__name__
    return GraphBreak("torch_function_mode", f"{what} under {name}")


# -- dispatch -------------------------------------------------------------------------------------------------
def dispatch(state, func, args: list, kwargs: dict):
    """`func(*args, **kwargs)` through the innermost traced mode's __torch_function__ (its result value), or None
    when no traced mode is active or eager shows the mode nothing for func."""
    modes = state.ctx.function_modes
    if not modes:
        return None
    if _is_ignored(func):
        return None
    if isinstance(func, types.FunctionType) and not _asks_for_modes(func):
        raise mode_break(state, f"{func.__qualname__}, Python code jitcore takes as one op,")
    entry = modes.pop()
    try:
        return _call_torch_function(state, entry.mode, func, args, kwargs)
    finally:
        modes.append(entry)


def _call_torch_function(state, mode, func, args, kwargs):
    method = _class_torch_function(mode)
    if method is None:
        raise mode_break(state, "a __torch_function__ that is not a Python function")
    # a new dict value through const(): values/mapping.py is above this module (its kinds call rules)
    kwargs_value = const({})
    kwargs_value.items.update(kwargs)
    arguments = [mode, wrap(state, func, None), TupleValue([]), TupleValue(list(args)), kwargs_value]
    result = state.inline_call(method, arguments, {}, machinery=True)
    if result.constant() is NotImplemented:
        raise mode_break(state, "__torch_function__ returning NotImplemented")
    return result


def _class_torch_function(mode):
    cls = mode.python_type()
    for klass in cls.__mro__:
        fn = vars(klass).get("__torch_function__")
        if fn is not None:
            if isinstance(fn, classmethod):
                return None
            return fn if isinstance(fn, types.FunctionType) else None
    return None


def _is_ignored(func) -> bool:
    try:
        return func in _IGNORED
    except TypeError:
        return False


def _asks_for_modes(fn) -> bool:
    """A Python torch function shows a mode itself (its code asks has_torch_function, or its decorator's does)."""
    while fn is not None:
        names = fn.__code__.co_names
        if any(n.startswith(("has_torch_function", "handle_torch_function")) for n in names):
            return True
        fn = getattr(fn, "__wrapped__", None)
        if not isinstance(fn, types.FunctionType):
            return False
    return False


# -- what eager hands a mode for operators and properties -----------------------------------------------------
def _learn_operator_funcs() -> dict:
    """(operator name, tensor on the left) -> (func, tensor first in args), as torch's own dispatch shows a mode;
    learnt once by running each operator on small tensors under a recording mode."""
    seen = []

    class Recorder(_MODE):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((func, args))
            return func(*args, **(kwargs or {}))

    names = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_", "xor", "lshift",
             "rshift", "lt", "le", "eq", "ne", "gt", "ge", "iadd", "isub", "imul", "itruediv", "ifloordiv",
             "imod", "ipow", "imatmul", "iand", "ior", "ixor", "ilshift", "irshift"]
    table = {}
    samples = (lambda: torch.ones(2, 2), lambda: torch.ones(2, 2, dtype=torch.int64),
               lambda: torch.ones(2, 2, dtype=torch.bool))
    for name in names:
        op = getattr(operator, name)
        for left in (True, False):
            for make in samples:
                t, u = make(), make()
                seen.clear()
                try:
                    with Recorder():
                        op(t, u) if name == "matmul" or name == "imatmul" else (op(t, 1) if left else op(1, t))
                except Exception:
                    continue
                if seen:
                    func, args = seen[0]
                    table[name, left] = (func, bool(args) and args[0] is t)
                break
    for name in ("neg", "pos", "invert", "abs"):
        for make in samples:
            t = make()
            seen.clear()
            try:
                with Recorder():
                    getattr(operator, name)(t)
            except Exception:
                continue
            if seen:
                table[name, True] = (seen[0][0], True)
            break
    return table


_OPERATOR_FUNCS = _learn_operator_funcs()


def operator_func(op: str, tensor_left: bool):
    """(func, tensor first) eager hands a mode for `operator.<op>` with a tensor on the left (else the right);
    None where capture did not learn it."""
    return _OPERATOR_FUNCS.get((op, tensor_left))


def property_getter(name: str):
    """`Tensor.<name>.__get__` for a C property of tensors (what a mode sees for `x.shape`), else None."""
    descriptor = getattr(torch._C.TensorBase, name, None)
    if type(descriptor) is types.GetSetDescriptorType:
        return descriptor.__get__
    return None


def is_mode(value) -> bool:
    cls = value.python_type()
    return isinstance(cls, type) and issubclass(cls, _MODE)
