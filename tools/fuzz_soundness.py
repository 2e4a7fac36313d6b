"""Statement makers for soundness (ISSUE13): what a program reads changes between calls, and mutation it observes.

Twelve makers are added to progen's `STATEMENT_MAKERS`, one per feature of `fuzz_features.SOUNDNESS_FEATURES`:
- rebinding between calls (Note [Rebinding between calls]): a global `ACT` bound to a function (`rebind_global`),
  a function argument or a module-like argument (`rebind_arg`), attributes holding a function or a number of an
  input object, a module-level object and a module (`rebind_attr`), a method and a property replaced on the
  program's class `Knob` (`rebind_class`), `len` shadowed by a module global and deleted again (`shadow_builtin`),
  an `nn.ModuleList` grown and shrunk (`module_list`), views of one base tensor at other storage offsets
  (`view_offsets`), the same list passed as two arguments (`alias_args`);
- mutation inside one call: dicts and sets changed while iterated (Python raises RuntimeError after partial
  changes) and lists growing or shrinking while iterated (`iter_mutation`), dict views read after inserts and
  deletes (`dict_views`), implicit and explicit exception chaining (`exc_chain`), `hasattr`/`getattr` after
  `setattr`/`delattr` in the same call (`attr_probe`), a set passed in changed by every kind of set operation and
  sets made inside, whose iteration order (CPython's table history) is observed (`set_args`).
What each maker observes goes to the compared places of fuzz_features (`_record`) or into an int that flows into
the result. Imports torch, progen and fuzz_features only.
Entry points: the input types (`SOUND_INPUT_TYPES`), `SoundContext`, `sound_params`, `sound_input`.
"""
from __future__ import annotations

import dataclasses
import random

import torch

from tools import progen
from tools.fuzz_features import BoxType, LogType, NetType, StatsType, _record, _sinks
from tools.progen import (INPUT_MAG, DictType, Expr, GenState, IntType, Param, SeqType, TensorType,
                          assign, leaf, shaped_expr, statement)

__all__ = ["AliasListType", "FnArgType", "KnobType", "LibArgType", "SOUND_INPUT_TYPES", "SetArgType", "SoundContext",
           "ViewType", "sound_input", "sound_params"]


# Note [Rebinding between calls]: a program with these features defines `rebind(phase)` at module level. Before
# every call `FuzzProgram.make_inputs` calls it with the call's phase (`CallSpec.phase`: 0, 1, 2, ... in call
# order), in the eager and in the compiled namespace alike, and builds the phase's arguments (a function, views
# at other offsets, one list passed twice). Everything `rebind` sets is a function of the phase alone, so any
# subset of the calls is valid in any order. Every choice keeps |values| within the bound the generator assumed.


@dataclasses.dataclass(frozen=True)
class FnArgType:
    """A function argument: ACTS[phase % 3] of the program (torch.relu, torch.tanh, a lambda); |f(t)| <= |t|."""


@dataclasses.dataclass(frozen=True)
class LibArgType:
    """A namespace argument: the torch module on even phases, the program's class TanhLib (relu = tanh) on odd."""


@dataclasses.dataclass(frozen=True)
class KnobType:
    """An instance Knob(phase) of the program's class: `act` (a function of ACTS), `gain` (|gain| <= 1), the
    method `mix(t)` (|mix(t)| <= max(|t|, 2)) and the property `k` (an int in [1, 3])."""


@dataclasses.dataclass(frozen=True)
class AliasListType:
    """Lists of ints in [0, 3] that start as [1, 2]: `la` and `lb`, the same list object on odd phases."""
    slot: int


@dataclasses.dataclass(frozen=True)
class SetArgType:
    """A set of small ints passed in, a new one each call: `SET_ARGS[phase % 3]`. Its members collide in CPython's
    8-slot table (1, 9, 17 ... share a slot), so its order depends on the history of its table."""


#: the sets a SetArgType argument starts as, by phase
SET_ARGS = ((1, 9), (9, 17, 2), (25, 1, 3, 17))


