"""What one capture shares across the root frame and every inlined frame: the graph, the guards, wrapped sources.

A `CaptureContext` lives for one capture attempt. Guards are recorded as (source, check) by whoever relies on a
fact; `wrapped` makes a source read twice give the same value (and so one placeholder, one guard).
"""
from __future__ import annotations

import torch

from jitcore.guards import ABSENT, DistinctObjects, FunctionMatch, LengthMatch, NamespaceEntryMatch, SameObject
from jitcore.capture.graph import GraphBuilder
from jitcore.capture.side_effects import SideEffects
from jitcore.capture.sources import ModuleGlobalSource
from jitcore.capture.values.call_rules import RuleAnswers
from jitcore.guards.identity import address

__all__ = ["CaptureContext"]

# Note [Facts between calls]
# An entry is reused for a later call only while every fact its capture relied on still holds. Each kind of fact
# is either guarded where it is relied on, or not relied on:
# - values read from a source: EqualsMatch (wrap); callables, classes, user modules: IdMatch (wrap); torch and the
#   standard library's modules: TypeMatch, what is read from them on its own source; nn modules and functions on a
#   structural path: type and structure (Note [Instances shared by structure], values/module.py);
# - name resolution through classes: guard_class_lookup (the entry where found, absence before it in the MRO);
#   an instance attribute is reloaded through getattr (not relied on); a module's instance dict lacking a name
#   found on its class: InstanceDictAbsent; functions inlined without a source: FunctionMatch (code, defaults);
# - builtins: guard_not_global (the function's globals lack the name) and the builtin by identity;
# - container lengths and keys (realize(), DictKeysMatch), tensor metadata and storage offsets (TensorMatch,
#   StorageOffsetMatch), module state (runtime/guard_batch.py);
# - aliasing between inputs: by_identity in wrap(): one object reached twice is one value (guard_same), distinct
#   mutable objects stay distinct (guard_distinct).
# Trusted (not guarded): torch's and the standard library's own modules do not rebind their globals or shadow
# builtins; builtin types' dicts never change; a module instance's __class__ and class __bases__ are not reassigned.

# Note [Lookups guarded once]
# A capture looks the same names up in the same classes and globals over and over (every `self.config` in every
# layer, every `isinstance` of every call): each lookup's guards are made once per capture. The guards of a
# lookup depend only on the namespaces' contents, which capture never changes (writes to classes and globals are
# side effects replayed by the entry, after the graph), so a repeat would make the same checks, which `guard`
# then drops as duplicates; making them costs a short_repr and a hash each. The first label wins, as it did.

_MAX_INLINE_DEPTH = 48
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement or type(), whose dict can change


