"""Random PyTorch programs for differential tests of jitcore against eager Python: `generate_program(seed)`.

Each program is a module's source (helpers plus one entry function `f`) mixing tensor ops with Python control
flow, containers and calls, all decided by Python values, so that a correct capture turns `f` into ONE graph.
The generator knows the type, shape and a bound on the magnitude of every variable, so programs are valid by
construction. Imports torch (for inputs) and never jitcore: the programs stay an independent oracle.
Entry points: `generate_program`, `Program`, `DEFAULT_FEATURES`; `statement(feature)` adds a feature's maker.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
import random
from collections.abc import Callable

import torch

__all__ = ["DEFAULT_FEATURES", "EXPRESSION_MAKERS", "GenState", "Param", "Program", "STATEMENT_MAKERS",
           "generate_program", "statement"]

#: above this bound on |values| an expression is wrapped in tanh, so no program can overflow float32.
MAG_LIMIT = 1e3
#: bound assumed for torch.randn inputs (exceeding it is harmless: the bound only keeps growth in check).
INPUT_MAG = 5.0
#: largest tensor a program makes (elements) and its largest rank.
MAX_NUMEL = 240
MAX_NDIM = 3
#: lines of `f`'s body, and of a helper's body, that makers may fill; blocks nest at most this deep.
MAX_BODY_LINES = 34
MAX_HELPER_LINES = 5
MAX_DEPTH = 2
_DICT_KEYS = ("a", "b", "c", "out", "h", "z")


# Note [What the generator knows]: every variable has a type below. TensorType keeps the exact shape, so any
# expression built from it has a known shape; `mag` bounds |values| so growth is cut off by tanh (`_bounded`).
# SeqType and IntType keep ranges, because a loop with break/continue runs an unknown number of times.


@dataclasses.dataclass(frozen=True)
class TensorType:
    """A float32 tensor of exactly `shape` whose values lie in [-mag, mag]."""
    shape: tuple
    mag: float


@dataclasses.dataclass(frozen=True)
class IntType:
    """A Python int in [lo, hi]."""
    lo: int
    hi: int


@dataclasses.dataclass(frozen=True)
class FloatType:
    """A Python float with |value| <= bound."""
    bound: float


@dataclasses.dataclass(frozen=True)
class BoolType:
    """A Python bool (only ever used as a condition)."""


@dataclasses.dataclass(frozen=True)
class SeqType:
    """A list or tuple (`kind`) of tensors of type `item`, of length in [min_len, max_len]."""
    item: TensorType
    min_len: int
    max_len: int
    kind: str = "list"


@dataclasses.dataclass(frozen=True)
class DictType:
    """A dict of tensors with exactly these (key, type) items, in insertion order."""
    items: tuple


@dataclasses.dataclass(frozen=True)
class OptionalType:
    """None or a tensor of type `item`: usable as a tensor only where a test narrowed it."""
    item: TensorType


@dataclasses.dataclass(frozen=True)
class Expr:
    """Source text and its type; `atomic` is False where an operator needs parentheses around it."""
    code: str
    type: object
    atomic: bool = True

    def wrapped(self) -> str:
        return self.code if self.atomic else f"({self.code})"


@dataclasses.dataclass(frozen=True)
class Param:
    """One parameter of `f`: `value` for Python values (None for tensors), `default` source or None, `passed`."""
    name: str
    type: object
    value: object = None
    default: str | None = None
    passed: bool = True


@dataclasses.dataclass(frozen=True)
class Program:
    """A generated module: `source` defines `f`; `make_inputs(seed)` gives fresh arguments of fixed shapes."""
    name: str
    seed: int
    source: str
    params: tuple
    features: frozenset

    def make_inputs(self, seed: int) -> tuple:
        """Arguments for `f`: new tensor values per seed; shapes and Python values never change."""
        generator = torch.Generator().manual_seed(seed)
        return tuple(_make_value(p.type, p.value, generator) for p in self.params if p.passed)


def _make_value(kind, value, generator):
    if isinstance(kind, TensorType):
        return torch.randn(kind.shape, generator=generator)
    if isinstance(kind, SeqType):
        items = [torch.randn(kind.item.shape, generator=generator) for _ in range(kind.max_len)]
        return tuple(items) if kind.kind == "tuple" else items
    if isinstance(kind, OptionalType):
        return None if value is None else torch.randn(kind.item.shape, generator=generator)
    return value


# Shapes


def _numel(shape) -> int:
    return math.prod(shape)


def _broadcast(a: tuple, b: tuple) -> tuple | None:
    """torch's broadcast of two shapes, or None where they do not broadcast."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(reversed(out))


def _fits(kind) -> bool:
    return isinstance(kind, TensorType) and len(kind.shape) <= MAX_NDIM and 1 <= _numel(kind.shape) <= MAX_NUMEL


def _dims(shape) -> str:
    """Arguments for torch.ones/zeros: `3, 4`, or `()` for a 0-dim tensor."""
    return ", ".join(map(str, shape)) if shape else "()"


def _bounded(e: Expr) -> Expr:
    """e, or tanh(e) where e's values could grow past MAG_LIMIT (Note [What the generator knows])."""
    if isinstance(e.type, TensorType) and e.type.mag > MAG_LIMIT:
        return Expr(f"torch.tanh({e.code})", TensorType(e.type.shape, 1.0))
    return e


# Generator state


@dataclasses.dataclass
class _Shared:
    """What `f` and its helpers share: name counters and the helpers' sources and signatures."""
    counters: dict = dataclasses.field(default_factory=dict)
    helper_sources: list = dataclasses.field(default_factory=list)
    helpers: list = dataclasses.field(default_factory=list)


class GenState:
    """The function being written: its lines, scopes of typed variables, and the random stream.

    Invariants: makers only define fresh names, so a name never changes type except through `update` (loop
    accumulators, lists mutated in their own scope); names in `hidden` are not offered to expressions.
    """

    def __init__(self, rng: random.Random, features: frozenset, shared: _Shared | None = None,
                 max_lines: int = MAX_BODY_LINES, helper_depth: int = 0) -> None:
        self.rng = rng
        self.features = features
        self.shared = shared if shared is not None else _Shared()
        self.max_lines = max_lines
        self.helper_depth = helper_depth
        self.lines: list[str] = []
        self.indent = 1
        self.depth = 0
        self.scopes: list[dict] = [{}]
        self.hidden: set[str] = set()
        self.params: set[str] = set()
        #: names that closures and lambdas read: never rebound (a later call would see the new value).
        self.captured: set[str] = set()

    # variables

    def fresh(self, prefix: str) -> str:
        count = self.shared.counters.get(prefix, 0)
        self.shared.counters[prefix] = count + 1
        return f"{prefix}{count}"

    def define(self, name: str, kind) -> None:
        self.scopes[-1][name] = kind

    def update(self, name: str, kind) -> None:
        """Give an existing variable a new type in the scope that defines it."""
        for scope in reversed(self.scopes):
            if name in scope:
                scope[name] = kind
                return
        raise KeyError(name)

    def visible(self, cls) -> list[tuple[str, object]]:
        """(name, type) of every visible variable of kind `cls`, innermost and latest definitions first."""
        seen, out = set(), []
        for scope in reversed(self.scopes):
            for name, kind in reversed(scope.items()):
                if name not in seen and name not in self.hidden and isinstance(kind, cls):
                    out.append((name, kind))
                seen.add(name)
        return out

    def own(self, cls) -> list[tuple[str, object]]:
        """Variables of kind `cls` defined in the innermost scope and not parameters: safe to mutate."""
        return [(n, k) for n, k in self.scopes[-1].items()
                if isinstance(k, cls) and n not in self.params and n not in self.hidden]

    def has(self, feature: str) -> bool:
        return feature in self.features

    # emission

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def room(self) -> int:
        return self.max_lines - len(self.lines)

    def can_nest(self, lines: int = 6) -> bool:
        return self.depth < MAX_DEPTH and self.room() >= lines

    @contextlib.contextmanager
    def block(self, header: str, bindings: dict | None = None):
        """Emit `header` and an indented body with a new scope holding `bindings`."""
        self.emit(header)
        self.indent += 1
        self.depth += 1
        self.scopes.append(dict(bindings or {}))
        start = len(self.lines)
        try:
            yield
        finally:
            if len(self.lines) == start:
                self.emit("pass")
            self.scopes.pop()
            self.indent -= 1
            self.depth -= 1

    @contextlib.contextmanager
    def scope(self, bindings: dict):
        """A scope for an expression's own names (a comprehension, a lambda): nothing is emitted."""
        self.scopes.append(dict(bindings))
        try:
            yield
        finally:
            self.scopes.pop()

    def snapshot(self):
        return (len(self.lines), [dict(s) for s in self.scopes], set(self.hidden),
                len(self.shared.helper_sources), len(self.shared.helpers), self.indent, self.depth)

    def restore(self, snap) -> None:
        lines, scopes, hidden, sources, helpers, indent, depth = snap
        del self.lines[lines:]
        self.scopes, self.hidden, self.indent, self.depth = scopes, hidden, indent, depth
        del self.shared.helper_sources[sources:]
        del self.shared.helpers[helpers:]


# Tables: features -> makers


@dataclasses.dataclass(frozen=True)
class _Maker:
    fn: Callable[[GenState], bool]
    weight: float


#: feature name -> statement maker: a function of the state that emits one statement (or returns False, emitting
#: nothing it needs to keep: `one_statement` rolls back). New features (breaks, side effects, ...) add rows here.
STATEMENT_MAKERS: dict[str, _Maker] = {}
#: feature name -> maker of a tensor expression of that family: `fn(state, depth) -> Expr | None`.
EXPRESSION_MAKERS: dict[str, _Maker] = {}


def statement(feature: str, weight: float = 1.0):
    """Register the decorated function as the statement maker of `feature`."""
    def register(fn):
        if feature in STATEMENT_MAKERS:
            raise ValueError(f"statement maker for feature {feature!r} registered twice")
        STATEMENT_MAKERS[feature] = _Maker(fn, weight)
        return fn
    return register


def _expression(feature: str, weight: float):
    def register(fn):
        EXPRESSION_MAKERS[feature] = _Maker(fn, weight)
        return fn
    return register


def one_statement(g: GenState) -> bool:
    """Emit one statement from a maker of an enabled feature, within the line budget; False if none applied."""
    names = [name for name in sorted(STATEMENT_MAKERS) if name in g.features]
    if not names:
        return False
    weights = [STATEMENT_MAKERS[name].weight for name in names]
    for _ in range(8):
        name = g.rng.choices(names, weights)[0]
        snap = g.snapshot()
        if STATEMENT_MAKERS[name].fn(g) and g.room() >= 0:
            return True
        g.restore(snap)
    return False