@dataclasses.dataclass(frozen=True)
class ViewType(TensorType):
    """A view of shape `shape` into one base tensor per call, shared by `va` (slot 0) and `vb` (slot 1): disjoint
    on phases 0 mod 3, overlapping by all but one element on 1 mod 3, the same elements on 2 mod 3. In-place
    writes keep |values| <= INPUT_MAG."""
    slot: int = 0


@dataclasses.dataclass
class SoundContext:
    """What the soundness makers added to the program: the module-level parts (`uses`), rendered by `render` in a
    fixed order with the `rebind` function, and the module-level objects calls change (`state`)."""
    row: tuple
    uses: set = dataclasses.field(default_factory=set)
    shadow_on_odd: bool = True

    def use(self, *parts: str) -> None:
        needs = {"dial": ("knob",), "knob": ("acts",), "knob_class": ("knob",), "gate": ("acts",),
                 "act_global": ("acts",), "fn_arg": ("acts",)}
        for part in parts:
            self.uses.add(part)
            self.use(*needs.get(part, ()))

    def state(self) -> tuple:
        return tuple(name for part, name in (("dial", "dial"), ("gate", "gate"), ("stack", "stack"))
                     if part in self.uses)

    def render(self) -> str | None:
        """The module-level source of the parts in use, ending with `def rebind(phase)`; None if none is used."""
        width = self.row[-1]
        blocks, rebind, names = [], [], []
        if "shadow" in self.uses:
            blocks.append("import builtins")
        if "acts" in self.uses:
            blocks.append("ACTS = (torch.relu, torch.tanh, lambda t: t * 0.5)\nGAINS = (1.0, 0.5, -1.0)")
        if "act_global" in self.uses:
            blocks.append("ACT = torch.relu")
            rebind.append("ACT = ACTS[phase % 3]")
            names.append("ACT")
        if "lib" in self.uses:
            blocks.append("class TanhLib:\n    relu = torch.tanh")
        if "knob" in self.uses:
            blocks.append("\n".join([
                "def _mix_scaled(self, t):", "    return t * self.gain", "", "",
                "def _mix_shifted(self, t):", "    return torch.tanh(t) + self.gain", "", "",
                "class Knob:", "    def __init__(self, phase):", "        self.act = ACTS[phase % 3]",
                "        self.gain = GAINS[phase % 3]", "", "    def mix(self, t):",
                "        return _mix_scaled(self, t)", "", "    @property", "    def k(self):", "        return 1"]))
        if "knob_class" in self.uses:
            rebind += ["Knob.mix = (_mix_scaled, _mix_shifted)[phase % 2]",
                       "Knob.k = property(lambda self: phase % 3 + 1)"]
        if "dial" in self.uses:
            blocks.append("dial = Knob(0)")
            rebind += ["dial.act = ACTS[(phase + 1) % 3]", "dial.gain = GAINS[(phase + 2) % 3]"]
        if "gate" in self.uses:
            blocks.append("\n".join([
                "class Gate(torch.nn.Module):", "    def __init__(self):", "        super().__init__()",
                "        self.act = torch.relu", "        self.gain = 1.0", "", "    def forward(self, a):",
                "        return self.act(a) * self.gain", "", "", "gate = Gate()"]))
            rebind += ["gate.act = ACTS[(phase + 2) % 3]", "gate.gain = GAINS[phase % 3]"]
        if "stack" in self.uses:
            blocks.append("\n".join([
                "class Stack(torch.nn.Module):", "    def __init__(self):", "        super().__init__()",
                f"        self.layers = torch.nn.ModuleList([torch.nn.Linear({width}, {width})])", "",
                "    def forward(self, a):", "        for layer in self.layers:",
                "            a = torch.tanh(layer(a))", "        return a", "", "",
                "stack = Stack()", f"SPARE = [torch.nn.Linear({width}, {width}) for _ in range(2)]"]))
            rebind += ["while stack.layers.__len__() < 1 + phase % 3:",
                       "    stack.layers.append(SPARE[stack.layers.__len__() - 1])",
                       "while stack.layers.__len__() > 1 + phase % 3:", "    del stack.layers[-1]"]
        if "shadow" in self.uses:
            blocks.append("def _short_len(s):\n    return max(builtins.len(s) - 1, 0)")
            on = "phase % 2 == 1" if self.shadow_on_odd else "phase % 2 == 0"
            rebind += [f"if {on}:", "    globals()['len'] = _short_len", "else:", "    globals().pop('len', None)"]
        if not blocks:
            return None
        if rebind:
            header = ["def rebind(phase):"] + ([f"    global {', '.join(names)}"] if names else [])
            blocks.append("\n".join(header + [f"    {line}" for line in rebind]))
        return "\n\n\n".join(blocks)


