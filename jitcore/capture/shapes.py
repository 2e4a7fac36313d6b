"""Symbolic tensor sizes in a capture: which dims get a symbol, and the guards torch's ShapeEnv learnt about them.

The runtime's shape policy (runtime/policy.py) hands capture a `ShapeChoice`: the mode (`dynamic=None/True/False`)
and the (guard path, dim) pairs seen to vary. `dims_for` turns it, with the marks on the tensor (`jit.mark_dynamic`
and torch._dynamo's, stored under the same attribute names), into the DimDynamic list of one input tensor. The
capture's GraphBuilder makes fake tensors with SymInt sizes for those dims, in its one ShapeEnv (the automatic
dynamic ints of values/symint.py live there too).

At the end of a capture (after the backend compiled: backends add facts of their own), `finish_shapes` asks the
ShapeEnv for its guards (`produce_guards`) over the inputs it knows, named by tokens `T0, T1, ...`, and returns
 - a TensorMatch per dynamic tensor input, built from its *final* fake: a dim that tracing made a constant (a
   `range(x.shape[0])`, a size 0 or 1, `x.shape[0] == 5`) is checked as a constant again;
 - one ShapeRelationMatch over those inputs (`x.shape[0] >= 2`, `y.shape[0] == x.shape[0]`, `x.shape[0] > 4`),
   rendered in the entry's guard function after the leaf checks.
"""
from __future__ import annotations

import dataclasses

import torch
from torch._guards import GuardSource, Source as TorchSource
from torch.fx.experimental.symbolic_shapes import (DimDynamic, RelaxedUnspecConstraint, StatelessSymbolicContext,
                                                   StrictMinMaxConstraint, is_concrete_int)
from torch.utils._sympy.value_ranges import ValueRanges

from jitcore.guards import GlobalStateMatch, GuardTree, ShapeRelationMatch, TensorMatch
from jitcore.guards.relations import TOKEN

__all__ = ["DYNAMIC_DIMS", "ShapeChoice", "ShapeToken", "Relation", "dims_for", "is_dynamic_kind", "why_dynamic",
           "symbolic_context", "finish_shapes", "is_module_state"]

#: the GraphModule meta key of its dynamic dims in the user's names (`x.shape[0] = s50: jit.mark_dynamic`)
DYNAMIC_DIMS = "jitcore_dynamic_dims"

#: attribute names torch._dynamo uses for its marks (jit.mark_dynamic writes the same, so both work)
DYNAMIC_INDICES = "_dynamo_dynamic_indices"
DYNAMIC_RANGE = "_dynamo_dynamic_range"
WEAK_DYNAMIC_INDICES = "_dynamo_weak_dynamic_indices"
STATIC_INDICES = "_dynamo_static_indices"


@dataclasses.dataclass(frozen=True)
class ShapeChoice:
    """What the shape policy asks of one capture."""
    #: None: automatic (static until a size varied), True: every dim of every input dynamic, False: static but
    #: for the dims marked with jit.mark_dynamic / maybe_mark_dynamic
    mode: object = None
    #: (guard path, dim) of input dims that varied between calls (automatic dynamic)
    varied: frozenset = frozenset()
    #: ((guard path, dim), why) for varied dims, for reports: "changed 4 -> 7 at a recompile"
    reasons: tuple = ()


class _TokenName(str):
    """A source name torch can read both as `source.name` and `source.name()` (it changed between versions)."""

    def __call__(self):
        return str(self)


class _CallableGuardSource:
    """GuardSource.LOCAL whether torch reads `guard_source` or calls `guard_source()`."""

    def __call__(self):
        return GuardSource.LOCAL

    def __getattr__(self, name):
        return getattr(GuardSource.LOCAL, name)

    def __eq__(self, other):
        return GuardSource.LOCAL == (other() if isinstance(other, _CallableGuardSource) else other)

    def __hash__(self):
        return hash(GuardSource.LOCAL)


@dataclasses.dataclass(frozen=True)
class ShapeToken(TorchSource):
    """How torch's ShapeEnv names input `T<k>` of a capture: guards come out as `T0.size()[1] == T1.size()[0]`."""
    token: str

    @property
    def name(self):
        return _TokenName(self.token)

    @property
    def guard_source(self):
        return _CallableGuardSource()


