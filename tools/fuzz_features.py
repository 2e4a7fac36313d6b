"""Statement makers for fuzzing, added to `tools/progen.py`'s table: graph breaks, side effects, exceptions, modules.

Nine makers are added to progen's `STATEMENT_MAKERS` through its `statement` decorator. They find what they write
to (a print buffer, an input list, object or dict, the module's globals and classes) among the variables' types
and in the `FuzzContext` kept on the generator's shared state, so inside a plain `progen.generate_program` they
emit nothing; `tools/fuzz_programs.py` assembles programs that offer all of it. Imports torch and progen only.
The soundness features (`SOUNDNESS_FEATURES`) are named here and made in tools/fuzz_soundness.py.
Entry points: the input types, `FUZZ_FEATURES`, `SOUNDNESS_FEATURES`, `ALL_FEATURES`, `FEATURE_MARKERS`,
`is_intended`.
"""
from __future__ import annotations

import dataclasses
import random
import re

from tools import progen
from tools.progen import (DEFAULT_FEATURES, Expr, FloatType, GenState, IntType, TensorType, assign, int_expr, leaf,
                          shaped_expr, statement, statements)

__all__ = ["ALL_FEATURES", "BoxType", "BufferType", "FEATURE_MARKERS", "FUZZ_FEATURES", "FuzzContext", "GLOBALS",
           "HARNESS_FEATURES", "LogType", "NetType", "SOUNDNESS_FEATURES", "StatsType", "is_intended"]

#: every message of an exception a program raises on purpose starts with this (see `is_intended`).
INTENDED = "fuzz:"
#: module-level state that `global_write` statements change: compared after every call.
GLOBALS = ("COUNTER", "TRACE", "LAST")


#: RuntimeError messages of Python's dicts and sets changed while iterated: `iter_mutation` lets some leave f.
ITERATION_ERRORS = ("changed size during iteration", "keys changed during iteration")


def is_intended(exc: BaseException) -> bool:
    """True for an exception a program raises on purpose; any other exception in eager is a generator bug."""
    message = str(exc)
    return INTENDED in message or (type(exc) is RuntimeError and any(m in message for m in ITERATION_ERRORS))


# Note [Fuzz inputs]: the inputs a fuzz program writes to are parameters of `f` with the types below, made fresh for
# every call by `FuzzProgram.make_inputs` (from the program's own namespace, so that `Box` and module classes are the
# program's). Tensors kept in objects and globals have the shape `row` = x.shape[1:], which the recompile variants
# never change, and |values| <= 1: a read is valid whatever call wrote them.


@dataclasses.dataclass(frozen=True)
class BufferType:
    """An io.StringIO that `print(..., file=out)` writes to."""


@dataclasses.dataclass(frozen=True)
class LogType:
    """A list the program appends ints, strings, shapes and tensors to; it starts as [0]."""


@dataclasses.dataclass(frozen=True)
class BoxType:
    """An instance of the program's class `Box`: `scale` (a float, only read), `count` (an int), `last` (a tensor
    of shape `row`, |values| <= 1) and `hist` (a list); methods `bump(k)` and `remember(t)` change it."""
    scale: float
    row: tuple


@dataclasses.dataclass(frozen=True)
class StatsType:
    """A dict that starts as {'calls': 0}; the program adds counters, shapes and tensors."""


@dataclasses.dataclass(frozen=True)
class NetType:
    """An nn.Module of the program's class `cls`: a Linear(in_features, out_features) and a buffer."""
    cls: str
    in_features: int
    out_features: int


@dataclasses.dataclass
class FuzzContext:
    """What a fuzz program offers its makers beyond typed variables: the row shape of tensors kept in state,
    whether the module has GLOBALS, and the module-level sources written before generation (classes of inputs)."""
    row: tuple
    has_globals: bool
    fixed_sources: list = dataclasses.field(default_factory=list)


def _context(g: GenState) -> FuzzContext | None:
    return getattr(g.shared, "fuzz", None)


# Small pieces shared by the makers


def _tag(g: GenState) -> str:
    return repr(g.fresh("m"))


def _int_or_const(g: GenState) -> Expr:
    e = int_expr(g)
    if e is None or g.rng.random() < 0.3:
        c = g.rng.randint(1, 3)
        return Expr(str(c), IntType(c, c))
    return e