def _sound(g: GenState) -> SoundContext | None:
    return getattr(g.shared, "sound", None)


def sound_params(rng: random.Random, features: frozenset, row: tuple, sound: SoundContext) -> list[Param]:
    """Parameters of `f` whose values change with the phase (Note [Rebinding between calls])."""
    extra = []
    if "rebind_arg" in features:
        if rng.random() < 0.7:
            extra.append(Param("act", FnArgType()))
            sound.use("fn_arg")
        if rng.random() < 0.4:
            extra.append(Param("lib", LibArgType()))
            sound.use("lib")
    if features & {"rebind_attr", "rebind_class", "attr_probe"} and rng.random() < 0.5:
        extra.append(Param("knob", KnobType()))
        sound.use("knob")
    if "view_offsets" in features and rng.random() < 0.6:
        extra += [Param("va", ViewType(row, INPUT_MAG, 0)), Param("vb", ViewType(row, INPUT_MAG, 1))]
    if "alias_args" in features and rng.random() < 0.6:
        extra += [Param("la", AliasListType(0)), Param("lb", AliasListType(1))]
    if "set_args" in features and rng.random() < 0.7:
        extra.append(Param("sa", SetArgType()))
    return extra


SOUND_INPUT_TYPES = (FnArgType, LibArgType, KnobType, AliasListType, ViewType, SetArgType)


def sound_input(kind, namespace: dict, phase: int, generator, shared: dict):
    """One argument of a SOUND_INPUT_TYPES type for a call of `phase`; `shared` holds what two arguments of the
    same call share (the views' base tensor, the aliased list)."""
    if isinstance(kind, FnArgType):
        return namespace["ACTS"][phase % 3]
    if isinstance(kind, LibArgType):
        return torch if phase % 2 == 0 else namespace["TanhLib"]
    if isinstance(kind, KnobType):
        return namespace["Knob"](phase)
    if isinstance(kind, SetArgType):
        return set(SET_ARGS[phase % 3])
    if isinstance(kind, AliasListType):
        if "list" not in shared or phase % 2 == 0:
            shared["list"] = [1, 2]
        return shared["list"]
    numel = progen._numel(kind.shape)
    if "base" not in shared:
        shared["base"] = torch.randn(2 * numel + 1, generator=generator)
    offset = (0, 1 + numel)[kind.slot] if phase % 3 == 0 else (1, 0)[kind.slot] if phase % 3 == 1 else 0
    return shared["base"][offset:offset + numel].view(kind.shape)


# Small pieces


def _note(g: GenState, what: str, as_int: str, kind: IntType) -> None:
    """Record the expression `what` in a compared place, or else keep `as_int` (of type `kind`) in a new int."""
    if not (_sinks(g) and g.rng.random() < 0.6 and _record(g, what)):
        assign(g, "k", Expr(as_int, kind))


def _operand(g: GenState) -> Expr:
    """A bounded tensor expression over the program's tensors."""
    return progen._bounded(shaped_expr(g, leaf(g).type.shape, 1))


def _const(g: GenState) -> int:
    return g.rng.randint(0, 3)


# Rebinding between calls


def _apply_helper(g: GenState, fn: str, obj: str | None = None) -> str:
    """A module-level helper `applyN(t)` or `applyN(o, t)` (with `obj`) that applies `fn`, a global or an attribute
    of `o`, read when the helper runs."""
    name = g.fresh("apply")
    params = "t" if obj is None else "o, t"
    g.shared.helper_sources.append(f"def {name}({params}):\n    return {fn}(t) * 0.5 + t * 0.5")
    return name if obj is None else f"{name}({obj}, "