@dataclasses.dataclass(frozen=True)
class Relation:
    """The sources a relation check reads (EntryAssembly adds it to the guard tree with add_relation)."""
    sources: tuple

    @property
    def user_name(self) -> str:
        return "shape relations"


def guard_tree_of(collected, tree=None):
    """The guard tree of (source, check) pairs as capture collects them: a None source marks a root check (named by
    its `root_name`), a `Relation` a check over several inputs; the global torch state is always the first root.
    The one reading of collected guards: entry assembly compiles it, the console draws it."""
    tree = GuardTree() if tree is None else tree
    tree.add_root(GlobalStateMatch())
    for source, check in collected:
        if source is None:
            tree.add_root(check, check.root_name)
        elif isinstance(source, Relation):
            tree.add_relation(check, [s.path for s in source.sources], source.user_name)
        else:
            tree.add(source.path, check, source.user_name)
    return tree


def is_module_state(source) -> bool:
    """A parameter or buffer read from a module: its sizes stay static (as torch.compile's)."""
    path = source.path
    return any(step in (("attr", "_parameters"), ("attr", "_buffers")) for step in path)


def dims_for(choice: ShapeChoice, source, real: torch.Tensor) -> list | None:
    """The DimDynamic of each dim of an input tensor, or None when every dim is static."""
    if choice is None or real.layout is not torch.strided:
        return None
    if isinstance(real, torch.nn.Parameter) or is_module_state(source):
        return None
    static = getattr(real, STATIC_INDICES, ())
    marked = set(getattr(real, DYNAMIC_INDICES, ())) | set(getattr(real, WEAK_DYNAMIC_INDICES, ()))
    if choice.mode is False and not marked:
        return None
    path = source.path
    dims = []
    for dim in range(real.dim()):
        if dim in static:
            dims.append(DimDynamic.STATIC)
        elif dim in marked or (choice.mode is not False and (path, dim) in choice.varied):
            dims.append(DimDynamic.DYNAMIC)
        else:
            # Note [Duck shapes under dynamic=True]
            dims.append(DimDynamic.DUCK if choice.mode is True else DimDynamic.STATIC)
    if all(d is DimDynamic.STATIC for d in dims):
        return None
    return dims


# Note [Duck shapes under dynamic=True]
# As torch.compile's: under `dynamic=True` a dim nobody marked is DUCK, so dims of equal size on the first call
# (a square image's height and width, q and k of one length) share one symbol, and the entry is guarded by their
# equality (`x.shape[3] == x.shape[2]`, the ShapeEnv's own guard). A later call where they differ fails only that
# relation and recompiles with a symbol each; the entry never runs on sizes it was not traced for. A dim that varied
# between calls (automatic dynamic) or was marked (jit.mark_dynamic, maybe_mark_dynamic) gets a symbol of its own
# (DYNAMIC), as under torch.compile: equal sizes there are a coincidence of the call the user already told apart.
# Under `dynamic=False` only the marked dims are dynamic (torch.compile honours a mark there too): the mark is the
# user's word about that tensor, the flag the default for the rest.


def is_dynamic_kind(kind) -> bool:
    """A DimDynamic that gives the dim a symbol (DYNAMIC, or DUCK: maybe one another dim shares)."""
    return kind in (DimDynamic.DYNAMIC, DimDynamic.DUCK)


def why_dynamic(choice: ShapeChoice, source, real: torch.Tensor, dim: int) -> str:
    """Why `dims_for` made `dim` of this input dynamic, in the user's terms (explain() shows it)."""
    if dim in set(getattr(real, DYNAMIC_INDICES, ())):
        ranges = {r.dim: r for r in getattr(real, DYNAMIC_RANGE, ())}
        bounds = ranges.get(dim)
        limits = [f"{name}={value}" for name, value in (("min", getattr(bounds, "min", None)),
                                                          ("max", getattr(bounds, "max", None))) if value is not None]
        return f"jit.mark_dynamic({', '.join(limits)})" if limits else "jit.mark_dynamic"
    if dim in set(getattr(real, WEAK_DYNAMIC_INDICES, ())):
        return "jit.maybe_mark_dynamic"
    if choice.mode is True:
        return "dynamic=True"
    why = dict(choice.reasons).get((source.path, dim))
    return f"automatic dynamic: {why}" if why else "automatic dynamic: its size varied between calls"


