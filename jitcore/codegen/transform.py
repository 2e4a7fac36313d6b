"""The code that runs a captured frame: load the graph's inputs, call the compiled graph, rebuild the result.

`build_entry(...)` writes one Python function as source text, with the frame's parameter names, and execs it once.
Sources emit the expressions that reload inputs; values emit the expressions that rebuild outputs. Keeping it as
source keeps it readable (`entry.source`) and costs one Python frame per call.
"""
from __future__ import annotations

import inspect
import keyword
import math
import operator
import sys

import torch

from jitcore.capture.values.base import Value
from jitcore.capture.write_order import METADATA_MUTATIONS, SNAPSHOT_LIMIT
from jitcore.guards.identity import address

__all__ = ["EntryCodegen", "InputSnapshot", "build_entry", "graph_is_pure", "graph_uses_rng", "mutated_inputs",
           "RngState", "safe_names"]

_LITERAL_TYPES = (int, bool, str, bytes, type(None))


def safe_names(params) -> list:
    """Identifiers for a frame's parameter names in generated source (co_varnames may hold any string, such as
    pytest's `@py_assert1`, and must not collide with the `___` names jitcore generates)."""
    out = []
    for index, name in enumerate(params):
        ok = name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("___")
        out.append(name if ok else f"___arg{index}")
    return out


class EntryCodegen:
    """Names and constants of one generated entry function; the `codegen` that sources and values emit into."""

    def __init__(self, params: tuple, fn_globals: dict, builtins: dict):
        self.params = params
        #: parameter name -> the identifier generated code uses for it
        self.param_names = dict(zip(params, safe_names(params)))
        self.namespace: dict = {"___G": fn_globals, "___B": builtins}
        self._constants: dict = {}
        self._memo: dict = {}
        self._temp = 0
        self.outputs: dict = {}
        #: id(object made at capture time) -> (object, the value the entry builds in its place)
        self.standins: dict = {}

    # -- names for sources ------------------------------------------------------------------------------------
    def local(self, name: str) -> str:
        return self.param_names[name]

    def globals_name(self) -> str:
        return "___G"

    def globals_for(self, fn_globals: dict) -> str:
        """The expression for a globals dict: the frame's own, or another module's held as a constant."""
        return "___G" if fn_globals is self.namespace["___G"] else self.constant_object(fn_globals, "globals")

    def builtins_name(self) -> str:
        return "___B"

    def cells_name(self) -> str:
        return "___cells"

    def module_globals(self, module: str) -> str:
        return self.constant_object(vars(sys.modules[module]), f"mod_{module}")

    # -- constants --------------------------------------------------------------------------------------------
    def constant(self, value) -> str:
        if type(value) in _LITERAL_TYPES or (type(value) is float and math.isfinite(value)):
            return repr(value)
        if type(value) is tuple and all(type(v) in _LITERAL_TYPES for v in value):
            return repr(value)
        return self.constant_object(value, "k")

    def constant_object(self, value, hint: str) -> str:
        standin = self.standins.get(address(value))
        if standin is not None and standin[0] is value:
            # Note [Classes made inside] (capture/values/class_statement.py): made again by every call
            return self.load(standin[1])
        key = id(value)
        name = self._constants.get(key)
        if name is None:
            safe = "".join(ch if ch.isalnum() else "_" for ch in hint)
            name = f"___{safe}{len(self._constants)}"
            self._constants[key] = name
            self.namespace[name] = value
        return name

    # -- values -----------------------------------------------------------------------------------------------
    def bind(self, value: Value, expr: str) -> str:
        """Build `value` as `expr` here: every later load of it is this object (a cell that a class statement's
        type() call fills, made before the functions over it)."""
        name = f"___t{self._temp}"
        self._temp += 1
        self._memo[id(value)] = name
        return f"({name} := {expr})"

    def load(self, value: Value) -> str:
        """An expression for value; a mutable container used twice is built once (identity is preserved).

        A value read from a source (and not replaced) is that same object: it is reloaded from the source.
        """
        key = id(value)
        if key in self._memo:
            return self._memo[key]
        if value.source is not None and not value.is_tensor():
            return value.source.emit(self)
        expr = value.reconstruct(self)
        if value.needs_identity and value.source is None:
            name = f"___t{self._temp}"
            self._temp += 1
            self._memo[key] = name
            return f"({name} := {expr})"
        return expr

    def tensor_output(self, tensor_value) -> str:
        if tensor_value.node.op == "placeholder":
            return tensor_value.source.emit(self)
        return f"___out[{self.outputs[id(tensor_value.node)]}]"

    def build_typed_tuple(self, tuple_type, items_expr: str) -> str:
        name = self.constant_object(tuple_type, "type")
        if hasattr(tuple_type, "_fields"):
            # Note [Rebuilding a namedtuple]: the instance is made as the class's own __new__ makes it, without
            # calling that __new__ again (it ran while tracing; under JITCORE=1 it may be this very entry)
            return f"{self.constant_object(tuple.__new__, 'tuple_new')}({name}, {items_expr})"
        return f"{name}({items_expr})"

    def build_typed_dict(self, dict_type, body: str) -> str:
        return f"{self.constant_object(dict_type, 'type')}({{{body}}})"