@statement("rebind_global", 1.5)
def _rebind_global(g: GenState) -> bool:
    sound = _sound(g)
    if sound is None:
        return False
    sound.use("act_global")
    e, rng = _operand(g), g.rng
    choice = rng.random()
    if choice < 0.15 and g.can_nest():
        return progen._conditional(g, rng.choice(["ACT is torch.relu", "ACT is not torch.tanh"]))
    if choice < 0.35 and g.helper_depth == 0:
        assign(g, "t", Expr(f"{_apply_helper(g, 'ACT')}({e.code})", e.type))
        return True
    assign(g, "t", Expr(f"ACT({e.code})", e.type))
    return True


@statement("rebind_arg", 1.5)
def _rebind_arg(g: GenState) -> bool:
    options = [f"{n}({{}})" for n, _ in g.visible(FnArgType)] + [f"{n}.relu({{}})" for n, _ in g.visible(LibArgType)]
    if not options:
        return False
    e, rng = _operand(g), g.rng
    if rng.random() < 0.15 and g.can_nest() and g.visible(FnArgType):
        return progen._conditional(g, f"{g.visible(FnArgType)[0][0]} is torch.tanh")
    assign(g, "t", Expr(rng.choice(options).format(e.code), e.type))
    return True


def _knobs(g: GenState) -> list[str]:
    """Knob instances f can read: the argument, the module-level `dial` (added on first use)."""
    sound = _sound(g)
    knobs = [n for n, _ in g.visible(KnobType)]
    if sound is not None and (not knobs or g.rng.random() < 0.5):
        knobs.append("dial")
    return knobs


@statement("rebind_attr", 1.5)
def _rebind_attr(g: GenState) -> bool:
    sound = _sound(g)
    if sound is None:
        return False
    rng = g.rng
    obj = rng.choice(_knobs(g) + ["gate"])
    sound.use(obj if obj in ("dial", "gate") else "knob")
    e = _operand(g)
    choice = rng.random()
    if choice < 0.15 and g.can_nest():
        return progen._conditional(g, rng.choice([f"{obj}.gain > 0", f"{obj}.act is torch.relu"]))
    forms = [f"{obj}.act({e.code})", f"{e.wrapped()} * {obj}.gain"]
    if obj == "gate":
        forms.append(f"gate({e.code})")
    if choice < 0.3 and g.helper_depth == 0:
        forms = [f"{_apply_helper(g, 'o.act', obj)}{e.code})"]
    assign(g, "t", Expr(rng.choice(forms), e.type, False))
    return True


@statement("rebind_class", 1.2)
def _rebind_class(g: GenState) -> bool:
    sound = _sound(g)
    if sound is None:
        return False
    sound.use("knob_class")
    rng = g.rng
    obj = rng.choice(_knobs(g) + [f"Knob({rng.randint(0, 2)})"])
    if obj == "dial":
        sound.use("dial")
    e = _operand(g)
    choice = rng.random()
    if choice < 0.4:
        assign(g, "t", Expr(f"{obj}.mix({e.code})", TensorType(e.type.shape, max(e.type.mag, 2.0))))
    elif choice < 0.7:
        assign(g, "k", Expr(f"{obj}.k", IntType(1, 3)))
    else:
        assign(g, "t", Expr(f"{e.wrapped()} * {obj}.k", TensorType(e.type.shape, 3 * e.type.mag), False))
    return True


def _sized(g: GenState) -> list[str]:
    """Objects `len` applies to: sequences, lists and dicts of the program, tensors of rank >= 1."""
    names = [n for n, _ in g.visible((SeqType, LogType, AliasListType, DictType, StatsType))]
    return names + [n for n, k in g.visible(TensorType) if k.shape]


@statement("shadow_builtin", 1.2)
def _shadow_builtin(g: GenState) -> bool:
    sound = _sound(g)
    sized = _sized(g)
    if sound is None or not sized:
        return False
    if "shadow" not in sound.uses:
        sound.shadow_on_odd = g.rng.random() < 0.7
    sound.use("shadow")
    obj = g.rng.choice(sized)
    _note(g, f"len({obj})", f"min(len({obj}), 4)", IntType(0, 4))
    return True