def _row_value(g: GenState, row: tuple) -> str:
    """An expression of shape `row` with |values| <= 1, for a tensor kept in an object or a global."""
    return f"torch.tanh({shaped_expr(g, row, 1).code})"


def _sinks(g: GenState) -> list[list[str]]:
    """Statements (as lines) that record the value `{}` somewhere the harness compares, one per place the program
    has (globals are declared once per function by fuzz_programs._declare_globals)."""
    ctx = _context(g)
    sinks = [[f"print({{}}, file={n})"] for n, _ in g.visible(BufferType)]
    sinks += [[f"{n}.append({{}})"] for n, _ in g.visible(LogType)]
    sinks += [[f"{n}.hist.append({{}})"] for n, _ in g.visible(BoxType)]
    sinks += [[f"{n}[{{0}}] = {n}.get({{0}}, 0) + 1"] for n, _ in g.visible(StatsType)]
    if ctx is not None and ctx.has_globals:
        sinks.append(["TRACE.append({})"])
    return sinks


def _record(g: GenState, what: str) -> bool:
    """Emit statements that record the expression `what` in a compared place; False if the program has none."""
    sinks = _sinks(g)
    if not sinks:
        return False
    for line in g.rng.choice(sinks):
        g.emit(line.format(what))
    return True


# Graph breaks: print, .item(), branches on tensor values


def _report_helper(g: GenState) -> str:
    """A module-level helper that prints (a break inside an inlined call) and returns a tensor."""
    name = g.fresh("report")
    g.shared.helper_sources.append("\n".join([
        f"def {name}(out, t, k):",
        f"    print({name!r}, k, tuple(t.shape), file=out)",
        "    return t * 0.5 + k"]))
    return name


@statement("print_break", 3.0)
def _print_break(g: GenState) -> bool:
    buffers = g.visible(BufferType)
    if not buffers:
        return False
    out, rng = buffers[0][0], g.rng
    t = leaf(g)
    tag = _tag(g)
    choice = rng.random()
    if choice < 0.15:
        k = _int_or_const(g)
        existing = [s[4:s.index("(")] for s in g.shared.helper_sources if s.startswith("def report")]
        name = rng.choice(existing) if existing and rng.random() < 0.5 else _report_helper(g)
        mag = t.type.mag * 0.5 + progen._scalar_bound(k)
        assign(g, "t", progen._bounded(Expr(f"{name}({out}, {t.code}, {k.code})", TensorType(t.type.shape, mag))))
        return True
    k = _int_or_const(g)
    forms = [f"print({tag}, {t.wrapped()}.shape, file={out})",
             f"print({tag}, tuple({t.wrapped()}.shape), {k.code}, file={out})",
             f"print({t.wrapped()}.detach(), file={out})",
             f"print(f\"{tag[1:-1]} {{{t.wrapped()}.sum().item():.4f}}\", file={out})",
             f"print({tag}, round(float({t.wrapped()}.mean()), 4), sep=': ', file={out})",
             f"print({tag}, {k.code}, end=';\\n', file={out})",
             f"{out}.write(f\"{tag[1:-1]} {{{k.code}}}\\n\")"]
    g.emit(rng.choice(forms))
    return True


@statement("item_break", 2.5)
def _item_break(g: GenState) -> bool:
    rng = g.rng
    t = leaf(g)
    n, m, w = progen._numel(t.type.shape), t.type.mag, t.wrapped()
    forms = [(f"{w}.sum().item()", FloatType(m * n)), (f"{w}.mean().item()", FloatType(m)),
             (f"float({w}.max())", FloatType(m)), (f"{w}.abs().max().item()", FloatType(m)),
             (f"int(({w} > 0).sum())", IntType(0, n)), (f"int({w}.argmax())", IntType(0, n - 1)),
             (f"({w} > 0).sum().item()", IntType(0, n))]
    code, kind = rng.choice(forms)
    name = assign(g, "v" if isinstance(kind, FloatType) else "k", Expr(code, kind))
    if rng.random() < 0.5:
        base = shaped_expr(g, leaf(g).type.shape, 1)
        bound = kind.bound if isinstance(kind, FloatType) else float(kind.hi)
        assign(g, "t", progen._bounded(Expr(f"{base.wrapped()} * {name}", TensorType(base.type.shape,
                                                                                       base.type.mag * bound), False)))
    elif rng.random() < 0.5 and g.can_nest():
        c = round(rng.uniform(-0.5, 0.5), 2) if isinstance(kind, FloatType) else rng.randint(kind.lo, kind.hi)
        return progen._conditional(g, f"{name} > {c}")
    return True