#: where an entry's namespace holds (its source lines, the positions of its breaking instruction in the user's
#: code) for tracebacks (Note [Tracebacks through compiled code] in runtime/tracebacks.py)
ENTRY_INFO = "___entry_info"


def build_entry(captured, compiled_graph, params: tuple, fn_globals: dict, builtins: dict, name: str,
                steps=None, pinned=None, on_fault=None, on_raise=None):
    """The entry function `(*params, ___cells) -> result` for one cache entry.

    For a frame that stopped at a break point, `steps` (codegen/steps.py) turns the break into Python: rebuild
    the stack and live locals, run the breaking instruction natively where it can be written as Python, and
    return what the resume function computes.

    `on_raise(exc)`: what the entry returns when the compiled graph raises (the runtime's FALLTHROUGH: the frame
    runs natively from its start). Used only where that is sound, see Note [A graph that raises].
    """
    cg = EntryCodegen(params, fn_globals, builtins)
    cg.standins = captured.ctx.standins
    lines = []
    if captured.break_point is not None:
        lines.extend("    " + line for line in steps.prelude(cg))
    if compiled_graph is not None:
        cg.namespace["___graph"] = compiled_graph
        cg.outputs = {id(tv.node): i for i, tv in enumerate(captured.outputs)}
        # inputs the guards pin by identity (module parameters and buffers) are passed as the objects themselves
        pinned = pinned or {}
        loads = [cg.constant_object(pinned[source], "param") if source in pinned else source.emit(cg)
                 for source in captured.input_sources]
        inputs = ", ".join(loads)
        mutated = [] if graph_is_pure(captured.gm) else mutated_inputs(captured.gm)
        if mutated and any(_requires_grad(pinned.get(captured.input_sources[i])) for i in mutated):
            mutated = None  # Note [A pinned input that requires grad]
        sets_grad, sets_other = _global_state_nodes(captured.gm)
        if sets_grad:
            # a grad-mode region left by the exception: Python's `with` puts the mode back on its way out
            cg.namespace["___is_grad_enabled"] = torch.is_grad_enabled
            cg.namespace["___set_grad_enabled"] = torch._C._set_grad_enabled
            lines.append("    ___grad = ___is_grad_enabled()")
        if on_raise is not None and mutated is not None and not sets_other:
            cg.namespace["___on_raise"] = on_raise
            rng = graph_uses_rng(captured.gm)
            if mutated:
                cg.namespace["___InputSnapshot"] = InputSnapshot
                lines.append(f"    ___snap = ___InputSnapshot(({''.join(loads[i] + ', ' for i in mutated)}))")
            if rng:
                cg.namespace["___RngState"] = RngState
                lines.append("    ___rng = ___RngState()")
            lines.append("    try:")
            lines.append(f"        ___out = ___graph({inputs})")
            lines.append("    except Exception as ___e:")
            if sets_grad:
                lines.append("        ___set_grad_enabled(___grad)")
            if mutated:
                lines.append("        if not ___snap.restore():")
                lines.append("            raise")
            if rng:
                lines.append("        ___rng.restore()")
            lines.append("        return ___on_raise(___e)")
        elif sets_grad:
            lines.append("    try:")
            lines.append(f"        ___out = ___graph({inputs})")
            lines.append("    except BaseException:")
            lines.append("        ___set_grad_enabled(___grad)")
            lines.append("        raise")
        else:
            lines.append(f"    ___out = ___graph({inputs})")
    side_effects = captured.ctx.side_effects

    def replay() -> list:
        # written after what runs before it: a made object both rebuilt and replayed is bound (`(___t0 := ...)`)
        # where the entry first builds it, which must come first in the text as well
        return side_effects.emit(cg) if side_effects else []

    if captured.break_point is None:
        rebuild = cg.load(captured.result)
        replay = replay()
        if on_fault is not None and not replay and graph_is_pure(captured.gm):
            # rebuilding the result is jitcore's work: a fault there runs the frame natively instead, which is
            # safe because nothing observable has happened yet (the graph mutates no input)
            cg.namespace["___on_fault"] = on_fault
            lines.append("    try:")
            lines.append(f"        return {rebuild}")
            lines.append("    except Exception as ___e:")
            lines.append("        return ___on_fault(___e)")
        elif replay:
            # the result is computed before any write-back, which may change what its sources read
            lines.append(f"    ___result = {rebuild}")
            lines.extend(f"    {line}" for line in replay)
            lines.append("    return ___result")
        else:
            lines.append(f"    return {rebuild}")
    else:
        lines.extend("    " + line for line in steps.emit(cg, captured.break_point, replay))
    signature = ", ".join([*cg.param_names.values(), "___cells"])
    source = f"def ___entry_{_ident(name)}({signature}):\n" + "\n".join(lines) + "\n"
    inst = captured.break_point.inst if captured.break_point is not None else None
    positions = getattr(inst, "positions", None)
    cg.namespace[ENTRY_INFO] = (source.splitlines(),
                                tuple(positions) if positions is not None and positions[0] is not None else None)
    exec(compile(source, f"<jitcore entry for {name}>", "exec"), cg.namespace)
    entry = cg.namespace[f"___entry_{_ident(name)}"]
    entry.source = source
    return entry