@statement("module_list", 1.2)
def _module_list(g: GenState) -> bool:
    sound = _sound(g)
    if sound is None:
        return False
    rng = g.rng
    fitting = [(n, k) for n, k in g.visible(TensorType) if k.shape and k.shape[-1] == sound.row[-1]]
    if not fitting:
        return False
    sound.use("stack")
    name, kind = rng.choice(fitting)
    choice = rng.random()
    if choice < 0.2:
        assign(g, "k", Expr("len(stack.layers)", IntType(0, 3)))
    elif choice < 0.5 and g.can_nest(3):
        target, layer = g.fresh("t"), g.fresh("layer")
        g.emit(f"{target} = {name}")
        with g.block(f"for {layer} in stack.layers:"):
            g.emit(f"{target} = torch.tanh({layer}({target}))")
        g.define(target, TensorType(kind.shape, max(kind.mag, 1.0)))
    else:
        assign(g, "t", Expr(f"stack({name})", TensorType(kind.shape, 1.0)))
    return True


@statement("view_offsets", 1.5)
def _view_offsets(g: GenState) -> bool:
    views = [n for n, _ in g.visible(ViewType)]
    if len(views) < 2:
        return False
    rng = g.rng
    v, w = rng.sample(views, 2)
    choice = rng.random()
    if choice < 0.35:
        _note(g, f"{v}.storage_offset()", f"{v}.storage_offset() % 3", IntType(0, 2))
        return True
    if choice < 0.45:
        _note(g, f"{v}.storage_offset() - {w}.storage_offset()",
              f"int({v}.untyped_storage().data_ptr() == {w}.untyped_storage().data_ptr())", IntType(0, 1))
        return True
    kind = g.visible(ViewType)[0][1]
    e = shaped_expr(g, kind.shape, 1)
    g.emit(rng.choice([f"{v}.mul_(0.5)", f"{v}.copy_(torch.tanh({e.code}))", f"{v}.clamp_(-1.0, 1.0)",
                       f"{v}.neg_()", f"{v}[0] = {w}[-1] * 0.5" if kind.shape else f"{v}.mul_(-1.0)"]))
    if rng.random() < 0.5:
        assign(g, "t", Expr(f"{w} * 1.0", TensorType(kind.shape, INPUT_MAG), False))
    return True


@statement("alias_args", 1.5)
def _alias_args(g: GenState) -> bool:
    lists = [n for n, _ in g.visible(AliasListType)]
    if not lists:
        return False
    rng = g.rng
    a, b = rng.choice(lists), rng.choice(lists)
    c, d = _const(g), _const(g)
    g.emit(rng.choice([f"{a}.append({c})", f"{a}.extend([{c}, {d}])", f"{a} += [{c}]", f"{a}.insert(0, {c})",
                       f"if {a}: {a}[0] = {c}", f"if {a}: {a}[-1] = {c}", f"if {a}: {a}.pop()",
                       f"if {a}: del {a}[0]", f"{a}.reverse()"]))
    choice = rng.random()
    if choice < 0.3:
        assign(g, "k", Expr(f"{b}[-1] if {b} else 0", IntType(0, 3), False))
    elif choice < 0.5:
        assign(g, "k", Expr(f"sum({b}) % 4", IntType(0, 3), False))
    elif choice < 0.8:
        _note(g, rng.choice([f"tuple({b})", f"{a} is {b}", f"{a} == {b}"]), f"min(len({b}), 5)", IntType(0, 5))
    return True


# Mutation observed inside one call


def _int_dict(g: GenState) -> tuple[str, str, int]:
    """A new dict literal of int values in [1, 3] and keys 'a', 'b', ...: (source, name, size)."""
    name, size = g.fresh("md"), g.rng.randint(2, 4)
    items = ", ".join(f"{k!r}: {g.rng.randint(1, 3)}" for k in "abcd"[:size])
    return f"{name} = {{{items}}}", name, size