def _tensor_cond(g: GenState) -> str:
    t = leaf(g)
    w, c = t.wrapped(), round(g.rng.uniform(-0.5, 0.5), 2)
    return g.rng.choice([f"{w}.sum() > 0", f"({w} > 0).any()", f"({w} > {c}).all()", f"{w}.mean() < {c}",
                         f"bool({w}.amax() > 1.0)", f"{w}.norm() > {abs(c) + 1.0}", f"not {w}.sum() > {c}",
                         f"{w}.dim() > 1 and {w}.sum() > {c}"])


@statement("tensor_if", 3.0)
def _tensor_if(g: GenState) -> bool:
    if g.rng.random() < 0.2 and g.can_nest(9):
        # a while loop whose condition reads a tensor: at most `limit` iterations
        limit, counter, cond = g.rng.randint(1, 3), g.fresh("j"), _tensor_cond(g)
        g.emit(f"{counter} = 0")
        progen._loop(g, f"while {counter} < {limit} and {cond}:", {counter: IntType(1, limit)}, (0, limit), counter,
                     first_lines=(f"{counter} += 1",))
        g.define(counter, IntType(0, limit))
        return True
    return progen._conditional(g, _tensor_cond(g))


# Side effects: an input list, an input object, the module's globals, an input dict


@statement("list_append", 2.0)
def _list_append(g: GenState) -> bool:
    logs = g.visible(LogType)
    if not logs:
        return False
    log, rng = logs[0][0], g.rng
    t, k, tag = leaf(g), _int_or_const(g), _tag(g)
    forms = [f"{log}.append({k.code})", f"{log}.append({t.code})", f"{log}.append({t.wrapped()} * 2)",
             f"{log}.append(({tag}, tuple({t.wrapped()}.shape)))", f"{log}.extend([{tag}, {k.code}])",
             f"{log} += [{tag}]", f"{log}.insert(0, {k.code})"]
    if rng.random() < 0.15 and g.can_nest():
        return progen._conditional(g, f"len({log}) > {rng.randint(1, 4)}")
    g.emit(rng.choice(forms))
    return True


BOX_SOURCE = """class Box:
    def __init__(self, scale, row):
        self.scale = scale
        self.count = 0
        self.hist = []
        self.last = torch.zeros(row)

    def bump(self, k):
        self.count += k
        return self.count

    def remember(self, t):
        self.last = torch.tanh(t)
        self.hist.append(tuple(t.shape))"""


@statement("obj_attr", 2.0)
def _obj_attr(g: GenState) -> bool:
    boxes = g.visible(BoxType)
    if not boxes:
        return False
    (box, kind), rng = boxes[0], g.rng
    choice = rng.random()
    if choice < 0.15:
        assign(g, "s", Expr(f"{box}.scale", FloatType(abs(kind.scale))))
        return True
    if choice < 0.3:
        shape = [k.shape for _, k in g.visible(TensorType)
                 if progen._broadcast(k.shape, kind.row) == k.shape]
        base = shaped_expr(g, rng.choice(shape), 1) if shape else shaped_expr(g, kind.row, 1)
        assign(g, "t", progen._bounded(Expr(f"{base.wrapped()} + {box}.last",
                                            TensorType(base.type.shape, base.type.mag + 1.0), False)))
        return True
    if choice < 0.4 and g.can_nest():
        return progen._conditional(g, rng.choice([f"{box}.count > {rng.randint(0, 3)}", f"hasattr({box}, 'tag')",
                                                  f"len({box}.hist) % 2 == 0"]))
    k, tag = _int_or_const(g), _tag(g)
    forms = [f"{box}.count += {k.code}", f"{box}.count = {box}.count * 2 + 1",
             f"{box}.last = {_row_value(g, kind.row)}",
             f"{box}.hist.append({k.code})", f"{box}.tag = {tag}", f"setattr({box}, 'flag', {k.code})",
             f"{box}.bump({k.code})", f"{box}.remember({shaped_expr(g, kind.row, 1).code})"]
    g.emit(rng.choice(forms))
    return True