# Note [A graph that raises]
# The entry runs the compiled graph before anything else the frame does is made visible: Python side effects
# (list appends, attribute writes, prints at a break) are replayed after it, the breaking instruction and the resume
# function run after it. So when the graph raises, the program has done nothing observable yet except what the
# graph itself did: mutating its tensor inputs in place and drawing from the random number generators. A graph
# that does neither (`graph_is_pure`), with the generators' state put back when it draws (`graph_uses_rng`,
# `RngState`), can be abandoned: the entry returns FALLTHROUGH and the frame runs natively from its start, which
# is exactly Python's behaviour (the side effects before the error happen, the user's `try` sees it, the
# exception is Python's own, with its traceback). A resume function has its own entry: the same rule restarts it
# from its own start, which is where the original frame was. A graph that mutates inputs in place can be abandoned
# too when their values can be put back: the entry copies the inputs it may write (`mutated_inputs`) before the
# call and writes them back when it raised (`InputSnapshot`), unless one requires grad (its autograd history
# cannot be put back), they are large (SNAPSHOT_LIMIT: the copy is paid on every call) or the graph changes an
# input's shape or storage (`resize_`, `set_`, `t_` ...); then the exception reaches the caller as it comes, and
# capture has broken the graph before an op that can raise there (Note [Raising after a write that cannot be
# undone], capture/write_order.py).
# Global state a graph changes for a region (grad mode) is put back first, as the `with` would on its way out;
# a graph with autocast regions is not abandoned (their state cannot be put back from here).

# Note [A pinned input that requires grad]
# An InputSnapshot gives up when an input it would copy requires grad (its autograd history cannot be put back), and
# the graph's error then reaches the caller as it comes. Whether a parameter or buffer the entry passes as itself
# (`pinned`: the module-state batch holds it by identity) requires grad is guarded by that batch, so it cannot
# change between calls of the entry: where one the graph may write requires grad now, the snapshot would give up on
# every call. The entry then takes none (the same behaviour, without copying the input list on every call: a
# ResNet in eval mode with in-place ReLUs counts all its ~100 inputs as possibly written).


def _requires_grad(obj) -> bool:
    return isinstance(obj, torch.Tensor) and obj.requires_grad


def _global_state_nodes(gm) -> tuple:
    """(sets grad mode, changes other global state: autocast) for the graph's nodes run for their effect."""
    grad = other = False
    if gm is None:
        return grad, other
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target is torch._C._set_grad_enabled:
            grad = True
        elif node.target in _OTHER_GLOBAL_STATE:
            other = True
    return grad, other


#: effects on global state that the entry cannot put back when the graph raises (autocast and inference-mode
#: regions: the mode lives in a guard object made inside the graph)
_OTHER_GLOBAL_STATE = (torch.amp.autocast_mode._enter_autocast, torch.amp.autocast_mode._exit_autocast,
                       torch.autograd.grad_mode._enter_inference_mode, torch.autograd.grad_mode._exit_inference_mode)