def _dict_iteration(g: GenState, key: str) -> tuple[str, str, str, int]:
    """A dict to iterate, a condition on `key` and a change of the dict: (name, condition, change, size)."""
    rng = g.rng
    tensor_dicts = [(n, k) for n, k in g.visible(DictType) if k.items]
    if tensor_dicts and rng.random() < 0.3:
        source, kind = rng.choice(tensor_dicts)
        name = g.fresh("md")
        g.emit(f"{name} = dict({source})")
        cond = rng.choice([f"{name}[{key}].sum() > 0", f"{key} != {kind.items[0][0]!r}", "True"])
        change = rng.choice([f"del {name}[{key}]", f"{name}[{key} + '2'] = {name}[{key}] * 0.5",
                             f"{name}.pop({key})"])
        return name, cond, change, len(kind.items)
    line, name, size = _int_dict(g)
    g.emit(line)
    cond = rng.choice([f"{name}[{key}] > {rng.randint(0, 3)}", f"{key} == 'b'", "True"])
    change = rng.choice([f"del {name}[{key}]", f"{name}[{key} + '2'] = 0", f"{name}.pop({key})",
                         f"{name}.update({{{key} + 'x': 1}})", f"{name}.clear()", f"{name}[{key}] += 1"])
    return name, cond, change, size


@statement("iter_mutation", 1.5)
def _iter_mutation(g: GenState) -> bool:
    """A loop over a dict, set or list whose body changes it: dicts and sets raise RuntimeError at the next step
    (caught, or leaving f), lists legally grow or shrink."""
    if not g.can_nest(8):
        return False
    rng = g.rng
    key = g.fresh("mk")
    choice = rng.random()
    stats = [n for n, _ in g.visible(StatsType)]
    if choice < 0.1 and stats:
        # an input dict: keys of the program's own are inserted (its 'calls' key stays)
        name, cond, change, after = stats[0], "True", f"{stats[0]}[{key} + '_'] = 1", None
        guarded = True
    elif choice < 0.5:
        name, cond, change, size = _dict_iteration(g, key)
        after, guarded = (f"tuple({name})", f"len({name})", IntType(0, size + 1)), rng.random() < 0.85
    elif choice < 0.7:
        name = g.fresh("ms")
        g.emit(f"{name} = {{{', '.join(str(v) for v in rng.sample(range(1, 6), rng.randint(2, 4)))}}}")
        cond = rng.choice([f"{key} > {rng.randint(0, 4)}", "True", f"{key} % 2 == 0"])
        change = rng.choice([f"{name}.add({key} + 10)", f"{name}.discard({key})", f"{name}.remove({key})",
                             f"{name}.add({key})"])
        after, guarded = (f"tuple(sorted({name}))", f"len({name})", IntType(0, 5)), rng.random() < 0.85
    else:
        logs = [n for n, _ in g.visible(LogType)]
        name = logs[0] if logs and rng.random() < 0.4 else g.fresh("ml")
        if name not in logs:
            g.emit(f"{name} = [{', '.join(str(rng.randint(1, 2)) for _ in range(rng.randint(1, 3)))}]")
        cond = rng.choice([f"len({name}) < {rng.randint(3, 6)}"] + ([] if name in logs else [f"{key} == 1"]))
        change = f"{name}.append(1)" if cond.startswith("len") else f"{name}.remove({key})"
        after, guarded = (f"tuple({name})", f"min(len({name}), 8)", IntType(0, 8)), False  # legal: nothing raised
        # map/filter/reversed read the list as it changes too (reversed from an index at the end)
        iterated = rng.choice([name, name, f"map(int, {name})", f"filter(None, {name})", f"reversed({name})"])
    if guarded:
        with g.block("try:"):
            _emit_loop(g, key, name, cond, change)
        with g.block("except RuntimeError as err:"):
            _note(g, "str(err)", "int('size' in str(err))", IntType(0, 1))
    else:
        # a dict's or set's RuntimeError leaves f (is_intended accepts it)
        _emit_loop(g, key, iterated if choice >= 0.7 else name, cond, change)
    if after:
        _note(g, *after)
    return True