@statement("global_write", 2.0)
def _global_write(g: GenState) -> bool:
    ctx = _context(g)
    if ctx is None or not ctx.has_globals:
        return False
    rng = g.rng
    choice = rng.random()
    if choice < 0.2:
        base = shaped_expr(g, ctx.row, 1) if rng.random() < 0.5 else leaf(g)
        shape = progen._broadcast(base.type.shape, ctx.row)
        if shape is None:
            return False
        assign(g, "t", Expr(f"{base.wrapped()} * LAST", TensorType(shape, base.type.mag), False))
        return True
    if choice < 0.3 and g.can_nest():
        return progen._conditional(g, f"COUNTER % 2 == {rng.randint(0, 1)}")
    k = _int_or_const(g)
    forms = [f"COUNTER += {k.code}", f"LAST = {_row_value(g, ctx.row)}", f"TRACE.append({k.code})",
             f"TRACE.append({_tag(g)})", "COUNTER = COUNTER * 2 % 7", f"TRACE.extend([{k.code}, COUNTER])"]
    g.emit(rng.choice(forms))
    return True


@statement("dict_update", 1.5)
def _dict_update(g: GenState) -> bool:
    dicts = g.visible(StatsType)
    if not dicts:
        return False
    stats, rng = dicts[0][0], g.rng
    t, k, tag = leaf(g), _int_or_const(g), _tag(g)
    if rng.random() < 0.15 and g.can_nest():
        return progen._conditional(g, rng.choice([f"{tag} in {stats}", f"len({stats}) > 2",
                                                  f"{stats}['calls'] > 1"]))
    forms = [f"{stats}['calls'] += 1", f"{stats}[{tag}] = {k.code}", f"{stats}[{tag}] = {t.code}",
             f"{stats}.update({tag[1:-1]}={k.code})", f"{stats}.setdefault('seen', []).append({k.code})",
             f"{stats}['calls'] = {stats}.get('calls', 0) + {k.code}", f"{stats}[{tag}] = tuple({t.wrapped()}.shape)"]
    g.emit(rng.choice(forms))
    return True


# Exceptions: raised under Python-value conditions, caught or propagating out of f


_RAISED = ("ValueError", "IndexError", "FuzzError")


#: except clauses: the exceptions each catches (FuzzError derives from ValueError)
_CLAUSES = {"ValueError": {"ValueError", "FuzzError"}, "(ValueError, IndexError)": {"ValueError", "IndexError",
                                                                                   "FuzzError"},
            "Exception": set(_RAISED), "FuzzError": {"FuzzError"}, "IndexError": {"IndexError"}}


FUZZ_ERROR_SOURCE = "class FuzzError(ValueError):\n    pass"


def _check_helper(g: GenState) -> str:
    """`checkN(v, limit)`: returns v, or raises when v > limit (sometimes through another check)."""
    existing = [s[4:s.index("(")] for s in g.shared.helper_sources if s.startswith("def check")]
    if existing and g.rng.random() < 0.4:
        return g.rng.choice(existing)
    name, error = g.fresh("check"), g.rng.choice(_RAISED)
    if existing and g.rng.random() < 0.3:
        body = [f"    return {g.rng.choice(existing)}(v + 1, limit + 1) - 1"]
    else:
        body = ["    if v > limit:", f"        raise {error}(f\"{INTENDED} {name} got {{v}} > {{limit}}\")",
                "    return v"]
    g.shared.helper_sources.append("\n".join([f"def {name}(v, limit):", *body]))
    return name


def _checked_int(g: GenState) -> tuple[str, IntType]:
    """A call of a check on an int of the program, and the type of what it returns when it returns."""
    e = int_expr(g) or Expr("1", IntType(1, 1))
    lo, hi = e.type.lo, e.type.hi
    limit = g.rng.randint(lo - 1, hi) if g.rng.random() < 0.5 else g.rng.randint(hi, hi + 2)
    return f"{_check_helper(g)}({e.code}, {limit})", IntType(min(lo, limit), min(hi, limit))