class CaptureContext:
    def __init__(self, code, fn_globals, fn_name: str, closure=None):
        self.code = code
        self.globals = fn_globals
        self.builtins = fn_globals.get("__builtins__", __builtins__)
        if not isinstance(self.builtins, dict):
            self.builtins = vars(self.builtins)
        self.fn_name = fn_name
        self.closure = closure or ()
        self.graph = GraphBuilder()
        #: (source, check) in the order facts were relied on
        self.guards: list = []
        self._guard_keys: set = set()
        #: name-resolution facts already guarded (Note [Lookups guarded once]): (address(namespace or class), name,
        #: address(after)) -> the objects those are of, kept alive so that no address is reused meanwhile. Every
        #: identity key below is `address()`, not `id()`: Note [Identity keys without id()] (guards/identity.py)
        self._lookups_guarded: dict = {}
        #: source -> Value, so a source wraps once
        self.wrapped: dict = {}
        #: address -> (object, Value, first source) for mutable objects read from sources: one object reached from two
        #: sources (`f(x, l, l)`) is one value, guarded `b is a`
        self.by_identity: dict = {}
        #: address(closure cell) -> (cell, its RootCell, the source of the cell object or None): one value per cell
        #: (values/cells.root_cell)
        self.root_cells: dict = {}
        #: address(object made at capture time) -> (object, value): Note [Classes made inside]
        #: (values/class_statement.py)
        self.standins: dict = {}
        #: ids of the containers being wrapped right now, so a container that holds itself wraps in finite time
        self.wrapping: set = set()
        #: sources of the distinct mutable objects capture modelled separately, and where their guard sits
        self._distinct: list = []
        self._distinct_at = None
        self.max_inline_depth = _MAX_INLINE_DEPTH
        self._hooks_guarded = False
        self._cleanups: list = []
        self._grad_at_start = torch.is_grad_enabled()
        self.side_effects = SideEffects()
        #: the call rules found for each callable asked about (Note [Call rules found once per capture])
        self.rule_answers = RuleAnswers()
        #: (offset, visit) of the root-frame instruction to stop before (the second attempt of a capture)
        self.stop_at = None
        #: root-frame offset -> times reached, so a break inside an unrolled loop finds its iteration again
        self.visits: dict = {}
        self.count_visits = True
        #: a first attempt may stop at a break its root instruction raised untouched (Note [A break at an
        #: untouched instruction], capture/frame.py)
        self.stop_untouched = False
        #: frames inlined so far (a break that went through one is not untouched)
        self.frames_made = 0
        #: guard paths of ints that are graph inputs rather than constants (automatic dynamic)
        self.dynamic_paths = frozenset()
        #: guard paths of objects captured by type and structure rather than identity, with everything read through
        #: them (Note [Instances shared by structure])
        self.structural_paths = frozenset()
        #: traced exceptions being handled, innermost last (what sys.exc_info() would report)
        self.exc_stack: list = []
        #: for each handler running, the root-frame (offset, visit) its exception came from: a graph break
        #: inside a handler is placed there, since a resume point cannot start inside an except block
        self.handling: list = []
        #: origin of the exception the last unwind jumped to a handler with (PUSH_EXC_INFO records it)
        self.pending_origin = None
        #: generators created while tracing (a suspended one may still have cleanup to run)
        self.generators: list = []
        #: an inference_mode(True) region was entered: tensors made since may be inference tensors, which fake
        #: tensors do not model (values/context.py InferenceModeValue)
        self.entered_inference_mode = False
        #: what torch.compiler.is_compiling() and friends answer in the traced code, and whether the code asked
        #: (Note [is_compiling() when the traced code raises], capture/frame.py)
        self.compiling = True
        self.asked_compiling = False
        #: the TorchFunctionModes entered in the traced code, innermost last (values/function_modes.ModeEntry;
        #: Note [Torch function modes traced])
        self.function_modes: list = []

    def push_cleanup(self, undo) -> None:
        """Remember how to undo a real state switch made while tracing (grad mode, autocast)."""
        self._cleanups.append(undo)

    def pop_cleanup(self) -> None:
        self._cleanups.pop()

    def progress(self) -> tuple:
        """What capture has made so far, by count: graph nodes, guards, side effects, inlined frames, open state
        switches. Unchanged across an instruction that raised a break: the instruction changed none of them."""
        return (self.graph.node_count, len(self.guards), len(self.side_effects), self.frames_made,
                len(self._cleanups), len(self.function_modes))

    def run_cleanups(self) -> None:
        """Undo, innermost first, every switch still open (capture stopped inside a region), and put grad mode
        back as it was when capture started (a traced set_grad_enabled may have changed it for good)."""
        while self._cleanups:
            self._cleanups.pop()()
        torch._C._set_grad_enabled(self._grad_at_start)

    def standin(self, obj, value) -> None:
        """`obj`, made while capturing, stands for `value` (made again by every call): the trace reads its
        functions as the value's, and the entry rebuilds the value wherever it would embed `obj`."""
        self.standins[address(obj)] = (obj, value)

    def standin_value(self, obj):
        found = self.standins.get(address(obj))
        return found[1] if found is not None and found[0] is obj else None

    def guard(self, source, check) -> None:
        key = (source, check)
        if key in self._guard_keys:
            return
        self._guard_keys.add(key)
        self.guards.append((source, check))

    def by_structure(self, source) -> bool:
        """Is the object read from `source` captured by structure (its path, or one it was read through, is
        structural)?"""
        paths = self.structural_paths
        if not paths or source is None:
            return False
        path = source.path
        return any(path[:end] in paths for end in range(1, len(path) + 1))

    def guard_same(self, first, source) -> None:
        """`source` reaches the object first read from `first`: the capture has one value for both."""
        self.guard(source, SameObject(first.path, first.user_name))

    def guard_distinct(self, source) -> None:
        """A mutable object read from `source` is modelled as its own object: it must stay different from every
        other one modelled so (one check over all of them, rewritten in place as more arrive)."""
        earlier = list(self._distinct)
        self._distinct.append(source)
        if not earlier:
            return
        entry = (source, DistinctObjects([s.path for s in earlier], [s.user_name for s in earlier]))
        if self._distinct_at is None:
            self._distinct_at = len(self.guards)
            self.guards.append(entry)
        else:
            self.guards[self._distinct_at] = entry

    def guard_not_global(self, fn_globals: dict, name: str, where: str) -> None:
        """A name resolved to a builtin stays so only while the function's globals do not define it (a module-level
        `len = ...` made later shadows the builtin)."""
        if self._guarded_once(fn_globals, name, None):
            return
        self.guard(None, NamespaceEntryMatch(fn_globals, name, ABSENT, label=f"{where}.{name}", owner=fn_globals))

    def guard_class_lookup(self, cls: type, name: str, after: type | None = None) -> None:
        """What looking `name` up in `cls`'s MRO (past `after`, for super()) found stays so: the entry of the class
        that defines it is the same object, and the classes before it still do not define it (or, when none does,
        still none does). Builtin types cannot change and are not checked. One cheap check per class dict entry
        relied on."""
        if self._guarded_once(cls, name, after):
            return
        mro = cls.__mro__
        if after is not None:
            mro = mro[mro.index(after) + 1:]
        for klass in mro:
            if not klass.__flags__ & _HEAP_TYPE:
                continue
            table = klass.__dict__
            label = f"{klass.__qualname__}.{name}"
            if name in table:
                self.guard(None, NamespaceEntryMatch(table, name, table[name], label=label, owner=klass))
                return
            self.guard(None, NamespaceEntryMatch(table, name, ABSENT, label=label, owner=klass))

    def guard_function(self, fn, body_of) -> None:
        """A function inlined without a source still has the code and defaults it was traced with (FunctionMatch).
        Made once per function per capture, as a lookup's guards are (Note [Lookups guarded once]): the real
        function does not change while capturing (the traced code's writes are replayed after the graph), so a
        second FunctionMatch would be the same check; making one reads `__code__` and `__defaults__`, which are
        audited (Note [Audited reads], guards/function_words.py)."""
        if self._guarded_once(fn, "__code__", None):
            return
        self.guard(None, FunctionMatch(fn, body_of=body_of))

    def _guarded_once(self, owner, name: str, after) -> bool:
        """Whether this lookup's guards were recorded already in this capture (then nothing to do); records it.
        Note [Lookups guarded once]."""
        key = (address(owner), name, address(after))
        seen = self._lookups_guarded.get(key)
        if seen is not None and seen[0] is owner and seen[1] is after:
            return True
        self._lookups_guarded[key] = (owner, after)
        return False

    def guard_global_module_hooks(self) -> None:
        """Global nn.Module hooks apply to every module call; they must stay empty for inlined forwards to be right."""
        if self._hooks_guarded:
            return
        self._hooks_guarded = True
        for name in ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
                     "_global_backward_pre_hooks"):
            self.guard(ModuleGlobalSource("torch.nn.modules.module", name), LengthMatch(0))