def _emit_loop(g: GenState, key: str, name: str, cond: str, change: str) -> None:
    with g.block(f"for {key} in {name}:"):
        with g.block(f"if {cond}:"):
            g.emit(change)


@statement("dict_views", 1.2)
def _dict_views(g: GenState) -> bool:
    rng = g.rng
    view = g.fresh("view")
    new = repr(g.fresh("new"))
    stats = [n for n, _ in g.visible(StatsType)]
    if stats and rng.random() < 0.3:
        name, size = stats[0], 6
        deletable = None
    else:
        line, name, size = _int_dict(g)
        g.emit(line)
        deletable = rng.choice("ab")
    method = rng.choice(["keys", "items", "values"])
    g.emit(f"{view} = {name}.{method}()")
    g.emit(f"{name}[{new}] = {_const(g)}")
    if deletable and rng.random() < 0.5:
        g.emit(f"del {name}[{deletable!r}]")
    probes = {"keys": [f"{new} in {view}", f"tuple({view})"],
              "items": [f"({new}, {name}[{new}]) in {view}", f"tuple({view})"],
              "values": [f"tuple({view})" if deletable else f"len(list({view}))"]}[method]
    if deletable is None and method != "keys":
        probes = [f"len({view})"]  # an input dict's values may be tensors
    _note(g, rng.choice(probes), f"len({view})", IntType(0, size + 1))
    return True


_CHAIN_INNER = {"ValueError": "raise ValueError('fuzz: inner')", "KeyError": "{}['fuzz: missing']",
                "IndexError": "[0][3]"}
_CHAIN_PROBES = [("type({e}.__context__).__name__", "int({e}.__context__ is None)"),
                 ("{e}.__cause__ is None", "int({e}.__cause__ is None)"),
                 ("{e}.__suppress_context__", "int({e}.__suppress_context__)"),
                 ("repr({e}.__context__)", "int(isinstance({e}.__context__, LookupError))"),
                 ("type({e}.__cause__).__name__", "int(isinstance({e}.__cause__, ValueError))")]


@statement("exc_chain", 1.5)
def _exc_chain(g: GenState) -> bool:
    if not g.can_nest(9):
        return False
    rng = g.rng
    inner_type = rng.choice(list(_CHAIN_INNER))
    inner = _CHAIN_INNER[inner_type]
    outer = rng.choice(["KeyError", "IndexError", "RuntimeError"])
    err, caught = g.fresh("ce"), g.fresh("ce")
    form = rng.choice(["except", "except", "finally", "explicit"])
    escape = rng.random() < 0.1
    cond = progen._int_cond(g) if rng.random() < 0.4 else None
    if form == "explicit":
        g.emit(f"{err} = {outer}('fuzz: made')")
        g.emit(f"{err}.__context__ = {rng.choice(['TypeError', 'ValueError'])}('fuzz: set')")
        if rng.random() < 0.3:
            g.emit(f"{err}.__cause__ = ValueError('fuzz: cause')")
        raise_line = f"raise {err}"
    with g.block("try:"):
        if form == "explicit":
            g.emit(raise_line)
        else:
            with g.block("try:"):
                if cond:
                    with g.block(f"if {cond}:"):
                        g.emit(inner)
                else:
                    g.emit(inner)
            suffix = rng.choice(["", "", " from None", f" from {err}" if form == "except" else ""])
            header = f"except {inner_type} as {err}:" if form == "except" else "finally:"
            with g.block(header):
                g.emit(f"raise {outer}('fuzz: outer'){suffix}")
    with g.block(f"except {'Exception' if escape else outer} as {caught}:"):
        for probe in rng.sample(_CHAIN_PROBES, rng.randint(1, 2)):
            _note(g, probe[0].format(e=caught), probe[1].format(e=caught), IntType(0, 1))
        if escape:
            g.emit("raise")  # leaves f: the oracle compares the exception and its chain
    return True


_PROBED = ("extra", "tmp", "mark")