@statement("exceptions", 2.5)
def _exceptions(g: GenState) -> bool:
    rng = g.rng
    choice = rng.random()
    if choice < 0.25 or not g.can_nest(8):
        call, kind = _checked_int(g)
        assign(g, "k", Expr(call, kind))  # may propagate out of f
        return True
    target = g.fresh("t")
    shape = leaf(g).type.shape
    if choice < 0.4 and _sinks(g):
        with g.block("try:"):
            statements(g, rng.randint(1, 2))
            if rng.random() < 0.5:
                call, _ = _checked_int(g)
                g.emit(call)
            e = progen._bounded(shaped_expr(g, shape, 1))
            g.emit(f"{target} = {e.code}")
        with g.block("finally:"):
            _record(g, _tag(g))
        g.define(target, e.type)
        return True
    dicts = g.visible(progen.DictType)
    if dicts and rng.random() < 0.25:
        # a KeyError from a dict of the program: the key may be there or not
        name, dkind = rng.choice(dicts)
        key, item = rng.choice(dkind.items)
        key, shape, clause = rng.choice([key, "missing"]), item.shape, "KeyError"
        with g.block("try:"):
            g.emit(f"{target} = {name}[{key!r}]")
        mags = [item.mag]
    else:
        clause = rng.choice(list(_CLAUSES))
        with g.block("try:"):
            call, kind = _checked_int(g)
            k = g.fresh("k")
            g.emit(f"{k} = {call}")
            g.define(k, kind)
            statements(g, rng.randint(0, 2))
            e = progen._bounded(shaped_expr(g, shape, 1))
            g.emit(f"{target} = {e.wrapped()} * {k}")
        mags = [e.type.mag * max(abs(kind.lo), abs(kind.hi), 1)]
    with g.block(f"except {clause} as err:"):
        if rng.random() < 0.6:
            _record(g, rng.choice(["str(err)", "type(err).__name__", "repr(err)"]))
        e = progen._bounded(shaped_expr(g, shape, 1))
        g.emit(f"{target} = {e.code}")
    mags.append(e.type.mag)
    if rng.random() < 0.2:
        with g.block("else:"):
            _record(g, _tag(g))
    g.define(target, TensorType(shape, max(mags)))
    return True


# Modules: a class of the program with a Linear and a buffer, called inside f


def net_source(rng: random.Random, name: str, fin: int, fout: int) -> str:
    init = ["    def __init__(self):", "        super().__init__()",
            f"        self.lin = torch.nn.Linear({fin}, {fout})",
            f"        self.register_buffer('scale', torch.linspace(0.5, 1.5, {fout}))"]
    forward = ["    def forward(self, a):"]
    if rng.random() < 0.4:
        init.append("        self.register_buffer('steps', torch.zeros((), dtype=torch.int64))")
        forward.append("        self.steps += 1")
    if rng.random() < 0.4:
        init.append("        self.calls = 0")
        forward.append("        self.calls += 1")
    forward.append(f"        h = {rng.choice(['torch.tanh', 'torch.sigmoid'])}(self.lin(a)) * self.scale")
    if rng.random() < 0.3:
        forward += ["        if self.training:", "            h = h * 0.5"]
    forward.append("        return h")
    return "\n".join([f"class {name}(torch.nn.Module):", *init, "", *forward])


def _nets(g: GenState) -> list[tuple[str, NetType]]:
    """Modules f can call: a module parameter, and module-level instances still in the program."""
    nets = list(g.visible(NetType))
    for source in g.shared.helper_sources:
        match = re.search(r"^(net\d+) = (Net\d+)\(\)$", source, re.M)
        if match:
            fin, fout = map(int, re.search(r"Linear\((\d+), (\d+)\)", source).groups())
            nets.append((match.group(1), NetType(match.group(2), fin, fout)))
    return nets


