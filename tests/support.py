"""Shared helpers for jitcore's tests: a counting backend, an eager-equality check and the standard eager comparison.

Owns no fixtures (see tests/conftest.py) and imports jitcore only inside the helpers that compile, so that tests of
guards/ and backends/ can use `assert_same` without loading the engine.
Entry points: `CountingBackend`, `Args`, `assert_same`, `compare_call`, `check_against_eager`,
`check_registered_against_eager`, and for comparisons of more than results (printed output, globals, objects)
`both_doors` and `outcome`; inputs from `randn`, `randint` and `arg_sets`; the recompile log from
`recompile_messages`.
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch.fx

try:
    import numpy as np
except ImportError:  # numpy is a test extra: without it no value is an array
    np = None

__all__ = [
    "Args",
    "CountingBackend",
    "arg_sets",
    "assert_same",
    "both_doors",
    "check_against_eager",
    "check_registered_against_eager",
    "clone_inputs",
    "compare_call",
    "outcome",
    "randint",
    "randn",
]

#: FX node kinds that do work; placeholders, get_attr and output nodes are bookkeeping.
_OP_NODE_KINDS = frozenset({"call_function", "call_method", "call_module"})


class CountingBackend:
    """A backend that records every graph it is handed and then runs it (or hands it on to `inner`).

    Vocabulary: `graphs[i]` is the i-th GraphModule compiled, `example_inputs[i]` the list it came with.
    Invariant: `graph_count == len(graphs) == len(example_inputs)`; `clear()` empties both.
    """

    def __init__(self, inner: Callable[..., Any] | str | None = None) -> None:
        #: the backend to delegate to: None runs `gm.forward`; a name is looked up in the backends registry.
        self.inner = inner
        #: every GraphModule received, in order.
        self.graphs: list[torch.fx.GraphModule] = []
        #: the example inputs received with each graph, in the same order.
        self.example_inputs: list[list[Any]] = []

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
        self.graphs.append(gm)
        self.example_inputs.append(list(example_inputs))
        if self.inner is None:
            return gm.forward
        inner = self.inner
        if isinstance(inner, str):
            from jitcore.backends import lookup  # only when a test asks for a named backend

            inner = lookup(inner)
        return inner(gm, example_inputs)

    @property
    def graph_count(self) -> int:
        return len(self.graphs)

    @property
    def op_count(self) -> int:
        """Number of call_function / call_method / call_module nodes over all graphs received."""
        return sum(1 for gm in self.graphs for node in gm.graph.nodes if node.op in _OP_NODE_KINDS)

    def clear(self) -> None:
        self.graphs.clear()
        self.example_inputs.clear()

    def __repr__(self) -> str:
        return f"CountingBackend(graph_count={self.graph_count}, op_count={self.op_count})"


class Args:
    """One call's arguments for `check_against_eager`: positional and keyword (a plain tuple means positional only)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"Args({', '.join(parts)})"