def graph_is_pure(gm) -> bool:
    """No node of the graph mutates a tensor in place (so running the frame again natively repeats nothing):
    no in-place method or function (`add_`, `setitem`), no `inplace=True`, no `out=`."""
    if gm is None:
        return True
    for node in gm.graph.nodes:
        if node.op not in ("call_function", "call_method", "call_module"):
            continue
        target = node.target
        name = target if isinstance(target, str) else getattr(target, "__name__", "")
        if target is operator.setitem or (name.endswith("_") and not name.endswith("__")):
            return False
        if "out" in node.kwargs or _sets_inplace(node) or _mutates_by_argument(node, name):
            return False
        if node.op == "call_module" and getattr(gm.get_submodule(target), "inplace", False):
            return False
    return True


def _sets_inplace(node) -> bool:
    """`inplace=True` passed by keyword or by position (torch.nn.functional.relu(x, True))."""
    if node.kwargs.get("inplace", False) is not False:
        return True
    if node.op != "call_function" or not any(a is True for a in node.args):
        return False
    try:
        params = list(inspect.signature(node.target).parameters)
    except (TypeError, ValueError):
        return False  # a builtin without a signature: its in-place variants are the ones named with `_`
    return "inplace" in params and params.index("inplace") < len(node.args) and \
        node.args[params.index("inplace")] is not False


#: functions without a trailing underscore that mutate an argument, by (parameter, its index, the value with which
#: they do not): running statistics in training mode, an embedding renormalised to max_norm
_MUTATING_UNLESS = {"batch_norm": ("training", 5, False), "instance_norm": ("use_input_stats", 5, False),
                    "embedding": ("max_norm", 3, None)}
#: the arguments they write, by (name, position)
_WRITTEN_ARGUMENTS = {"batch_norm": (("running_mean", 1), ("running_var", 2)),
                      "instance_norm": (("running_mean", 1), ("running_var", 2)), "embedding": (("weight", 1),)}


def _mutates_by_argument(node, name: str) -> bool:
    rule = _MUTATING_UNLESS.get(name)
    if rule is None or node.op != "call_function":
        return False
    param, index, harmless = rule
    if param in node.kwargs:
        return node.kwargs[param] is not harmless
    if index < len(node.args):
        return node.args[index] is not harmless
    try:
        default = inspect.signature(node.target).parameters[param].default
    except (TypeError, ValueError, KeyError):
        return True
    return default is not harmless


#: in-place operations that change a tensor's metadata or storage, which a copy of its values cannot put back



def mutated_inputs(gm):
    """Indices of the graph inputs an in-place node may write (through any chain of ops: conservative), or None
    when what the graph changes cannot be put back by copying values (metadata, module state)."""
    placeholders = {node: i for i, node in enumerate(n for n in gm.graph.nodes if n.op == "placeholder")}
    written = []
    for node in gm.graph.nodes:
        if node.op == "call_module":
            if not graph_is_pure_module(gm, node):
                return None
            continue
        if node.op not in ("call_function", "call_method"):
            continue
        target = node.target
        name = target if isinstance(target, str) else getattr(target, "__name__", "")
        if name in METADATA_MUTATIONS:
            return None
        if target is operator.setitem or (name.endswith("_") and not name.endswith("__")):
            written.append(node.args[0] if node.args else None)
        elif _mutates_by_argument(node, name):
            args = (node.kwargs[param] if param in node.kwargs else node.args[index] if index < len(node.args)
                    else None for param, index in _WRITTEN_ARGUMENTS[name])
            written.extend(arg for arg in args if arg is not None)  # no running statistics: nothing written
        elif "out" in node.kwargs or _sets_inplace(node):
            written.extend(node.all_input_nodes)
    found, todo, seen = set(), list(written), set()
    while todo:
        node = todo.pop()
        if not isinstance(node, torch.fx.Node) or node.op == "get_attr":
            return None  # a write to something that is not a graph input (a tensor the graph module holds)
        if node in seen:
            continue
        seen.add(node)
        if node in placeholders:
            found.add(placeholders[node])
        todo.extend(node.all_input_nodes)
    return sorted(found)


def graph_is_pure_module(gm, node) -> bool:
    module = gm.get_submodule(node.target)
    return not getattr(module, "inplace", False) and not any(True for _ in module.buffers())