@statement("module", 1.5)
def _module(g: GenState) -> bool:
    if _context(g) is None:
        return False
    rng = g.rng
    tensors = [(n, k) for n, k in g.visible(TensorType) if k.shape]
    if not tensors:
        return False
    calls = [(net, kind, n, k) for net, kind in _nets(g) for n, k in tensors if k.shape[-1] == kind.in_features]
    if calls and rng.random() < 0.7:
        net, kind, arg, akind = rng.choice(calls)
    else:
        arg, akind = rng.choice(tensors)
        cls, net = g.fresh("Net"), g.fresh("net")
        kind = NetType(cls, akind.shape[-1], rng.choice([2, 3, 4]))
        source = net_source(rng, cls, kind.in_features, kind.out_features)
        instance = [f"{net} = {cls}()"]
        if rng.random() < 0.3:
            instance.append(f"{net}.eval()")
        g.shared.helper_sources.append(source + "\n\n\n" + "\n".join(instance))
    shape = akind.shape[:-1] + (kind.out_features,)
    if rng.random() < 0.2:
        bound = (kind.in_features ** 0.5) * akind.mag + 1.0
        assign(g, "t", progen._bounded(Expr(f"{net}.lin({arg})", TensorType(shape, bound))))
    elif rng.random() < 0.25 and g.can_nest(3):
        target = g.fresh("t")
        with g.block("with torch.no_grad():"):
            g.emit(f"{target} = {net}({arg})")
        g.define(target, TensorType(shape, 1.5))
    else:
        assign(g, "t", Expr(f"{net}({arg})", TensorType(shape, 1.5)))
    return True


# Feature sets


#: features with statement makers added here; `recompiles` is the harness's (other shapes and ints per program).
STATEMENT_FEATURES = frozenset({"print_break", "item_break", "tensor_if", "list_append", "obj_attr", "global_write",
                                "dict_update", "exceptions", "module"})


HARNESS_FEATURES = frozenset({"recompiles"})


FUZZ_FEATURES = STATEMENT_FEATURES | HARNESS_FEATURES


#: ISSUE13's constructs; their makers are in tools/fuzz_soundness.py (`--features soundness` in tools/fuzz.py)
SOUNDNESS_FEATURES = frozenset({"rebind_global", "rebind_arg", "rebind_attr", "rebind_class", "shadow_builtin",
                                "module_list", "view_offsets", "alias_args", "iter_mutation", "dict_views",
                                "exc_chain", "attr_probe", "set_args"})


#: everything: progen's features and ours
ALL_FEATURES = DEFAULT_FEATURES | FUZZ_FEATURES | SOUNDNESS_FEATURES

#: `--features soundness`: ISSUE13's constructs with tensor ops, Python values, graph breaks and places to record to
SOUNDNESS_CAMPAIGN_FEATURES = SOUNDNESS_FEATURES | {"tensor_ops", "python_arith", "list_append", "print_break",
                                                    "obj_attr", "dict_update"}


#: a rough test of which features a program's source shows (for the campaign's coverage counts)
FEATURE_MARKERS = {
    "print_break": r"file=out|out\.write", "item_break": r"\.item\(\)|\b(int|float)\(\(?\w+(\.\w+\(\))? ?>? ?0?\)?",
    "tensor_if": r"\b(if|while)\b[^\n]*(\.(any|all|norm)\(\)|\.(sum|mean|amax)\(\) [<>])",
    "list_append": r"\blog\b", "obj_attr": r"\bbox\b", "global_write": r"\bglobal\b|\bTRACE\.",
    "dict_update": r"\bstats\b",
    "exceptions": r"\btry:|\bcheck\d+\(", "module": r"\bnet\d*\b",
    # soundness: uses in f and helpers (the module-level parts and `rebind` never match)
    "rebind_global": r"\bACT\(|ACT is", "rebind_arg": r"\bact\(|\blib\.relu\(|\bact is",
    "rebind_attr": r"\b(knob|dial|gate)\.act\b(?! =)|\b(knob|dial|gate)\.gain\b(?! =)|\bgate\(",
    "rebind_class": r"\.mix\(|\b(knob|dial|Knob\(\d\))\.k\b", "shadow_builtin": r"^def _short_len",
    "module_list": r"\bstack\(|in stack\.layers|len\(stack\.layers\)", "view_offsets": r"\bv[ab]\b",
    "alias_args": r"\bl[ab]\b", "iter_mutation": r"\bfor mk\d+ in", "dict_views": r"\bview\d+ = ",
    "exc_chain": r"__context__|__cause__|__suppress_context__", "attr_probe": r"'(extra|tmp|mark)'",
    "set_args": r"\b(sa|ss\d+)\b"}