@statement("attr_probe", 1.5)
def _attr_probe(g: GenState) -> bool:
    sound = _sound(g)
    rng = g.rng
    objects = [n for n, _ in g.visible((BoxType, KnobType, NetType))]
    if sound is not None:
        objects += ["dial", "gate"]
    if not objects:
        return False
    obj = rng.choice(objects)
    if obj in ("dial", "gate"):
        sound.use(obj)
    name, c = rng.choice(_PROBED), _const(g)
    g.emit(rng.choice([f"setattr({obj}, {name!r}, {c})", f"{obj}.{name} = {c}",
                       f"setattr({obj}, {name!r}, {c}); delattr({obj}, {name!r})",
                       f"{obj}.{name} = {c}; del {obj}.{name}",
                       f"if hasattr({obj}, {name!r}): delattr({obj}, {name!r})"]))
    for _ in range(rng.randint(1, 2)):
        probe = rng.choice(_PROBED) if rng.random() < 0.3 else name
        form = rng.random()
        if form < 0.4:
            _note(g, f"hasattr({obj}, {probe!r})", f"int(hasattr({obj}, {probe!r}))", IntType(0, 1))
        elif form < 0.8:
            assign(g, "k", Expr(f"getattr({obj}, {probe!r}, 0)", IntType(0, 3)))
        else:
            _note(g, f"getattr({obj}, {probe!r}, None)", f"int({probe!r} in vars({obj}))", IntType(0, 1))
    return True



#: members the set operations use: they collide with the arguments' members in an 8-slot table
_SET_MEMBERS = (1, 2, 9, 17, 25, 33, 41)


def _set_literal(g: GenState) -> str:
    members = g.rng.sample(_SET_MEMBERS, g.rng.randint(1, 3))
    return "{" + ", ".join(map(str, members)) + "}"


def _set_change(g: GenState, name: str, passed_in: bool) -> str:
    """A statement that changes the set `name` by one of CPython's set operations."""
    rng = g.rng
    c, lit = rng.choice(_SET_MEMBERS), _set_literal(g)
    forms = [f"{name}.add({c})", f"{name}.discard({c})", f"{name} |= {lit}", f"{name} -= {lit}",
             f"{name} &= {lit} | {name}", f"{name} ^= {lit}", f"{name}.update([{c}, {rng.choice(_SET_MEMBERS)}])",
             f"{name}.difference_update({lit})", f"{name}.symmetric_difference_update([{c}])",
             f"{name}.intersection_update({name} | {lit})", f"if {c} in {name}: {name}.remove({c})"]
    if rng.random() < 0.1:
        forms.append(f"{name}.clear()")
    if not passed_in or rng.random() < 0.15:
        forms.append(f"if {name}: {name}.pop()")  # a set passed in: a break (which member CPython takes)
    return rng.choice(forms)


@statement("set_args", 1.5)
def _set_args(g: GenState) -> bool:
    """A set passed in (written back in the order of its operations) or made inside (iterated and popped in
    CPython's order) changes, then its size, members and order are observed."""
    rng = g.rng
    passed = [n for n, _ in g.visible(SetArgType)]
    if passed and rng.random() < 0.6:
        name = rng.choice(passed)
    else:
        name = g.fresh("ss")
        start = rng.choice([_set_literal(g), "set()", f"set({list(rng.sample(_SET_MEMBERS, 3))})",
                            f"{{v for v in {tuple(rng.sample(_SET_MEMBERS, 4))} if v != {rng.choice(_SET_MEMBERS)}}}"]
                           + ([f"set({rng.choice(passed)})"] if passed else []))
        g.emit(f"{name} = {start}")
    for _ in range(rng.randint(1, 3)):
        g.emit(_set_change(g, name, name in passed))
    choice = rng.random()
    if choice < 0.35:
        _note(g, f"tuple({name})", f"min(len({name}), 5)", IntType(0, 5))  # the order (a break for an argument)
    elif choice < 0.6:
        _note(g, f"tuple(sorted({name}))", f"len({name}) % 4", IntType(0, 3))
    elif choice < 0.8:
        assign(g, "k", Expr(f"int({rng.choice(_SET_MEMBERS)} in {name})", IntType(0, 1)))
    else:
        assign(g, "k", Expr(f"min(len({name}), 4)", IntType(0, 4)))
    return True