def symbolic_context(real: torch.Tensor, dims: list) -> StatelessSymbolicContext:
    """The context that gives `real`'s fake SymInt sizes at `dims`. A dim marked with jit.mark_dynamic carries a
    constraint: produce_guards reports it when tracing made it a constant (or out of its min/max)."""
    strict = set(getattr(real, DYNAMIC_INDICES, ()))
    ranges = {r.dim: r for r in getattr(real, DYNAMIC_RANGE, ())}
    constraints = []
    for dim, kind in enumerate(dims):
        if kind is not DimDynamic.DYNAMIC or dim not in strict:
            constraints.append(None)
        elif dim in ranges and (ranges[dim].min is not None or ranges[dim].max is not None):
            lo = ranges[dim].min if ranges[dim].min is not None else 0
            hi = ranges[dim].max if ranges[dim].max is not None else int(1e18)
            if lo <= real.size(dim) <= hi:
                constraints.append(StrictMinMaxConstraint(vr=ValueRanges(lo, hi), warn_only=False))
            else:
                constraints.append(None)  # this tensor is outside the marked range: dynamic, without the bounds
        else:
            constraints.append(RelaxedUnspecConstraint(warn_only=False))
    n = real.dim()
    return StatelessSymbolicContext(dynamic_sizes=dims, dynamic_strides=[DimDynamic.INFER_STRIDE] * n,
                                    constraint_sizes=constraints, constraint_strides=[None] * n)


@dataclasses.dataclass
class ShapeInput:
    """An input the ShapeEnv knows: a tensor with symbolic dims, or a dynamic Python number."""
    source: object
    token: ShapeToken
    #: the fake tensor or the SymInt/SymFloat
    example: object
    context: object = None
    #: the real tensor, for its TensorMatch (dropped once the guards are made)
    real: object = None


@dataclasses.dataclass
class ShapeGuards:
    """What finish_shapes found: checks to put in place of the provisional TensorMatches, the relation check,
    and a mark that tracing could not honour (in the user's names), if any."""
    tensor_matches: dict
    relation: object
    relation_sources: tuple
    violation: str | None = None
    #: each dynamic tensor input's sizes on the call captured, by source (RecompilePolicy.note_shapes)
    sizes: dict = dataclasses.field(default_factory=dict)


def _token_name(source) -> str:
    name = source.name
    return name() if callable(name) else name


def finish_shapes(shape_env, inputs: list) -> ShapeGuards | None:
    """The guards of a capture's symbolic sizes (see the module docstring); None when it had none."""
    if not inputs:
        return None
    examples = [i.example for i in inputs]
    tokens = [i.token for i in inputs]
    contexts = [i.context for i in inputs]
    names = [i.source.user_name for i in inputs]
    violation = None
    try:
        exprs = shape_env.produce_guards(examples, tokens, source_ref=_token_name, ignore_static=True,
                                         input_contexts=contexts)
    except Exception as error:  # ConstraintViolationError: a mark_dynamic'ed dim was specialised
        if type(error).__name__ != "ConstraintViolationError":
            raise
        first_line = str(error).split("\n")[0].split(" For more information")[0]
        violation = ShapeRelationMatch([], names).user_text(first_line)
        exprs = shape_env.produce_guards(examples, tokens, source_ref=_token_name, ignore_static=True)
    matches, seen = {}, {}
    for item in inputs:
        if item.real is None:
            continue
        seen[item.source] = tuple(item.real.size())
        fake = item.example
        sizes = frozenset(d for d, s in enumerate(fake.size()) if not is_concrete_int(s))
        strides = frozenset(d for d, s in enumerate(fake.stride()) if not is_concrete_int(s))
        matches[item.source] = TensorMatch(item.real, dynamic_dims=sizes, dynamic_strides=strides)
        item.real = None
    relation = ShapeRelationMatch(list(exprs), names) if exprs else None
    return ShapeGuards(matches, relation, tuple(i.source for i in inputs), violation, seen)


def token(index: int) -> ShapeToken:
    return ShapeToken(TOKEN.format(index))