def statements(g: GenState, count: int) -> None:
    for _ in range(count):
        if g.room() < 2:
            return
        one_statement(g)


# Python values


def _int_atoms(g: GenState) -> list[Expr]:
    """Python ints the program can read: int variables, lengths of sequences, shapes (with python_arith)."""
    atoms = [Expr(n, k) for n, k in g.visible(IntType)]
    atoms += [Expr(f"len({n})", IntType(k.min_len, k.max_len)) for n, k in g.visible(SeqType)]
    if g.has("python_arith"):
        for n, k in g.visible(TensorType):
            for i, d in enumerate(k.shape):
                atoms.append(Expr(g.rng.choice([f"{n}.shape[{i}]", f"{n}.size({i})"]), IntType(d, d)))
    return atoms


def int_expr(g: GenState, plain: bool = False) -> Expr | None:
    """A Python int expression over the program's ints (`plain`: a bare atom, no arithmetic); None if none."""
    atoms = _int_atoms(g)
    if not atoms:
        return None
    a = g.rng.choice(atoms)
    lo, hi = a.type.lo, a.type.hi
    if plain or not g.has("python_arith") or g.rng.random() < 0.5:
        return a
    c = g.rng.randint(1, 3)
    forms = [(f"{a.code} + {c}", lo + c, hi + c, False), (f"{a.code} * {c}", lo * c, hi * c, False),
             (f"{a.code} - {c}", lo - c, hi - c, False), (f"{a.code} // 2", lo // 2, hi // 2, False),
             (f"{a.code} % 3", 0, 2, False), (f"max({a.code}, {c})", max(lo, c), max(hi, c), True),
             (f"min({a.code}, {c})", min(lo, c), min(hi, c), True),
             (f"abs({a.code} - {c})", 0, max(abs(lo - c), abs(hi - c)), True),
             (f"-{a.wrapped()}", -hi, -lo, False)]
    if lo >= 0:
        forms += [(f"{a.wrapped()} ** 2", lo * lo, hi * hi, False), (f"{a.wrapped()} & 3", 0, min(hi, 3), False),
                  (f"{a.wrapped()} | 1", lo, hi + 1, False), (f"{a.wrapped()} << 1", 2 * lo, 2 * hi, False)]
    code, lo, hi, atomic = g.rng.choice(forms)
    return Expr(code, IntType(min(lo, hi), max(lo, hi)), atomic)


def scalar_expr(g: GenState) -> Expr:
    """A Python number to mix into a tensor expression: a constant, or (python_arith) an int or float variable."""
    options = [Expr(repr(c), FloatType(abs(c))) for c in (0.5, 1.5, -0.25, 2.0, 0.1)]
    options += [Expr(repr(c), IntType(c, c)) for c in (1, 2, 3, -1)]
    if g.has("python_arith"):
        options += [Expr(n, k) for n, k in g.visible((IntType, FloatType))] * 2
        e = int_expr(g)
        if e is not None:
            options.append(e)
    return g.rng.choice(options)


def _scalar_bound(e: Expr) -> float:
    kind = e.type
    return kind.bound if isinstance(kind, FloatType) else float(max(abs(kind.lo), abs(kind.hi)))


def _int_cond(g: GenState) -> str | None:
    """A condition on Python ints, bools or dict keys that are not constants."""
    bools = [n for n, _ in g.visible(BoolType)]
    for n, k in g.visible(DictType):
        key = g.rng.choice([k.items[0][0], "missing"])
        bools.append(g.rng.choice([f"{key!r} in {n}", f"{key!r} not in {n}"]))
    e = int_expr(g)
    if e is None or (bools and g.rng.random() < 0.25):
        return g.rng.choice(["{}", "not {}"]).format(g.rng.choice(bools)) if bools else None
    c = g.rng.randint(e.type.lo - 1, e.type.hi + 1)
    a = e.wrapped()
    forms = [f"{e.code} > {c}", f"{a} % 2 == 0", f"{e.code} == {c}", f"{e.code} != {c}", f"{c - 1} < {e.code} <= {c + 1}",
             f"not {e.code} < {c}", f"{e.code} >= {c} and {e.code} < {c + 2}", f"{e.code} < {c} or {e.code} > {c + 1}"]
    return g.rng.choice(forms)


# Tensor expressions


def leaf(g: GenState, shape: tuple | None = None) -> Expr | None:
    """A tensor the program holds: a variable, or an item of a sequence or dict; of `shape` if given."""
    options = [Expr(n, k) for n, k in g.visible(TensorType) if shape is None or k.shape == shape]
    ints = g.visible(IntType)
    for n, k in g.visible(SeqType):
        if k.min_len >= 1 and (shape is None or k.item.shape == shape):
            options.append(Expr(f"{n}[{g.rng.choice([0, -1])}]", k.item))
            options += [Expr(f"{n}[{i}]", k.item) for i, ik in ints if -k.min_len <= ik.lo <= ik.hi < k.min_len]
    for n, k in g.visible(DictType):
        for key, item in k.items:
            if shape is None or item.shape == shape:
                options.append(Expr(f"{n}[{key!r}]", item))
    return g.rng.choice(options) if options else None


_UNARY = [("torch.tanh({})", 1.0, False), ("torch.sigmoid({})", 1.0, False), ("torch.sin({})", 1.0, False),
          ("torch.cos({})", 1.0, False), ("{}.tanh()", 1.0, True), ("{}.sigmoid()", 1.0, True),
          ("torch.relu({})", None, False), ("{}.relu()", None, True), ("torch.abs({})", None, False),
          ("{}.abs()", None, True), ("-{}", None, True), ("torch.clamp({}, -2.0, 2.0)", 2.0, False),
          ("{}.clamp(min=-1.0)", None, True), ("torch.nn.functional.silu({})", None, False)]
#: (form, how the bound combines, operator form: operands need parentheses)
_BINARY = [("{} + {}", "add", True), ("{} - {}", "add", True), ("{} * {}", "mul", True),
           ("{} / ({}.abs() + 1.0)", "first", True), ("torch.maximum({}, {})", "max", False),
           ("torch.minimum({}, {})", "max", False), ("torch.where({0} > {1}, {0}, {1})", "max", False),
           ("torch.add({}, {}, alpha=0.5)", "add", False), ("{}.mul({})", "mul", True)]


def _unary(g: GenState, a: Expr) -> Expr:
    form, mag, method = g.rng.choice(_UNARY)
    code = form.format(a.wrapped() if method else a.code)
    return Expr(code, TensorType(a.type.shape, a.type.mag if mag is None else mag), not code.startswith("-"))


def _binary(g: GenState, a: Expr, b: Expr) -> Expr | None:
    shape = _broadcast(a.type.shape, b.type.shape)
    if shape is None:
        return None
    form, rule, operator = g.rng.choice(_BINARY)
    ma, mb = a.type.mag, b.type.mag
    mag = {"add": ma + mb, "mul": ma * mb, "max": max(ma, mb), "first": ma}[rule]
    args = (a.wrapped(), b.wrapped()) if operator else (a.code, b.code)
    return Expr(form.format(*args), TensorType(shape, mag), not operator or form.startswith("{}.mul"))


def _with_scalar(g: GenState, a: Expr) -> Expr:
    s = scalar_expr(g)
    m, bound = a.type.mag, _scalar_bound(s)
    t, v = a.wrapped(), s.wrapped()
    forms = [(f"{t} * {v}", m * bound), (f"{v} * {t}", m * bound), (f"{t} + {v}", m + bound),
             (f"{t} - {v}", m + bound), (f"{v} - {t}", m + bound), (f"{t} / 2.0", m), (f"{t} ** 2", m * m)]
    ints = _int_atoms(g) if g.has("python_arith") else []
    if ints:
        forms.append((f"{t} / (abs({g.rng.choice(ints).code}) + 1)", m))
    if g.rng.random() < 0.15:
        return Expr(f"torch.mul({a.code}, {s.code})", TensorType(a.type.shape, m * bound))
    code, mag = g.rng.choice(forms)
    return Expr(code, TensorType(a.type.shape, mag), False)


def _operand(g: GenState, shape: tuple, depth: int) -> Expr:
    """A tensor that broadcasts into `shape` without changing it."""
    options = [e for e in (leaf(g) for _ in range(4)) if e is not None and _broadcast(shape, e.type.shape) == shape]
    if options and g.rng.random() < 0.7:
        return g.rng.choice(options)
    return shaped_expr(g, shape, depth)


def elementwise(g: GenState, a: Expr, depth: int) -> Expr:
    """`a` under 0..depth shape-preserving ops (unary, with a scalar, with a broadcastable tensor)."""
    for _ in range(g.rng.randint(0, depth)):
        choice = g.rng.random()
        if choice < 0.4:
            a = _unary(g, a)
        elif choice < 0.7:
            a = _with_scalar(g, a)
        else:
            a = _binary(g, a, _operand(g, a.type.shape, 0)) or a
        a = _bounded(a)
    return a


def shaped_expr(g: GenState, shape: tuple, depth: int) -> Expr:
    """An expression of exactly `shape`, built from the program's tensors where one fits."""
    base = leaf(g, shape)
    if base is None:
        fitting = [e for e in (leaf(g) for _ in range(4)) if _broadcast(shape, e.type.shape) == shape]
        if fitting and shape:
            e = fitting[0]
            base = Expr(f"{e.wrapped()}.expand({_dims(shape)})", TensorType(shape, e.type.mag))
        else:
            e = leaf(g)
            base = Expr(f"{e.wrapped()}.mean() * torch.ones({_dims(shape)})", TensorType(shape, e.type.mag), False)
    return elementwise(g, base, depth)


def tensor_expr(g: GenState, depth: int) -> Expr:
    """A random tensor expression of an enabled family; a variable at depth 0."""
    names = [n for n in sorted(EXPRESSION_MAKERS) if n in g.features]
    if depth <= 0 or not names or g.rng.random() < 0.2:
        return leaf(g)
    weights = [EXPRESSION_MAKERS[n].weight for n in names]
    for _ in range(4):
        e = EXPRESSION_MAKERS[g.rng.choices(names, weights)[0]].fn(g, depth)
        if e is not None and _fits(e.type):
            return _bounded(e)
    return leaf(g)


@_expression("tensor_ops", 4)
def _tensor_ops_expr(g: GenState, depth: int) -> Expr | None:
    if g.rng.random() < 0.08:
        return _factory(g)
    a = tensor_expr(g, depth - 1)
    choice = g.rng.random()
    if choice < 0.35:
        return _unary(g, a)
    if choice < 0.6:
        return _with_scalar(g, a)
    b = leaf(g) if g.rng.random() < 0.5 else tensor_expr(g, depth - 1)
    return _binary(g, a, b)


def _factory(g: GenState) -> Expr:
    """A new tensor whose shape comes from the program's tensors or ints: zeros_like, full, arange, eye, ..."""
    v = leaf(g)
    shape, w, s = v.type.shape, v.wrapped(), scalar_expr(g)
    forms = [(f"torch.zeros_like({v.code})", shape, 0.0), (f"torch.full_like({v.code}, {s.code})", shape,
                                                            _scalar_bound(s)),
             (f"{w}.new_ones({w}.shape)", shape, 1.0), (f"torch.ones({w}.shape)", shape, 1.0)]
    if shape:
        dims = ", ".join(f"{w}.shape[{i}]" for i in range(len(shape)))
        forms += [(f"torch.zeros({dims})", shape, 0.0), (f"torch.arange({w}.shape[-1], dtype=torch.float32)",
                                                         shape[-1:], float(shape[-1])),
                  (f"torch.linspace(-1.0, 1.0, {w}.size(0))", shape[:1], 1.0)]
    if len(shape) == 2 and shape[0] == shape[1]:
        forms.append((f"torch.eye({w}.shape[0])", shape, 1.0))
    code, out, mag = g.rng.choice(forms)
    return Expr(code, TensorType(out, mag))


@_expression("reduce", 1)
def _reduce_expr(g: GenState, depth: int) -> Expr | None:
    a = tensor_expr(g, depth - 1)
    shape, m = a.type.shape, a.type.mag
    if not shape:
        return None
    op = g.rng.choice(["sum", "mean", "amax", "amin"])
    if g.rng.random() < 0.15 and op in ("sum", "mean"):
        return Expr(f"{a.wrapped()}.{op}()", TensorType((), m * _numel(shape) if op == "sum" else m))
    d = g.rng.randrange(-len(shape), len(shape))
    keep = g.rng.random() < 0.5
    out = list(shape)
    out[d] = 1
    out = tuple(out) if keep else tuple(s for i, s in enumerate(shape) if i != d % len(shape))
    forms = [f"{a.wrapped()}.{op}(dim={d}, keepdim={keep})", f"torch.{op}({a.code}, dim={d}, keepdim={keep})"]
    if not keep:
        forms.append(f"{a.wrapped()}.{op}({d})")
    return Expr(g.rng.choice(forms), TensorType(out, m * shape[d] if op == "sum" else m))


@_expression("reshape", 1)
def _reshape_expr(g: GenState, depth: int) -> Expr | None:
    a = tensor_expr(g, depth - 1)
    shape, w, n = a.type.shape, a.wrapped(), _numel(a.type.shape)
    forms = [(f"{w}.reshape(-1)", (n,))]
    divisors = [p for p in range(2, n) if n % p == 0]
    if divisors:
        p = g.rng.choice(divisors)
        forms += [(f"{w}.reshape({p}, -1)", (p, n // p)), (f"torch.reshape({a.code}, ({n // p}, {p}))", (n // p, p))]
    if len(shape) >= 2:
        i, j = sorted(g.rng.sample(range(len(shape)), 2))
        swapped = list(shape)
        swapped[i], swapped[j] = shape[j], shape[i]
        forms += [(f"{w}.transpose({i}, {j})", tuple(swapped)), (f"{w}.flatten()", (n,))]
    if len(shape) == 2:
        forms += [(f"{w}.t()", shape[::-1]), (f"{w}.T", shape[::-1])]
    if len(shape) == 3:
        perm = g.rng.sample(range(3), 3)
        forms.append((f"{w}.permute({', '.join(map(str, perm))})", tuple(shape[p] for p in perm)))
    if len(shape) < MAX_NDIM:
        d = g.rng.randint(0, len(shape))
        forms += [(f"{w}.unsqueeze({d})", shape[:d] + (1,) + shape[d:]),
                  (f"torch.unsqueeze({a.code}, {d})", shape[:d] + (1,) + shape[d:])]
    ones = [i for i, s in enumerate(shape) if s == 1]
    if ones:
        d = g.rng.choice(ones)
        forms.append((f"{w}.squeeze({d})", shape[:d] + shape[d + 1:]))
    code, out = g.rng.choice(forms)
    return Expr(code, TensorType(tuple(out), a.type.mag))


def _slice_len(size: int, start, stop, step=None) -> int:
    return len(range(size)[slice(start, stop, step)])


@_expression("indexing", 1)
def _indexing_expr(g: GenState, depth: int) -> Expr | None:
    a = tensor_expr(g, depth - 1)
    shape, w = a.type.shape, a.wrapped()
    if not shape:
        return None
    rng, d0 = g.rng, shape[0]
    start = rng.randint(-d0, d0 - 1)
    stop = rng.randint(start + 1, d0) if start >= 0 else rng.choice([None, d0])
    forms = [(f"{w}[{rng.randint(-d0, d0 - 1)}]", shape[1:]),
             (f"{w}[{start}:{'' if stop is None else stop}]", (_slice_len(d0, start, stop),) + shape[1:]),
             (f"{w}[::2]", (_slice_len(d0, None, None, 2),) + shape[1:])]
    if len(shape) >= 2:
        d1 = shape[1]
        j = rng.randint(-d1, d1 - 1)
        forms += [(f"{w}[:, {j}]", shape[:1] + shape[2:]), (f"{w}[..., {rng.randint(-shape[-1], shape[-1] - 1)}]",
                                                              shape[:-1]),
                  (f"{w}[:, 1:]", (d0, d1 - 1) + shape[2:]) if d1 > 1 else (f"{w}[:, :1]", (d0, 1) + shape[2:])]
    if len(shape) < MAX_NDIM:
        forms.append((f"{w}[:, None]", shape[:1] + (1,) + shape[1:]))
    ints = _int_atoms(g) if g.has("python_arith") else []
    if ints:
        forms.append((f"{w}[{rng.choice(ints).wrapped()} % {d0}]", shape[1:]))
    for i, k in g.visible(IntType):
        if -d0 <= k.lo <= k.hi < d0:
            forms.append((f"{w}[{i}]", shape[1:]))
        if k.lo == k.hi and 0 <= k.lo < d0:
            forms.append((f"{w}[{i}:]", (d0 - k.lo,) + shape[1:]))
    code, out = rng.choice(forms)
    return Expr(code, TensorType(tuple(out), a.type.mag))


@_expression("matmul", 1)
def _matmul_expr(g: GenState, depth: int) -> Expr | None:
    a = tensor_expr(g, depth - 1)
    shape = a.type.shape
    if len(shape) not in (2, 3):
        return None
    k = shape[-1]
    rights = [e for e in (leaf(g) for _ in range(6))
              if len(e.type.shape) in (1, 2) and e.type.shape[0] == k]
    if rights:
        b = g.rng.choice(rights)
    elif len(shape) == 2:
        b = Expr(f"{a.wrapped()}.t()", TensorType(shape[::-1], a.type.mag))
    else:
        b = Expr(f"torch.ones({k}, 2)", TensorType((k, 2), 1.0))
    out = shape[:-1] + b.type.shape[1:]
    forms = [f"{a.wrapped()} @ {b.wrapped()}", f"torch.matmul({a.code}, {b.code})", f"{a.wrapped()}.matmul({b.code})"]
    if len(shape) == 2 and len(b.type.shape) == 2:
        forms.append(f"torch.mm({a.code}, {b.code})")
    code = g.rng.choice(forms)
    return Expr(code, TensorType(out, k * a.type.mag * b.type.mag), not code.startswith(a.wrapped() + " @"))


@_expression("cat_stack", 0.6)
def _cat_stack_expr(g: GenState, depth: int) -> Expr | None:
    rng = g.rng
    exact = [(n, k) for n, k in g.visible(SeqType) if k.min_len == k.max_len >= 1]
    if exact and rng.random() < 0.3:
        n, k = rng.choice(exact)
        shape, count = k.item.shape, k.min_len
        if shape and rng.random() < 0.5:
            d = rng.randrange(len(shape))
            return Expr(f"torch.cat({n}, dim={d})", TensorType(shape[:d] + (shape[d] * count,) + shape[d + 1:],
                                                              k.item.mag))
        d = rng.randint(0, len(shape))
        return Expr(f"torch.stack({n}, {d})", TensorType(shape[:d] + (count,) + shape[d:], k.item.mag))
    a = tensor_expr(g, depth - 1)
    parts = [a] + [shaped_expr(g, a.type.shape, depth - 1) for _ in range(rng.choice([1, 1, 2]))]
    shape, mag = a.type.shape, max(p.type.mag for p in parts)
    items = ", ".join(p.code for p in parts)
    items = f"[{items}]" if rng.random() < 0.5 else f"({items})"
    if shape and rng.random() < 0.6:
        d = rng.randrange(-len(shape), len(shape))
        out = list(shape)
        out[d] *= len(parts)
        return Expr(f"torch.cat({items}, dim={d})", TensorType(tuple(out), mag))
    d = rng.randint(0, len(shape))
    return Expr(f"torch.stack({items}, dim={d})", TensorType(shape[:d] + (len(parts),) + shape[d:], mag))


def assign(g: GenState, prefix: str, e: Expr) -> str:
    name = g.fresh(prefix)
    g.emit(f"{name} = {e.code}")
    g.define(name, e.type)
    return name


def _assign_expression(g: GenState, feature: str) -> bool:
    e = EXPRESSION_MAKERS[feature].fn(g, g.rng.randint(1, 2))
    if e is None or not _fits(e.type):
        return False
    assign(g, "t", _bounded(e))
    return True


for _feature in sorted(EXPRESSION_MAKERS):
    statement(_feature, EXPRESSION_MAKERS[_feature].weight)(
        lambda g, _feature=_feature: _assign_expression(g, _feature))


@statement("python_arith", 1)
def _python_arith(g: GenState) -> bool:
    rng = g.rng
    choice = rng.random()
    shaped = [(n, k) for n, k in g.visible(TensorType) if 1 <= len(k.shape)]
    if choice < 0.15 and shaped:
        n, k = rng.choice(shaped)
        names = [g.fresh("k") for _ in k.shape]
        g.emit(f"{', '.join(names)}{',' if len(names) == 1 else ''} = {n}.shape")
        for name, size in zip(names, k.shape):
            g.define(name, IntType(size, size))
        return True
    if choice < 0.25 and shaped:
        n, k = rng.choice(shaped)
        code, value = rng.choice([(f"{n}.numel()", _numel(k.shape)), (f"{n}.dim()", len(k.shape)),
                                  (f"len({n}.shape)", len(k.shape))])
        assign(g, "k", Expr(code, IntType(value, value)))
        return True
    if choice < 0.35:
        cond = _int_cond(g)
        if cond is None:
            return False
        assign(g, "ok", Expr(cond, BoolType(), False))
        return True
    e = int_expr(g)
    if e is None:
        return False
    if rng.random() < 0.5:
        assign(g, "k", e)
        return True
    b = _scalar_bound(e)
    forms = [(f"{e.wrapped()} * 0.5 + 0.25", b * 0.5 + 0.25), (f"float({e.code}) / 4", b / 4),
             (f"{e.wrapped()} / (abs({e.code}) + 1)", 1.0), (f"1.5 - {e.wrapped()} * 0.25", 1.5 + b / 4)]
    code, bound = g.rng.choice(forms)
    assign(g, "alpha", Expr(code, FloatType(bound), False))
    return True


# Conditionals


def _branch(g: GenState, header: str, target: str, shape: tuple, bindings: dict | None = None) -> float:
    """One branch: a few statements, then `target = <expr of shape>`; returns the bound of that expression."""
    with g.block(header, bindings):
        statements(g, g.rng.randint(0, 2))
        e = _bounded(shaped_expr(g, shape, 1))
        g.emit(f"{target} = {e.code}")
    return e.type.mag


def _conditional(g: GenState, cond: str, narrow_true: dict | None = None, narrow_false: dict | None = None) -> bool:
    """`if cond:` in one of three forms, defining one fresh tensor in every branch; narrowing per branch."""
    if not g.can_nest():
        return False
    rng = g.rng
    shape = leaf(g).type.shape
    target = g.fresh("t")
    form = rng.choice(["if_else", "if_else", "if_only", "ternary"])
    if form == "ternary":
        with g.scope(narrow_true or {}):
            a = _bounded(shaped_expr(g, shape, 1))
        with g.scope(narrow_false or {}):
            b = _bounded(shaped_expr(g, shape, 1))
        g.emit(f"{target} = {a.code} if {cond} else {b.code}")
        g.define(target, TensorType(shape, max(a.type.mag, b.type.mag)))
        return True
    if form == "if_only":
        before = _bounded(shaped_expr(g, shape, 1))  # runs whatever the condition: no narrowing
        g.emit(f"{target} = {before.code}")
        mags = [before.type.mag, _branch(g, f"if {cond}:", target, shape, narrow_true)]
    else:
        mags = [_branch(g, f"if {cond}:", target, shape, narrow_true)]
        if not narrow_true and not narrow_false and rng.random() < 0.3:
            other = _int_cond(g) if g.has("if_int") else None
            if other:
                mags.append(_branch(g, f"elif {other}:", target, shape))
        mags.append(_branch(g, "else:", target, shape, narrow_false))
    g.define(target, TensorType(shape, max(mags)))
    return True


@statement("if_int", 1.2)
def _if_int(g: GenState) -> bool:
    cond = _int_cond(g)
    return cond is not None and _conditional(g, cond)


@statement("if_shape", 1)
def _if_shape(g: GenState) -> bool:
    rng = g.rng
    tensors = g.visible(TensorType)
    n, k = rng.choice(tensors)
    m, other = rng.choice(tensors)
    forms = [f"{n}.dim() == {len(k.shape)}", f"{n}.ndim > 1", f"{n}.numel() > {rng.randint(1, 30)}",
             f"{n}.shape == {m}.shape"]
    if k.shape:
        i = rng.randrange(len(k.shape))
        forms += [f"{n}.shape[{i}] > {rng.randint(1, 5)}", f"{n}.shape[-1] == {rng.randint(2, 5)}",
                  f"len({n}) >= {rng.randint(1, 5)}", f"{n}.size({i}) == {m}.size(0)" if other.shape else
                  f"{n}.size({i}) != 3"]
    return _conditional(g, rng.choice(forms))


@statement("if_none", 1)
def _if_none(g: GenState) -> bool:
    optionals = g.visible(OptionalType)
    if not optionals:
        return False
    name, kind = g.rng.choice(optionals)
    narrowed = {name: kind.item}
    if name in g.scopes[-1] and g.rng.random() < 0.3:
        # `if opt is None: opt = ...` rebinds the parameter: a tensor from here on.
        with g.block(f"if {name} is None:"):
            e = _bounded(shaped_expr(g, kind.item.shape, 1))
            g.emit(f"{name} = {e.code}")
        g.update(name, TensorType(kind.item.shape, max(kind.item.mag, e.type.mag)))
        return True
    if g.rng.random() < 0.5:
        return _conditional(g, f"{name} is None", narrow_false=narrowed)
    return _conditional(g, f"{name} is not None", narrow_true=narrowed)


@statement("if_isinstance", 0.8)
def _if_isinstance(g: GenState) -> bool:
    rng = g.rng
    options = [(f"isinstance({n}, torch.Tensor)", None) for n, _ in g.visible(TensorType)]
    options += [(f"isinstance({n}, {rng.choice(['int', 'float', '(int, float)', 'bool'])})", None)
                for n, _ in g.visible((IntType, FloatType))]
    options += [(f"isinstance({n}, {rng.choice(['list', 'tuple', '(list, tuple)'])})", None)
                for n, _ in g.visible(SeqType)]
    options += [(f"isinstance({n}, torch.Tensor)", {n: k.item}) for n, k in g.visible(OptionalType)] * 2
    options += [(f"isinstance({n}, dict)", None) for n, _ in g.visible(DictType)]
    cond, narrowed = rng.choice(options)
    if rng.random() < 0.2 and narrowed is None:
        cond = f"not {cond}"
    return _conditional(g, cond, narrow_true=narrowed)


# Loops


def _loop_cond(g: GenState, var: str, kind: IntType) -> str:
    c = g.rng.randint(kind.lo, kind.hi + 1)
    return g.rng.choice([f"{var} % 2 == 1", f"{var} == {c}", f"{var} > {c}", f"{var} >= {c}"])


def _loop(g: GenState, header: str, bindings: dict, count: tuple, index: str | None = None,
          first_lines: tuple = (), force_jump: bool = False, final_break: str | None = None) -> None:
    """A loop whose body updates accumulators made just before it; `count` bounds its iterations.

    The accumulators are hidden from the body's own statements, and every update adds a bounded term, so after
    the loop an accumulator's bound is its start plus `count[1]` terms (Note [What the generator knows]).
    `final_break` ends the body with `if final_break: break` (a `while True:` loop); it rules out `continue`.
    Sometimes the loop gets an `else:` clause, which adds one more term.
    """
    rng = g.rng
    shape = leaf(g).type.shape
    start = _bounded(shaped_expr(g, shape, 0))
    acc = assign(g, "acc", start) if rng.random() < 0.6 else assign(g, "acc", Expr(
        f"torch.zeros({_dims(shape)})", TensorType(shape, 0.0)))
    outs = g.fresh("outs") if g.has("list_build") and rng.random() < 0.5 else None
    counter = g.fresh("cnt") if rng.random() < 0.4 or (index is None and force_jump) else None
    for name, value in ((outs, "[]"), (counter, "0")):
        if name:
            g.emit(f"{name} = {value}")
    jumps = g.has("break_continue") and (index or counter) and (force_jump or rng.random() < 0.4)
    skip = stop = None
    if jumps:
        probe_var, probe_kind = (index, bindings[index]) if index else (counter, IntType(0, count[1]))
        jump_cond = _loop_cond(g, probe_var, probe_kind)
        skip, stop = (jump_cond, None) if rng.random() < 0.5 else (None, jump_cond)
        if rng.random() < 0.3:
            skip, stop = _loop_cond(g, probe_var, probe_kind), _loop_cond(g, probe_var, probe_kind)
        if final_break:
            skip = None
    g.hidden |= {acc} | ({outs} if outs else set()) | ({counter} if counter else set())
    term = out_item = None
    with g.block(header, bindings):
        for line in first_lines:
            g.emit(line)
        if counter and (skip or rng.random() < 0.5):
            g.emit(f"{counter} += 1")
            counter_done = True
        else:
            counter_done = False
        if skip:
            with g.block(f"if {skip}:"):
                g.emit("continue")
        statements(g, rng.randint(0, 2) if g.room() > 6 else 0)
        term = _loop_term(g, shape, bindings)
        g.emit(rng.choice([f"{acc} = {acc} + {term.code}", f"{acc} = {acc} * 0.5 + {term.wrapped()}"]))
        if outs:
            out_item = _loop_term(g, None, bindings)
            g.emit(f"{outs}.append({out_item.code})")
        if counter and not counter_done:
            g.emit(f"{counter} += 1")
        if stop:
            with g.block(f"if {stop}:"):
                g.emit("break")
        if final_break:
            with g.block(f"if {final_break}:"):
                g.emit("break")
    g.hidden -= {acc, outs, counter}
    lo = 0 if skip else (min(count[0], 1) if stop else count[0])
    lo, hi = max(lo, 0), max(count[1], 0)
    g.update(acc, TensorType(shape, start.type.mag + hi * term.type.mag))
    if rng.random() < 0.2:
        hidden = g.hidden
        g.hidden = hidden | set(bindings)  # a while counter's type outside the loop is only known further on
        with g.block("else:"):
            extra = _bounded(shaped_expr(g, shape, 1))
            g.emit(f"{acc} = {acc} + {extra.code}")
        g.hidden = hidden
        g.update(acc, TensorType(shape, start.type.mag + hi * term.type.mag + extra.type.mag))
    if outs:
        g.define(outs, SeqType(out_item.type, lo, hi))
    if counter:
        g.define(counter, IntType(0, hi))


def _loop_term(g: GenState, shape: tuple | None, bindings: dict) -> Expr:
    """A bounded expression (of `shape` if given) that mostly reads the loop's own names."""
    bindings = {name: g.scopes[-1].get(name, kind) for name, kind in bindings.items()}  # a swap may retype them
    items = [Expr(n, k) for n, k in bindings.items()
             if isinstance(k, TensorType) and (shape is None or _broadcast(shape, k.shape) == shape)]
    ints = [Expr(n, k) for n, k in bindings.items() if isinstance(k, IntType)]
    if items and g.rng.random() < 0.7:
        base = g.rng.choice(items)
        term = elementwise(g, base, 2)
        if shape is not None and term.type.shape != shape:
            term = _binary(g, shaped_expr(g, shape, 0), term)
    else:
        term = shaped_expr(g, shape, 1) if shape is not None else tensor_expr(g, 1)
    if ints and g.rng.random() < 0.6:
        index = g.rng.choice(ints)
        term = Expr(f"{term.wrapped()} * {index.code}", TensorType(term.type.shape, term.type.mag * _scalar_bound(index)),
                    False)
    return _bounded(term)


def _range_header(g: GenState) -> tuple[str, IntType, tuple]:
    """`range(...)` source, the range of its values and the range of its length; at most 5 iterations."""
    options = [(f"range({c})", IntType(0, c - 1), (c, c)) for c in (1, 2, 3, 4)]
    options += [("range(1, 4)", IntType(1, 3), (3, 3)), ("range(0, 6, 2)", IntType(0, 4), (3, 3))]
    for e in [int_expr(g) for _ in range(3)]:
        if e is not None and 1 <= e.type.hi <= 5:
            length = (max(e.type.lo, 0), e.type.hi)
            options.append((f"range({e.code})", IntType(0, e.type.hi - 1), length))
            if e.type.lo >= 0 and e.type.hi <= 4:
                options.append((f"range({e.wrapped()}, 5)", IntType(e.type.lo, 4), (5 - e.type.hi, 5 - e.type.lo)))
    return g.rng.choice(options)


def _sequences(g: GenState) -> list[tuple[str, SeqType]]:
    """What a loop may iterate: sequence variables, a tensor's rows, a dict's values, or a new tuple display.

    Kind "iter" marks an iterable that is not a sequence (dict values): it cannot be sliced.
    """
    rng = g.rng
    seqs = list(g.visible(SeqType))
    rows = [(n, k) for n, k in g.visible(TensorType) if k.shape and k.shape[0] <= 5]
    if rows and rng.random() < 0.3:
        n, k = rng.choice(rows)
        code = rng.choice([n, n, f"{n}.unbind(0)"])
        seqs.append((code, SeqType(TensorType(k.shape[1:], k.mag), k.shape[0], k.shape[0], "tuple")))
    for n, k in g.visible(DictType):
        if len({item.shape for _, item in k.items}) == 1 and rng.random() < 0.5:
            top = TensorType(k.items[0][1].shape, max(item.mag for _, item in k.items))
            seqs.append((f"{n}.values()", SeqType(top, len(k.items), len(k.items), "iter")))
    if not seqs or g.rng.random() < 0.25:
        first = leaf(g)
        items = [first] + [shaped_expr(g, first.type.shape, 0) for _ in range(g.rng.randint(1, 2))]
        mag = max(e.type.mag for e in items)
        seqs.append((f"({', '.join(e.code for e in items)})", SeqType(TensorType(first.type.shape, mag),
                                                                    len(items), len(items), "tuple")))
    return seqs


@statement("for_range", 1.2)
def _for_range(g: GenState, force_jump: bool = False) -> bool:
    if not g.can_nest(8):
        return False
    code, kind, count = _range_header(g)
    index = g.fresh("i")
    _loop(g, f"for {index} in {code}:", {index: kind}, count, index, force_jump=force_jump)
    return True


@statement("for_list", 1.2)
def _for_list(g: GenState, force_jump: bool = False) -> bool:
    if not g.can_nest(8):
        return False
    rng = g.rng
    dicts = [(n, k) for n, k in g.visible(DictType) if len({item.shape for _, item in k.items}) == 1]
    if dicts and rng.random() < 0.25:
        name, kind = rng.choice(dicts)
        key, value = g.fresh("key"), g.fresh("item")
        top = TensorType(kind.items[0][1].shape, max(item.mag for _, item in kind.items))
        count = (len(kind.items), len(kind.items))
        if rng.random() < 0.5:
            _loop(g, f"for {key}, {value} in {name}.items():", {value: top}, count, force_jump=force_jump)
        else:
            _loop(g, f"for {key} in {name}:", {value: top}, count, first_lines=(f"{value} = {name}[{key}]",),
                  force_jump=force_jump)
        return True
    name, kind = rng.choice(_sequences(g))
    item = g.fresh("item")
    if kind.max_len >= 2 and kind.kind != "iter" and rng.random() < 0.3:
        name = f"{name}[1:]"
        kind = SeqType(kind.item, max(kind.min_len - 1, 0), kind.max_len - 1)
    _loop(g, f"for {item} in {name}:", {item: kind.item}, (kind.min_len, kind.max_len), force_jump=force_jump)
    return True


@statement("for_zip", 1)
def _for_zip(g: GenState, force_jump: bool = False) -> bool:
    if not g.can_nest(8):
        return False
    seqs = _sequences(g)
    (n1, k1), (n2, k2) = g.rng.choice(seqs), g.rng.choice(seqs)
    a, b = g.fresh("item"), g.fresh("item")
    if g.rng.random() < 0.3:
        code, kind, count = _range_header(g)
        _loop(g, f"for {a}, {b} in zip({n1}, {code}):", {a: k1.item, b: kind},
              (min(k1.min_len, count[0]), min(k1.max_len, count[1])), b, force_jump=force_jump)
        return True
    _loop(g, f"for {a}, {b} in zip({n1}, {n2}):", {a: k1.item, b: k2.item},
          (min(k1.min_len, k2.min_len), min(k1.max_len, k2.max_len)), force_jump=force_jump)
    return True


@statement("for_enumerate", 1)
def _for_enumerate(g: GenState, force_jump: bool = False) -> bool:
    if not g.can_nest(8):
        return False
    seqs = _sequences(g)
    (name, kind), (other, okind) = g.rng.choice(seqs), g.rng.choice(seqs)
    index, item, second = g.fresh("i"), g.fresh("item"), g.fresh("item")
    start = g.rng.choice([0, 0, 1])
    bindings = {item: kind.item}
    if g.rng.random() < 0.3:
        # enumerate(zip(...)) with a nested unpacking target
        kind = SeqType(kind.item, min(kind.min_len, okind.min_len), min(kind.max_len, okind.max_len))
        target, iterable = f"{index}, ({item}, {second})", f"zip({name}, {other})"
        bindings[second] = okind.item
    else:
        target, iterable = f"{index}, {item}", name
    header = f"for {target} in enumerate({iterable}{', 1' if start else ''}):"
    bindings[index] = IntType(start, start + max(kind.max_len - 1, 0))
    _loop(g, header, bindings, (kind.min_len, kind.max_len), index, force_jump=force_jump)
    return True


@statement("for_reversed", 0.8)
def _for_reversed(g: GenState, force_jump: bool = False) -> bool:
    if not g.can_nest(8):
        return False
    if g.rng.random() < 0.4:
        code, kind, count = _range_header(g)
        index = g.fresh("i")
        _loop(g, f"for {index} in reversed({code}):", {index: kind}, count, index,
              force_jump=force_jump)
        return True
    seqs = [(n, k) for n, k in _sequences(g)]
    name, kind = g.rng.choice(seqs)
    item = g.fresh("item")
    _loop(g, f"for {item} in reversed({name}):", {item: kind.item}, (kind.min_len, kind.max_len),
          force_jump=force_jump)
    return True


@statement("while", 1)
def _while(g: GenState, force_jump: bool = False) -> bool:
    if not g.can_nest(9):
        return False
    counter = g.fresh("j")
    limit = int_expr(g)
    if limit is None or limit.type.hi > 5 or g.rng.random() < 0.3:
        value = g.rng.randint(1, 4)
        limit = Expr(str(value), IntType(value, value))
    hi = max(limit.type.hi, 0)
    g.emit(f"{counter} = 0")
    g.define(counter, IntType(0, 0))
    count = (max(limit.type.lo, 0), hi)
    if limit.type.lo >= 1 and g.rng.random() < 0.25:
        header, final_break = "while True:", f"{counter} >= {limit.code}"
    else:
        header, final_break = f"while {counter} < {limit.code}:", None
    _loop(g, header, {counter: IntType(1, max(hi, 1))}, count, counter, first_lines=(f"{counter} += 1",),
          force_jump=force_jump, final_break=final_break)
    g.update(counter, IntType(0, hi))
    return True


@statement("break_continue", 0.8)
def _break_continue(g: GenState) -> bool:
    """A loop of any enabled kind that certainly has a `break` or a `continue`."""
    kinds = [_for_range, _for_list, _for_zip, _for_enumerate, _for_reversed, _while]
    return g.rng.choice(kinds)(g, force_jump=True)


# Containers


@statement("list_build", 1.2)
def _list_build(g: GenState) -> bool:
    rng = g.rng
    own = g.own(SeqType)
    mine = [(n, k) for n, k in own if k.kind == "list"]
    choice = rng.random()
    if mine and choice < 0.45:
        name, kind = rng.choice(mine)
        op = rng.choice(["append", "extend", "insert", "setitem", "pop", "index", "del"])
        if op in ("setitem", "pop", "index", "del") and kind.min_len < 1:
            op = "append"
        e = _bounded(shaped_expr(g, kind.item.shape, 1))
        item = TensorType(kind.item.shape, max(kind.item.mag, e.type.mag))
        grow = {"append": 1, "extend": 2, "insert": 1, "setitem": 0, "pop": -1, "index": 0, "del": -1}[op]
        if op == "append":
            g.emit(f"{name}.append({e.code})")
        elif op == "extend":
            g.emit(rng.choice([f"{name}.extend([{e.code}, {name}[0]])", f"{name} += [{e.code}, {e.code}]"])
                   if kind.min_len else f"{name}.extend([{e.code}, {e.code}])")
        elif op == "insert":
            g.emit(f"{name}.insert(0, {e.code})")
        elif op == "setitem":
            g.emit(f"{name}[{rng.choice([0, -1])}] = {e.code}")
        elif op == "pop":
            assign(g, "t", Expr(f"{name}.pop()", kind.item))
        elif op == "del":
            g.emit(f"del {name}[{rng.choice([0, -1])}]")
        else:
            assign(g, "t", Expr(f"{name}[{rng.randint(-kind.min_len, kind.min_len - 1)}]", kind.item))
        g.update(name, SeqType(item, kind.min_len + grow, kind.max_len + grow))
        return True
    seqs = g.visible(SeqType)
    if seqs and choice < 0.7:
        name, kind = rng.choice(seqs)
        e = _bounded(shaped_expr(g, kind.item.shape, 0))
        item = TensorType(kind.item.shape, max(kind.item.mag, e.type.mag))
        forms = [(f"list({name})", kind), (f"[*{name}, {e.code}]", SeqType(item, kind.min_len + 1, kind.max_len + 1)),
                 (f"tuple({name})", SeqType(kind.item, kind.min_len, kind.max_len, "tuple")),
                 (f"{name}[:2]", SeqType(kind.item, min(kind.min_len, 2), min(kind.max_len, 2), kind.kind)),
                 (f"{name}[::-1]", kind)]
        if kind.kind == "list":
            forms.append((f"{name} + [{e.code}]", SeqType(item, kind.min_len + 1, kind.max_len + 1)))
        code, out = rng.choice(forms)
        assign(g, "ls" if out.kind == "list" else "tp", Expr(code, out))
        return True
    first = _bounded(tensor_expr(g, 1))
    shape = first.type.shape
    if shape and rng.random() < 0.25:
        # a tuple of tensors made by an op: unbind, chunk, split
        d = rng.randrange(len(shape))
        size, rest = shape[d], shape[:d] + shape[d + 1:]
        forms = [(f"{first.wrapped()}.unbind({d})", size, rest)]
        for parts in (2, 3):
            if size % parts == 0 and size > parts:
                piece = shape[:d] + (size // parts,) + shape[d + 1:]
                forms += [(f"{first.wrapped()}.chunk({parts}, {d})", parts, piece),
                          (f"torch.split({first.code}, {size // parts}, dim={d})", parts, piece)]
        code, count, item = rng.choice(forms)
        if count > 5 or not _fits(TensorType(item, 1.0)):
            return False
        assign(g, "tp", Expr(code, SeqType(TensorType(item, first.type.mag), count, count, "tuple")))
        return True
    items = [first] + [_bounded(shaped_expr(g, first.type.shape, 1)) for _ in range(rng.randint(1, 2))]
    kind = SeqType(TensorType(first.type.shape, max(e.type.mag for e in items)), len(items), len(items),
                   rng.choice(["list", "list", "tuple"]))
    body = ", ".join(e.code for e in items)
    assign(g, "ls" if kind.kind == "list" else "tp", Expr(f"[{body}]" if kind.kind == "list" else f"({body})", kind))
    return True


@statement("tuple_unpack", 0.8)
def _tuple_unpack(g: GenState) -> bool:
    rng = g.rng
    exact = [(n, k) for n, k in g.visible(SeqType) if k.min_len == k.max_len and 2 <= k.min_len <= 4]
    if exact and rng.random() < 0.4:
        name, kind = rng.choice(exact)
        targets = [g.fresh("t") for _ in range(kind.min_len)]
        g.emit(f"{', '.join(targets)} = {name}")
        for target in targets:
            g.define(target, kind.item)
        return True
    rows = [e for e in (leaf(g) for _ in range(3)) if e.type.shape and 2 <= e.type.shape[0] <= 3]
    if rows and rng.random() < 0.2:
        # unpacking a tensor: its rows
        e = rows[0]
        targets = [g.fresh("t") for _ in range(e.type.shape[0])]
        g.emit(f"{', '.join(targets)} = {e.code}")
        for target in targets:
            g.define(target, TensorType(e.type.shape[1:], e.type.mag))
        return True
    own = [(n, k) for n, k in g.own(TensorType) if n not in g.captured]
    if len(own) >= 2 and rng.random() < 0.3:
        (a, ka), (b, kb) = rng.sample(own, 2)
        g.emit(f"{a}, {b} = {b}, {a}")
        g.update(a, kb)
        g.update(b, ka)
        return True
    if g.has("python_arith") and rng.random() < 0.2:
        e = int_expr(g)
        if e is not None:
            q, r = g.fresh("k"), g.fresh("k")
            g.emit(f"{q}, {r} = divmod({e.code}, 3)")
            g.define(q, IntType(e.type.lo // 3, e.type.hi // 3))
            g.define(r, IntType(0, 2))
            return True
    exprs = [_bounded(tensor_expr(g, 1)) for _ in range(rng.randint(2, 3))]
    targets = [g.fresh("t") for _ in exprs]
    if len(exprs) == 3 and rng.random() < 0.5:
        g.emit(f"({targets[0]}, {targets[1]}), {targets[2]} = ({exprs[0].code}, {exprs[1].code}), {exprs[2].code}")
    else:
        g.emit(f"{', '.join(targets)} = {', '.join(e.code for e in exprs)}")
    for target, e in zip(targets, exprs):
        g.define(target, e.type)
    return True


@statement("starred_unpack", 0.7)
def _starred_unpack(g: GenState) -> bool:
    rng = g.rng
    seqs = [(n, k) for n, k in g.visible(SeqType) if k.min_len >= 1]
    if not seqs:
        return False
    name, kind = rng.choice(seqs)
    a, rest = g.fresh("t"), g.fresh("ls")
    rest_kind = SeqType(kind.item, kind.min_len - 1, kind.max_len - 1)
    forms = [f"{a}, *{rest} = {name}", f"*{rest}, {a} = {name}"]
    if kind.min_len >= 2:
        b = g.fresh("t")
        if rng.random() < 0.4:
            g.emit(f"{a}, *{rest}, {b} = {name}")
            g.define(b, kind.item)
            g.define(a, kind.item)
            g.define(rest, SeqType(kind.item, kind.min_len - 2, kind.max_len - 2))
            return True
    if kind.min_len == kind.max_len and rng.random() < 0.3:
        e = _bounded(shaped_expr(g, kind.item.shape, 1))
        d = rng.randint(0, len(kind.item.shape))
        g.emit(f"{a} = torch.stack([*{name}, {e.code}], dim={d})")
        shape = kind.item.shape
        g.define(a, TensorType(shape[:d] + (kind.min_len + 1,) + shape[d:], max(kind.item.mag, e.type.mag)))
        return _fits(g.scopes[-1][a])
    g.emit(rng.choice(forms))
    g.define(a, kind.item)
    g.define(rest, rest_kind)
    return True


@statement("dict_build", 1)
def _dict_build(g: GenState) -> bool:
    rng = g.rng
    own = g.own(DictType)
    dicts = g.visible(DictType)
    choice = rng.random()
    if own and choice < 0.35:
        name, kind = rng.choice(own)
        e = _bounded(tensor_expr(g, 1))
        key = rng.choice(_DICT_KEYS)
        items = dict(kind.items)
        items[key] = e.type
        if len(kind.items) >= 2 and rng.random() < 0.25:
            gone = rng.choice(kind.items)[0]
            g.emit(rng.choice([f"del {name}[{gone!r}]", f"{name}.pop({gone!r})"]))
            g.update(name, DictType(tuple(item for item in kind.items if item[0] != gone)))
            return True
        g.emit(rng.choice([f"{name}[{key!r}] = {e.code}", f"{name}.update({key}={e.code})"]))
        g.update(name, DictType(tuple(items.items())))
        return True
    if dicts and choice < 0.7:
        name, kind = rng.choice(dicts)
        key, item = rng.choice(kind.items)
        e = _bounded(tensor_expr(g, 1))
        same = len({k.shape for _, k in kind.items}) == 1
        forms = [("t", Expr(f"{name}[{key!r}]", item)), ("t", Expr(f"{name}.get({key!r})", item)),
                 ("t", Expr(f"{name}.get('missing', {e.code})", e.type)),
                 ("d", Expr(f"{{**{name}, 'extra': {e.code}}}", DictType(kind.items + (("extra", e.type),)))),
                 ("k", Expr(f"len({name})", IntType(len(kind.items), len(kind.items))))]
        if same:
            top = TensorType(kind.items[0][1].shape, max(k.mag for _, k in kind.items))
            forms.append(("ls", Expr(f"list({name}.values())", SeqType(top, len(kind.items), len(kind.items)))))
        prefix, chosen = rng.choice(forms)
        if isinstance(chosen.type, DictType) and any(k == "extra" for k, _ in kind.items):
            return False
        assign(g, prefix, chosen)
        return True
    exprs = [_bounded(tensor_expr(g, 1)) for _ in range(rng.randint(1, 3))]
    keys = rng.sample(_DICT_KEYS, len(exprs))
    if rng.random() < 0.3:
        code = f"dict({', '.join(f'{k}={e.code}' for k, e in zip(keys, exprs))})"
    else:
        code = "{" + ", ".join(f"{k!r}: {e.code}" for k, e in zip(keys, exprs)) + "}"
    assign(g, "d", Expr(code, DictType(tuple((k, e.type) for k, e in zip(keys, exprs)))))
    return True


def _comprehension_source(g: GenState) -> tuple[str, dict, tuple, str | None] | None:
    """`for ... in ...` of a comprehension, the bindings of its names, its length range and its index name."""
    rng = g.rng
    name, kind = rng.choice(_sequences(g))
    item = g.fresh("c")
    choice = rng.random()
    if choice < 0.35:
        return f"for {item} in {name}", {item: kind.item}, (kind.min_len, kind.max_len), None
    if choice < 0.65:
        index = g.fresh("i")
        return (f"for {index}, {item} in enumerate({name})", {index: IntType(0, max(kind.max_len - 1, 0)),
                                                              item: kind.item},
                (kind.min_len, kind.max_len), index)
    if choice < 0.85:
        other, okind = rng.choice(_sequences(g))
        second = g.fresh("c")
        return (f"for {item}, {second} in zip({name}, {other})", {item: kind.item, second: okind.item},
                (min(kind.min_len, okind.min_len), min(kind.max_len, okind.max_len)), None)
    code, ikind, count = _range_header(g)
    index = g.fresh("i")
    return f"for {index} in {code}", {index: ikind}, count, index


def _comprehension_item(g: GenState, bindings: dict) -> Expr:
    """The item expression of a comprehension, built from its own names (and whatever else is visible)."""
    with g.scope(bindings):
        tensors = [n for n, k in bindings.items() if isinstance(k, TensorType)]
        name = g.rng.choice(tensors) if tensors else None
        base = Expr(name, bindings[name]) if name else leaf(g)
        return _bounded(elementwise(g, base, 2) if g.rng.random() < 0.7 else tensor_expr(g, 1))


@statement("list_comp", 1)
def _list_comp(g: GenState) -> bool:
    if g.rng.random() < 0.2:
        # two `for` clauses: every pair
        (n1, k1), (n2, k2) = g.rng.choice(_sequences(g)), g.rng.choice(_sequences(g))
        a, b = g.fresh("c"), g.fresh("c")
        with g.scope({a: k1.item, b: k2.item}):
            e = _binary(g, Expr(a, k1.item), Expr(b, k2.item)) or elementwise(g, Expr(b, k2.item), 1)
        if not _fits(e.type):
            return False
        count = (k1.min_len * k2.min_len, k1.max_len * k2.max_len)
        assign(g, "ls", Expr(f"[{e.code} for {a} in {n1} for {b} in {n2}]", SeqType(_bounded(e).type, *count)))
        return True
    header, bindings, count, index = _comprehension_source(g)
    e = _comprehension_item(g, bindings)
    if index and g.rng.random() < 0.4:
        cond = _loop_cond(g, index, bindings[index])
        assign(g, "ls", Expr(f"[{e.code} {header} if {cond}]", SeqType(e.type, 0, count[1])))
    else:
        assign(g, "ls", Expr(f"[{e.code} {header}]", SeqType(e.type, *count)))
    return True


@statement("dict_comp", 0.6)
def _dict_comp(g: GenState) -> bool:
    rng = g.rng
    dicts = g.visible(DictType)
    if dicts and rng.random() < 0.4:
        name, kind = rng.choice(dicts)
        key, value = g.fresh("c"), g.fresh("c")
        items = []
        with g.scope({}):
            form, mag = rng.choice(_UNARY)[:2]
            for k, item in kind.items:
                items.append((k, TensorType(item.shape, item.mag if mag is None else mag)))
        code = f"{{{key}: {form.format(value)} for {key}, {value} in {name}.items()}}"
        assign(g, "d", Expr(code, DictType(tuple(items))))
        return True
    exact = [(n, k) for n, k in _sequences(g) if k.min_len == k.max_len >= 1]
    if not exact:
        return False
    name, kind = rng.choice(exact)
    item = g.fresh("c")
    e = _comprehension_item(g, {item: kind.item})
    if rng.random() < 0.5:
        index = g.fresh("i")
        code = f"{{{index}: {e.code} for {index}, {item} in enumerate({name})}}"
        keys = list(range(kind.min_len))
    else:
        key = g.fresh("c")
        names = _DICT_KEYS[:3]
        code = f"{{{key}: {e.code} for {key}, {item} in zip({names!r}, {name})}}"
        keys = list(names[:kind.min_len])
    assign(g, "d", Expr(code, DictType(tuple((k, e.type) for k in keys))))
    return True


@statement("genexpr_sum", 0.7)
def _genexpr_sum(g: GenState) -> bool:
    rng = g.rng
    choice = rng.random()
    if choice < 0.25:
        code, kind, (lo, hi) = _range_header(g)
        index = g.fresh("i")
        top = max(abs(kind.lo), abs(kind.hi)) * 2 * max(hi, 0)
        if rng.random() < 0.6:
            assign(g, "k", Expr(f"sum({index} * 2 for {index} in {code})", IntType(-top, top)))
        else:
            cond = _loop_cond(g, index, kind)
            assign(g, "ok", Expr(f"{rng.choice(['any', 'all'])}({cond} for {index} in {code})", BoolType()))
        return True
    header, bindings, count, _ = _comprehension_source(g)
    e = _comprehension_item(g, bindings)
    if choice < 0.4:
        assign(g, "tp", Expr(f"tuple({e.code} {header})", SeqType(e.type, *count, "tuple")))
        return True
    if choice < 0.5 and count[0] >= 1 and e.type.shape:
        size = e.type.shape[-1] * 2
        assign(g, "k", Expr(f"max({e.wrapped()}.shape[-1] * 2 {header})", IntType(size, size)))
        return True
    if rng.random() < 0.5:
        e = Expr(f"{e.wrapped()}.sum()", TensorType((), e.type.mag * _numel(e.type.shape)))
    mag = e.type.mag * max(count[1], 1)
    if count[0] >= 1 and rng.random() < 0.6:
        assign(g, "t", _bounded(Expr(f"sum({e.code} {header})", TensorType(e.type.shape, mag))))
    else:
        start = f"torch.zeros({_dims(e.type.shape)})"
        assign(g, "t", _bounded(Expr(f"sum(({e.code} {header}), {start})", TensorType(e.type.shape, mag))))
    return True


# Calls: helpers, closures, lambdas


@dataclasses.dataclass(frozen=True)
class _Helper:
    """A generated module-level function: its tensor parameters, int/float defaults and result types.

    `tensors` holds (name, type) of positional parameters; a variadic helper has none and takes `*ts` instead,
    `varargs` = (count, item type) of the calls it was written for. Defaults are keyword-only when `kwonly`.
    """
    name: str
    tensors: tuple      # (param name, TensorType)
    defaults: tuple     # (param name, default source, type, choices of other values)
    returns: tuple      # result types: one tensor, or two for a tuple
    varargs: tuple | None = None
    kwonly: bool = False


def _define_helper(g: GenState, args: list[Expr]) -> _Helper:
    rng = g.rng
    name = g.fresh("helper")
    variadic = len({a.type.shape for a in args}) == 1 and rng.random() < 0.3
    tensors = () if variadic else tuple((p, a.type) for p, a in zip("abc", args))
    varargs = (len(args), TensorType(args[0].type.shape, max(a.type.mag for a in args))) if variadic else None
    defaults = []
    if rng.random() < 0.6 or g.has("helper_kwargs"):
        defaults.append(("k", "2", IntType(1, 3), ("1", "3")))
    if rng.random() < 0.5:
        defaults.append(("alpha", "0.5", FloatType(1.5), ("1.5", "-0.5")))
    kwonly = variadic or (bool(defaults) and rng.random() < 0.35)
    sub = GenState(rng, g.features, g.shared, MAX_HELPER_LINES, g.helper_depth + 1)
    for p, kind in tensors:
        sub.define(p, kind)
    if variadic:
        sub.define("ts", SeqType(varargs[1], len(args), len(args), "tuple"))
        if rng.random() < 0.5:  # makers expect a tensor variable
            sub.emit("a, *rest = ts")
            sub.define("rest", SeqType(varargs[1], len(args) - 1, len(args) - 1))
        else:
            sub.emit("a = ts[0]")
        sub.define("a", varargs[1])
    for p, _, kind, _ in defaults:
        sub.define(p, kind)
    sub.params = {p for p, _ in tensors} | {p for p, *_ in defaults} | {"ts"}
    statements(sub, rng.randint(0, 2))
    results = [_bounded(tensor_expr(sub, 2))]
    if rng.random() < 0.3:
        results.append(_bounded(tensor_expr(sub, 1)))
    params = [p for p, _ in tensors] + (["*ts"] if variadic else ["*"] if kwonly and defaults else [])
    signature = ", ".join(params + [f"{p}={d}" for p, d, *_ in defaults])
    ret = results[0].code if len(results) == 1 else ", ".join(r.code for r in results)
    g.shared.helper_sources.append("\n".join([f"def {name}({signature}):", *sub.lines, f"    return {ret}"]))
    helper = _Helper(name, tensors, tuple(defaults), tuple(r.type for r in results), varargs, kwonly)
    g.shared.helpers.append(helper)
    return helper


def _helper_args(g: GenState, helper: _Helper) -> list[Expr] | None:
    """Arguments of the shapes `helper` was written for, from what the program holds; None if some are missing."""
    kinds = [helper.varargs[1]] * helper.varargs[0] if helper.varargs else [k for _, k in helper.tensors]
    args = [leaf(g, kind.shape) for kind in kinds]
    return args if all(a is not None for a in args) else None


def _call_helper(g: GenState, keywords: bool) -> bool:
    rng = g.rng
    if g.helper_depth >= 1 or (g.room() < 2):
        return False
    usable = [(h, args) for h in g.shared.helpers for args in [_helper_args(g, h)] if args]
    if usable and rng.random() < 0.4:
        helper, args = rng.choice(usable)
    else:
        args = [_bounded(tensor_expr(g, 1)) for _ in range(rng.randint(1, 3 if keywords else 2))]
        helper = _define_helper(g, args)
    parts = [a.code for a in args]
    if helper.varargs:
        count, item = helper.varargs
        seqs = [n for n, k in g.visible(SeqType) if k.min_len == k.max_len == count and k.item.shape == item.shape
                and k.item.mag <= item.mag]
        if seqs and rng.random() < 0.5:
            parts = [f"*{rng.choice(seqs)}"]
    elif keywords:
        cut = rng.randint(0, len(parts))
        parts = parts[:cut] + [f"{p}={a}" for (p, _), a in zip(helper.tensors[cut:], parts[cut:])]
    if keywords or helper.kwonly:
        parts += [f"{p}={rng.choice(others)}" for p, _, _, others in helper.defaults if rng.random() < 0.6]
    elif helper.defaults and rng.random() < 0.5:
        parts.append(rng.choice(helper.defaults[0][3]))
    if keywords and not helper.varargs and len(args) >= 2 and rng.random() < 0.2:
        call = f"{helper.name}(*({', '.join(a.code for a in args)},))"
    elif keywords and not helper.varargs and rng.random() < 0.15:
        names = ", ".join(f"{p!r}: {a.code}" for (p, _), a in zip(helper.tensors, args))
        call = f"{helper.name}(**{{{names}}})"
    else:
        call = f"{helper.name}({', '.join(parts)})"
    # The helper's body bounded its results for its own argument bounds; new arguments may be larger.
    param_mag = helper.varargs[1].mag if helper.varargs else max(k.mag for _, k in helper.tensors)
    scale = max(max(a.type.mag for a in args) / max(param_mag, 1.0), 1.0) ** 4
    results = [TensorType(r.shape, r.mag * scale) for r in helper.returns]
    if len(results) == 1:
        assign(g, "t", _bounded(Expr(call, results[0])))
    elif rng.random() < 0.7:
        targets = [g.fresh("t") for _ in results]
        g.emit(f"{', '.join(targets)} = {call}")
        for target, kind in zip(targets, results):
            g.define(target, kind)
    else:
        index = rng.randrange(len(results))
        assign(g, "t", _bounded(Expr(f"{call}[{index}]", results[index])))
    return True


@statement("helper_call", 0.8)
def _helper_call(g: GenState) -> bool:
    return _call_helper(g, keywords=False)


@statement("helper_kwargs", 0.8)
def _helper_kwargs(g: GenState) -> bool:
    return _call_helper(g, keywords=True)


@dataclasses.dataclass(frozen=True)
class FnType:
    """A local function (closure or lambda) of one tensor of `param.shape`; `result` holds for args up to param.mag."""
    param: TensorType
    result: TensorType


def _outer_term(g: GenState, shape: tuple, exclude: set) -> Expr:
    """A term read from the enclosing function that broadcasts into `shape`: what makes a closure a closure."""
    numbers = [Expr(n, k) for n, k in g.visible((IntType, FloatType)) if n not in exclude]
    tensors = [Expr(n, k) for n, k in g.visible(TensorType)
               if n not in exclude and _broadcast(shape, k.shape) == shape]
    if tensors and (not numbers or g.rng.random() < 0.6):
        e = g.rng.choice(tensors)
    elif numbers:
        e = g.rng.choice(numbers)
    else:
        outer = g.rng.choice([Expr(n, k) for n, k in g.visible(TensorType) if n not in exclude])
        e = Expr(f"{outer.code}.mean()", TensorType((), outer.type.mag))
    g.captured.add(e.code.split(".")[0])
    return e


def _combine(g: GenState, inner: Expr, outer: Expr) -> Expr:
    if isinstance(outer.type, TensorType):
        return _binary(g, inner, outer)
    bound = _scalar_bound(outer)
    return Expr(f"{inner.wrapped()} * {outer.code}", TensorType(inner.type.shape, inner.type.mag * bound), False)


def _call_local(g: GenState) -> bool:
    """Call a closure or lambda made earlier (maybe in a loop now), on a tensor of the shape it was made for."""
    calls = [(n, k, a) for n, k in g.visible(FnType) for a in [leaf(g, k.param.shape)] if a is not None]
    if not calls:
        return False
    name, kind, arg = g.rng.choice(calls)
    scale = max(arg.type.mag / max(kind.param.mag, 1.0), 1.0) ** 3
    assign(g, "t", _bounded(Expr(f"{name}({arg.code})", TensorType(kind.result.shape, kind.result.mag * scale))))
    return True


@statement("closure", 0.7)
def _closure(g: GenState) -> bool:
    rng = g.rng
    if rng.random() < 0.3 and _call_local(g):
        return True
    if not g.can_nest(4):
        return False
    first = leaf(g)
    shape = first.type.shape
    name, param = g.fresh("inner"), g.fresh("p")
    param_type = TensorType(shape, INPUT_MAG)
    outer = _outer_term(g, shape, set())
    with g.block(f"def {name}({param}):", {param: param_type}):
        g.params.add(param)
        body = elementwise(g, Expr(param, param_type), 1)
        e = _bounded(_combine(g, body, outer))
        g.emit(f"return {e.code}")
    g.params.discard(param)
    g.define(name, FnType(param_type, e.type))
    scale = max(first.type.mag / INPUT_MAG, 1.0) ** 3
    result = TensorType(shape, e.type.mag * scale)
    second = leaf(g, shape)
    if second is not None and rng.random() < 0.5:
        assign(g, "t", _bounded(Expr(f"{name}({first.code}) + {name}({second.code})",
                                     TensorType(shape, 2 * result.mag * max(second.type.mag / INPUT_MAG, 1) ** 3),
                                     False)))
    else:
        assign(g, "t", _bounded(Expr(f"{name}({first.code})", result)))
    return True


@statement("lambda", 0.7)
def _lambda(g: GenState) -> bool:
    rng = g.rng
    if rng.random() < 0.3 and _call_local(g):
        return True
    first = leaf(g)
    shape, param = first.type.shape, g.fresh("p")
    with g.scope({param: first.type}):
        body = _bounded(elementwise(g, Expr(param, first.type), 1))
        if rng.random() < 0.4:
            body = _bounded(_combine(g, body, _outer_term(g, shape, {param})))
    if not _fits(body.type):
        return False
    numbers = [Expr(n, k) for n, k in g.visible((IntType, FloatType))]
    params = param
    if numbers and rng.random() < 0.3:
        # a default argument: the number is read once, when the lambda is made
        number, extra = rng.choice(numbers), g.fresh("c")
        params = f"{param}, {extra}={number.code}"
        body = Expr(f"{body.wrapped()} * {extra}", TensorType(shape, body.type.mag * _scalar_bound(number)), False)
    choice = rng.random()
    if choice < 0.45:
        fn = g.fresh("fn")
        g.emit(f"{fn} = lambda {params}: {body.code}")
        g.define(fn, FnType(first.type, body.type))
        assign(g, "t", Expr(f"{fn}({first.code})", body.type))
    elif choice < 0.7:
        assign(g, "t", Expr(f"(lambda {params}: {body.code})({first.code})", body.type))
    else:
        seqs = [(n, k) for n, k in g.visible(SeqType) if k.item.shape == shape and k.item.mag <= first.type.mag]
        if not seqs:
            return False
        name, kind = rng.choice(seqs)
        assign(g, "ls", Expr(f"list(map(lambda {params}: {body.code}, {name}))",
                             SeqType(body.type, kind.min_len, kind.max_len)))
    return True


# Programs


#: what an optional parameter of f holds when the call leaves it out: (value, type, or None: unchanged).
_DEFAULTS = {"opt": (None, None), "scale": (0.5, FloatType(0.5)), "flag": (False, None)}


def _choose_params(rng: random.Random, features: frozenset) -> list[Param]:
    """f's parameters: x always; others by chance, more often where an enabled feature reads them."""
    batch, width, hidden = rng.choice([2, 3, 4]), rng.choice([3, 4, 5]), rng.choice([2, 3, 4, 6])
    wants = lambda *names: any(n in features for n in names)  # noqa: E731
    params = [Param("x", TensorType((batch, width), INPUT_MAG))]
    if rng.random() < 0.6:
        shape = rng.choice([(batch, width), (batch, width), (width,), (batch, 1)])
        params.append(Param("y", TensorType(shape, INPUT_MAG)))
    if wants("matmul") and rng.random() < 0.5:
        params.append(Param("w", TensorType((width, hidden), INPUT_MAG)))
    loops = ("for_list", "for_zip", "for_enumerate", "for_reversed", "list_comp", "starred_unpack", "genexpr_sum")
    if rng.random() < (0.7 if wants(*loops) else 0.3):
        count = rng.randint(1, 4)
        params.append(Param("ys", SeqType(TensorType((batch, width), INPUT_MAG), count, count,
                                          rng.choice(["list", "list", "tuple"]))))
    if rng.random() < (0.7 if wants("if_int", "while", "python_arith", "for_range") else 0.3):
        value = rng.randint(1, 4)
        params.append(Param("n", IntType(value, value), value))
    optional = []
    if wants("if_none", "if_isinstance") and rng.random() < 0.7:
        value = None if rng.random() < 0.5 else "tensor"
        shape = rng.choice([(batch, width), (width,)])
        optional.append(Param("opt", OptionalType(TensorType(shape, INPUT_MAG)), value, "None"))
    if wants("if_isinstance", "python_arith") and rng.random() < 0.5:
        value = rng.choice([0.5, 2, 3, -1.5])
        kind = IntType(value, value) if isinstance(value, int) else FloatType(abs(value))
        optional.append(Param("scale", kind, value, "0.5"))
    if wants("if_int") and rng.random() < 0.3:
        value = rng.random() < 0.5
        optional.append(Param("flag", BoolType(), value, "False"))
    passed = rng.randint(0, len(optional))
    for index, param in enumerate(optional):
        if index >= passed:
            value, kind = _DEFAULTS[param.name]
            param = dataclasses.replace(param, value=value, type=kind or param.type, passed=False)
        params.append(param)
    return params


def _describe(p: Param) -> str:
    if isinstance(p.type, TensorType):
        return f"{p.name}: tensor{p.type.shape}"
    if isinstance(p.type, SeqType):
        return f"{p.name}: {p.type.kind} of {p.type.max_len} x tensor{p.type.item.shape}"
    if isinstance(p.type, OptionalType):
        value = "None" if p.value is None else f"tensor{p.type.item.shape}"
        return f"{p.name}: {value}" + ("" if p.passed else " (default)")
    return f"{p.name}={p.value!r}" + ("" if p.passed else " (default)")


def _return_statement(g: GenState) -> None:
    """`out = <an op on a recent tensor>` (so the graph always has work), then a return of one of five shapes.

    Sometimes an early `if <condition>: return ...` comes first, its value also computed by an op.
    """
    rng = g.rng
    cond = _int_cond(g) if g.has("if_int") and rng.random() < 0.2 else None
    if cond:
        base = leaf(g)
        early = _bounded(_unary(g, base))
        ints = [n for n, _ in g.visible(IntType)]
        with g.block(f"if {cond}:"):
            g.emit(f"return {early.code}" + (f", {rng.choice(ints)}" if ints and rng.random() < 0.5 else ""))
    tensors = g.visible(TensorType)
    recent = [Expr(n, k) for n, k in tensors[:3]]
    base = rng.choice(recent)
    out = assign(g, "out", _bounded(_unary(g, base) if rng.random() < 0.5 else _with_scalar(g, base)))
    others = [n for n, _ in tensors if n != out]
    ints = [n for n, _ in g.visible(IntType)] + [f"len({n})" for n, _ in g.visible(SeqType)]
    containers = [n for n, _ in g.visible((SeqType, DictType))]
    forms = [f"{out}"]
    if others:
        forms += [f"{out}, {rng.choice(others)}", f"[{out}, {rng.choice(others)}]"]
    if ints:
        forms += [f"{out}, {rng.choice(ints)}", f"{{'out': {out}, 'n': {rng.choice(ints)}}}"]
    if containers:
        forms.append(f"{out}, {rng.choice(containers)}")
    g.emit(f"return {rng.choice(forms)}")


def generate_program(seed: int, *, features: frozenset | None = None) -> Program:
    """A random program for `seed`: the same seed and features always give the same source and inputs.

    Args:
        seed: any int; drives `random.Random(seed)`.
        features: names from `DEFAULT_FEATURES` (the default: all of them) whose statements may appear.
    Returns a `Program`; `exec` its source and call `f(*program.make_inputs(s))`.
    """
    features = DEFAULT_FEATURES if features is None else frozenset(features)
    unknown = sorted(features - set(STATEMENT_MAKERS))
    if unknown:
        raise ValueError(f"generate_program: unknown feature(s) {unknown}; known: {sorted(STATEMENT_MAKERS)}")
    rng = random.Random(seed)
    params = _choose_params(rng, features)
    g = GenState(rng, features)
    for p in params:
        g.define(p.name, p.type)
        g.params.add(p.name)
    constants = []
    if "python_arith" in features and rng.random() < 0.4:
        # module-level constants: f reads them as globals
        scale, steps = rng.choice([0.5, 1.5, -0.75]), rng.randint(1, 3)
        constants = [f"SCALE = {scale}", f"STEPS = {steps}"]
        for name, kind in (("SCALE", FloatType(abs(scale))), ("STEPS", IntType(steps, steps))):
            g.define(name, kind)
            g.params.add(name)
    target = rng.randint(3, MAX_BODY_LINES - 4)
    for _ in range(60):
        if len(g.lines) >= target:
            break
        one_statement(g)
    _return_statement(g)
    signature = ", ".join(p.name if p.default is None else f"{p.name}={p.default}" for p in params)
    header = f"# progen seed={seed}: f({', '.join(_describe(p) for p in params)})"
    module = "import torch" + ("\n\n" + "\n".join(constants) if constants else "")
    source = "\n\n\n".join([module, *g.shared.helper_sources, "\n".join([f"def f({signature}):", *g.lines])])
    return Program(f"progen_{seed}", seed, f"{header}\n{source}\n", tuple(params), features)


#: every feature with a statement maker: what `generate_program` mixes by default.
DEFAULT_FEATURES = frozenset(STATEMENT_MAKERS)