def randn(*shape: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A reproducible random tensor: the same shape and seed always give the same values."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator, dtype=dtype)


def randint(*shape: int, high: int = 10, seed: int = 0) -> torch.Tensor:
    """A reproducible int64 tensor with values in [-high, high)."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(-high, high, shape, generator=generator)


def arg_sets(*shapes: tuple[int, ...], count: int = 2, dtype: torch.dtype = torch.float32) -> list[tuple[Any, ...]]:
    """`count` arg sets of random tensors, one tensor per shape, with different values in each set.

    Example: `arg_sets((4, 3), (3, 2))` -> `[(x1, w1), (x2, w2)]`, ready for `check_against_eager(f, *arg_sets(...))`.
    """
    return [
        tuple(randn(*shape, seed=100 * call + position, dtype=dtype) for position, shape in enumerate(shapes))
        for call in range(1, count + 1)
    ]


def clone_inputs(value: Any, _memo: dict[int, Any] | None = None) -> Any:
    """A copy of `value` in which every tensor is a fresh clone; aliasing between the inputs is preserved.

    Tensors keep dtype, strides of dense layouts and `requires_grad` (a clone of a leaf stays a leaf).
    Containers are rebuilt with their exact type; any other object is shared, not copied.
    """
    memo = {} if _memo is None else _memo
    if id(value) in memo:
        return memo[id(value)]
    if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
        copy = value.detach().clone().requires_grad_(value.requires_grad)
    elif np is not None and type(value) is np.ndarray:
        copy = value.copy(order="K")  # the same strides where NumPy can keep them
    elif type(value) in (tuple, list):
        copy = type(value)(clone_inputs(item, memo) for item in value)
    elif type(value) in (dict, collections.OrderedDict):
        copy = type(value)((key, clone_inputs(item, memo)) for key, item in value.items())
    elif type(value) is collections.defaultdict:
        copy = collections.defaultdict(value.default_factory,
                                       {key: clone_inputs(item, memo) for key, item in value.items()})
    elif type(value) in (set, collections.Counter):
        copy = type(value)(value)  # members and keys are hashable values: a shallow copy is a clone
    elif type(value) is collections.deque:
        copy = collections.deque((clone_inputs(item, memo) for item in value), value.maxlen)
    elif isinstance(value, Args):
        copy = Args(*clone_inputs(value.args, memo), **clone_inputs(value.kwargs, memo))
    else:
        copy = value
    memo[id(value)] = copy
    return copy


def assert_same(expected: Any, actual: Any, path: str = "result") -> None:
    """Assert that `actual` equals `expected` as eager PyTorch would have it.

    Tensors: same type, dtype, shape, device and requires_grad, values by `torch.testing.assert_close`.
    Tuples, lists, deques and dicts: the exact same container type, length, keys in the same order, items
    recursively.
    Anything else: the same type and `==`. `path` names the position in failure messages (`result[1]['a']`).
    """
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"{path}: expected a tensor, got {type(actual).__name__}"
        assert type(actual) is type(expected), f"{path}: tensor type {type(expected)} != {type(actual)}"
        assert actual.dtype == expected.dtype, f"{path}: dtype {expected.dtype} != {actual.dtype}"
        assert actual.shape == expected.shape, f"{path}: shape {tuple(expected.shape)} != {tuple(actual.shape)}"
        assert actual.device == expected.device, f"{path}: device {expected.device} != {actual.device}"
        assert actual.requires_grad == expected.requires_grad, (
            f"{path}: requires_grad {expected.requires_grad} != {actual.requires_grad}"
        )
        torch.testing.assert_close(actual.detach(), expected.detach(), msg=lambda m: f"{path}: {m}")
        return
    assert type(actual) is type(expected), (
        f"{path}: expected type {type(expected).__name__}, got {type(actual).__name__} ({actual!r})"
    )
    if np is not None and isinstance(expected, (np.ndarray, np.generic)):
        # NumPy arrays and scalars (np.float64 ...): the exact type, dtype, shape and values
        assert actual.dtype == expected.dtype, f"{path}: dtype {expected.dtype} != {actual.dtype}"
        assert np.shape(actual) == np.shape(expected), f"{path}: shape {np.shape(expected)} != {np.shape(actual)}"
        np.testing.assert_allclose(actual, expected, rtol=1.3e-6, atol=1e-5, err_msg=path)
        return
    if isinstance(expected, (tuple, list, collections.deque)):
        assert len(actual) == len(expected), f"{path}: length {len(expected)} != {len(actual)}"
        for index, (e, a) in enumerate(zip(expected, actual)):
            assert_same(e, a, f"{path}[{index}]")
    elif isinstance(expected, dict):
        assert len(actual) == len(expected), f"{path}: keys {list(expected)} != {list(actual)}"
        # keys compared as values, item by item (a key may be a tuple holding tensors, which `==` cannot decide)
        assert_same(list(expected), list(actual), f"{path}.keys()")
        for (key, e), a in zip(expected.items(), actual.values()):
            assert_same(e, a, f"{path}[{key!r}]")
    else:
        assert actual == expected, f"{path}: expected {expected!r}, got {actual!r}"


def _leaves(value: Any, path: str) -> list[tuple[str, Any]]:
    """(path, leaf) pairs of a nested tuple / list / dict / Args, in order."""
    if isinstance(value, Args):
        return _leaves(value.args, f"{path}.args") + _leaves(value.kwargs, f"{path}.kwargs")
    if isinstance(value, (tuple, list)) and not isinstance(value, torch.Size):
        return [pair for i, item in enumerate(value) for pair in _leaves(item, f"{path}[{i}]")]
    if isinstance(value, dict):
        return [pair for key, item in value.items() for pair in _leaves(item, f"{path}[{key!r}]")]
    return [(path, value)]


def _alias_pattern(inputs: Any, result: Any) -> list[tuple[str, str]]:
    """For each tensor in `result`: which input it is, or which earlier output it is, or that it is new.

    Eager code can return an input itself (`return x`, `x.to(x.dtype)`) or one tensor twice (`return y, y`);
    callers may rely on that identity (mutating the output mutates the input), so compiled code must keep it.
    """
    kinds = (torch.Tensor,) if np is None else (torch.Tensor, np.ndarray)
    input_paths = {id(leaf): p for p, leaf in _leaves(inputs, "input") if isinstance(leaf, kinds)}
    seen: dict[int, str] = {}
    pattern = []
    for p, leaf in _leaves(result, "result"):
        if not isinstance(leaf, kinds):
            continue
        if id(leaf) in input_paths:
            pattern.append((p, f"is {input_paths[id(leaf)]}"))
        elif id(leaf) in seen:
            pattern.append((p, f"is {seen[id(leaf)]}"))
        else:
            pattern.append((p, "new"))
            seen[id(leaf)] = p
    return pattern


def _as_args(arg_set: Any) -> Args:
    if isinstance(arg_set, Args):
        return arg_set
    assert isinstance(arg_set, tuple), f"an arg set is a tuple of arguments or an Args, got {type(arg_set).__name__}"
    return Args(*arg_set)


def compare_call(fn: Callable[..., Any], compiled: Callable[..., Any], arg_set: Any) -> Any:
    """Call eager `fn` and `compiled` on separate fresh clones of `arg_set` and assert they agree; return the result.

    Agreement means: equal results (`assert_same`), equal inputs afterwards (in-place mutations match), and the same
    identity pattern between outputs and inputs. An exception raised by eager must be raised by compiled as well,
    with the same type and message.
    """
    call = _as_args(arg_set)
    eager_call = clone_inputs(call)
    compiled_call = clone_inputs(call)
    try:
        expected = fn(*eager_call.args, **eager_call.kwargs)
    except Exception as eager_error:  # noqa: BLE001 - the compiled call must fail the same way
        try:
            compiled(*compiled_call.args, **compiled_call.kwargs)
        except Exception as compiled_error:  # noqa: BLE001
            assert type(compiled_error) is type(eager_error), f"{compiled_error!r} != {eager_error!r}"
            assert str(compiled_error) == str(eager_error)
            return eager_error
        raise AssertionError(f"eager raised {eager_error!r}, compiled returned normally") from eager_error
    actual = compiled(*compiled_call.args, **compiled_call.kwargs)
    assert_same(expected, actual)
    assert_same(eager_call.args, compiled_call.args, "args after the call")
    assert_same(eager_call.kwargs, compiled_call.kwargs, "kwargs after the call")
    assert _alias_pattern(compiled_call, actual) == _alias_pattern(eager_call, expected), "output identity differs"
    return actual


def check_against_eager(
    fn: Callable[..., Any],
    *arg_sets: Any,
    expected_graphs: int | None = 1,
    backend: Any = None,
) -> CountingBackend:
    """The standard test: compile `fn` once, call it twice per arg set, and compare every call with eager.

    Args:
        fn: a function or an nn.Module (then the compiled object is jitcore's wrapper module).
        arg_sets: each a tuple of positional arguments or an `Args`; tensors are cloned per call.
        expected_graphs: graphs the backend must have received after all calls (None: do not check).
        backend: a CountingBackend to record into; any other backend is wrapped in one. None: a fresh one.

    Returns the CountingBackend, for further assertions on graphs and ops. The second call of each arg set must
    reuse the entry the first call made: it may not add a graph.
    Example: `check_against_eager(lambda x: x + 1, (randn(4, 3, seed=1),), (randn(4, 3, seed=2),))`.
    """
    import jitcore as jit

    assert arg_sets, "check_against_eager needs at least one arg set"
    counting = backend if isinstance(backend, CountingBackend) else CountingBackend(backend)
    compiled = jit.compile(fn, backend=counting)
    for arg_set in arg_sets:
        compare_call(fn, compiled, arg_set)
        graphs_after_first_call = counting.graph_count
        compare_call(fn, compiled, arg_set)
        assert counting.graph_count == graphs_after_first_call, (
            f"the second call with the same arguments compiled again ({counting.graph_count} graphs, "
            f"{graphs_after_first_call} after the first call)"
        )
    if expected_graphs is not None:
        assert counting.graph_count == expected_graphs, (
            f"expected {expected_graphs} graph(s), the backend received {counting.graph_count}"
        )
    return counting


def check_registered_against_eager(fn: Callable[..., Any], *arg_sets: Any, backend: Any = None) -> CountingBackend:
    """`check_against_eager` through the other door: `jit.register(fn)`, then each call inside `jit.enabled(...)`.

    Each arg set is called twice, against eager (outside any block) on fresh clones; the second call may not
    compile again. Returns the CountingBackend.
    """
    counting = backend if isinstance(backend, CountingBackend) else CountingBackend(backend)
    with both_doors(fn, counting) as (_, registered):
        for arg_set in arg_sets:
            compare_call(fn, registered, arg_set)
            graphs_after_first_call = counting.graph_count
            compare_call(fn, registered, arg_set)
            assert counting.graph_count == graphs_after_first_call, "the second call compiled again"
    return counting


@contextlib.contextmanager
def both_doors(fn: Callable[..., Any], backend: Any = "eager") -> Iterator[tuple[Callable[..., Any], ...]]:
    """The two ways a user reaches jitcore, for tests that compare more than `check_against_eager` does (printed
    output, globals, objects, exceptions): yields `(jit.compile(fn, backend=backend), registered)`, where
    `registered(*args)` calls `fn` inside `jit.enabled(backend=backend)` while `fn` is registered for the block.
    Example: `with both_doors(f, counting) as doors: for door in doors: assert_same(f(x), door(x))`.
    """
    import jitcore as jit

    def registered(*args: Any, **kwargs: Any) -> Any:
        with jit.enabled(backend=backend):
            return fn(*args, **kwargs)

    compiled = jit.compile(fn, backend=backend)
    jit.register(fn)
    try:
        yield compiled, registered
    finally:
        jit.unregister(fn)


def outcome(fn: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    """("returned", result) or ("raised", (exception type, message)): what a call did, to compare with eager's."""
    try:
        return "returned", fn(*args)
    except Exception as exc:  # noqa: BLE001 - compared with the other side's
        return "raised", (type(exc), str(exc))


def recompile_messages(monkeypatch) -> tuple[list, Callable[..., None]]:
    """Turn the `recompiles` log topic on and collect its messages: returns (messages, listener); the caller
    unsubscribes the listener (`jitcore.events.unsubscribe`) when done."""
    from jitcore import config, events  # the support module stays importable without jitcore's state set up

    monkeypatch.setattr(config, "log", "recompiles")
    found: list = []

    def listen(topic, message, key, always, facts):
        if topic == "recompiles":
            found.append(message)

    events.subscribe(listen)
    return found, listen