class InputSnapshot:
    """Copies of the graph inputs it may write, taken before the call; `restore()` writes them back after the
    graph raised and says whether that was possible (False: an input requires grad, so its autograd history
    cannot be put back; the inputs hold more than SNAPSHOT_LIMIT elements; copying failed)."""

    __slots__ = ("saved",)

    def __init__(self, tensors):
        tensors = [t for t in tensors if isinstance(t, torch.Tensor)]
        self.saved = None
        if any(t.requires_grad for t in tensors) or sum(t.numel() for t in tensors) > SNAPSHOT_LIMIT:
            return
        try:
            self.saved = [(t, t.clone()) for t in tensors]
        except Exception:
            self.saved = None

    def restore(self) -> bool:
        if self.saved is None or any(t.requires_grad for t, _ in self.saved):
            return False
        try:
            with torch.no_grad():
                for tensor, copy in self.saved:
                    tensor.copy_(copy)
        except Exception:
            return False  # an inference tensor outside inference mode: the graph's error goes on as it came
        return True


#: words in the names of operations that draw from a random number generator
_RNG_WORDS = ("rand", "dropout", "bernoulli", "multinomial", "normal", "poisson", "rrelu", "gumbel", "fractional",
              "exponential", "cauchy", "geometric", "uniform", "sample", "shuffle")


#: dropouts that draw only in training mode: function -> (position, keyword) of that flag. Called with it False
#: (a model in eval mode: BERT's and GPT-2's dropouts) they return their input, drawing nothing
_DRAWS_IF_TRAINING = {torch.nn.functional.dropout: (2, "training"), torch.nn.functional.dropout1d: (2, "training"),
                      torch.nn.functional.dropout2d: (2, "training"), torch.nn.functional.dropout3d: (2, "training"),
                      torch.nn.functional.alpha_dropout: (2, "training"),
                      torch.nn.functional.feature_alpha_dropout: (2, "training"), torch.dropout: (2, "train"),
                      torch.alpha_dropout: (2, "train"), torch.feature_dropout: (2, "train"),
                      torch.feature_alpha_dropout: (2, "train")}


#: ops that draw when their `dropout_p` is not 0 (attention's own dropout): function -> position of dropout_p
_DRAWS_IF_DROPOUT_P = {torch.nn.functional.scaled_dot_product_attention: 4}


def _draws_by_dropout_p(node) -> bool:
    """An op that takes a `dropout_p` (scaled_dot_product_attention, say) called with anything but the constant 0:
    its name says nothing of dropout, its argument does."""
    if "dropout_p" in node.kwargs:
        p = node.kwargs["dropout_p"]
    else:
        try:
            index = _DRAWS_IF_DROPOUT_P.get(node.target)
        except TypeError:  # an unhashable target
            return False
        if index is None or index >= len(node.args):
            return False
        p = node.args[index]
    return not (type(p) in (int, float) and p == 0)


def _not_training(node) -> bool:
    """A dropout called with its training flag the constant False (an omitted flag counts as drawing)."""
    try:
        rule = _DRAWS_IF_TRAINING.get(node.target)
    except TypeError:  # an unhashable target
        return False
    if rule is None:
        return False
    index, keyword = rule
    flag = node.kwargs[keyword] if keyword in node.kwargs else node.args[index] if index < len(node.args) else None
    return flag is False


def graph_uses_rng(gm) -> bool:
    """Some node may draw from a random number generator (by name: conservative, a false positive costs one
    generator-state copy per call of a graph that raises nothing; a dropout outside training draws nothing)."""
    if gm is None:
        return False
    for node in gm.graph.nodes:
        if node.op == "call_function":
            if _not_training(node):
                continue
            if _draws_by_dropout_p(node):
                return True
        if node.op == "call_module":
            name = type(gm.get_submodule(node.target)).__name__
        elif node.op in ("call_function", "call_method"):
            target = node.target
            name = target if isinstance(target, str) else getattr(target, "__name__", "") or repr(target)
        else:
            continue
        if any(word in name.lower() for word in _RNG_WORDS):
            return True
    return False


class RngState:
    """The default generators' state (CPU, and every initialised CUDA device), taken now; `restore()` puts it
    back, so a graph that drew numbers and then raised leaves the generators as it found them."""

    __slots__ = ("cpu", "cuda")

    def __init__(self):
        self.cpu = torch.random.get_rng_state()
        self.cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None

    def restore(self) -> None:
        torch.random.set_rng_state(self.cpu)
        if self.cuda is not None:
            torch.cuda.set_rng_state_all(self.cuda)


def _ident(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name)
