"""Turns a GuardTree into one generated Python check function, and explains a miss check by check.

Imports the standard library and guards.checks, guards.function_words, guards.implied, guards.iterators,
guards.render, guards.tree only; never jitcore or bytecode.
Entry point: compile_tree(tree, params, globals_dict, builtins_dict) -> GuardFunction, whose `check` attribute
is the generated function the dispatcher calls as `check(*args, cells)`.
"""

from __future__ import annotations

import builtins
import heapq
import keyword
import sys

from jitcore.guards.arrays import array_tensor
from jitcore.guards.checks import (Check, CodeMatch, DictKeysMatch, DistinctObjects, EqualsMatch, LengthMatch, Relation,
                                   TypeMatch)
from jitcore.guards.function_words import code_defaults_view, expected_words
from jitcore.guards.implied import UNKNOWN, Implied
from jitcore.guards.render import Namespace, constant_source
from jitcore.guards.iterators import iterator_state, remaining_items
from jitcore.guards.context_vars import current_value
from jitcore.guards.tree import GuardNode, GuardTree, default_user_name, read_step

__all__ = ["GuardFunction", "compile_tree"]

_FUNCTION_NAME = "___guard"
_CELLS = "___cells"
_GLOBALS = "___G"
_BUILTINS = "___B"


class GuardFunction:
    """A compiled guard tree.

    `check(*args, cells)` is the generated function (True on a hit, False otherwise, never raises an
    Exception); `source` is its text; `failures(args, cells)` explains a miss. Calling the GuardFunction itself
    forwards to `check` through one more Python call: the dispatcher should call `check` directly.
    """

    __slots__ = ("check", "source", "tree", "params", "_plan", "_globals_dict", "_builtins_dict")

    def __init__(self, check, source: str, tree: GuardTree, params: tuple[str, ...],
                 plan: list[tuple[GuardNode, Check, str]], globals_dict: dict, builtins_dict: dict) -> None:
        self.check = check
        self.source = source
        self.tree = tree
        self.params = params
        self._plan = plan
        self._globals_dict = globals_dict
        self._builtins_dict = builtins_dict

    def __call__(self, *args) -> bool:
        return self.check(*args)

    def failures(self, args: tuple, cells: tuple | None) -> list[str]:
        """Every failing check as `"{user_name}: {explanation}"`, in the order the generated function runs them.

        Slow path for reports: it evaluates each check on its own, so it also lists failures that the
        generated function never reaches after the first one.
        """
        return [f"{user_name}: {why}" for _, user_name, _, _, why in self.failed_checks(args, cells)]

    def failed_checks(self, args: tuple, cells: tuple | None) -> list[tuple]:
        """Every failing check as `(path, user_name, check, value read, explanation)`, in run order (slow path).

        `value read` is None for root checks and for paths that could not be read. A relation over several paths
        gives the tuple of its paths and the tuple of the values read there.
        """
        read = _Reader(self, args, cells)
        failed = []
        for node, check, user_name in self._plan:
            if type(node) is tuple:  # a relation over several paths
                values = [read(n) for n in node]
                if any(error is not None for _, error in values):
                    continue  # a leaf check on that path already failed
                read_values = tuple(value for value, _ in values)
                why = check.explain(read_values)
                if why is not None:
                    failed.append((tuple(n.path for n in node), user_name, check, read_values, why))
                continue
            if node.parent is None:
                value = None  # a root check reads the global state itself
            else:
                value, error = read(node)
                if error is not None:
                    failed.append((node.path, user_name, check, None,
                                   f"could not be read ({type(error).__name__}: {error})"))
                    continue
            if isinstance(check, Relation):
                others = [read(self.tree.node(path)) for path in check.other_paths]
                if any(error is not None for _, error in others):
                    continue  # the other value's own checks report it
                value = (value, *[other for other, _ in others])
            try:
                why = check.explain(value)
            except Exception as error:  # a hostile __eq__ or __len__ fails the generated check the same way
                why = f"could not be checked ({type(error).__name__}: {error})"
            if why is not None:
                failed.append((node.path, user_name, check, value, why))
                expand = getattr(check, "failed_constants", None)
                if expand is not None:  # a batch names the items that changed, for automatic dynamic
                    failed.extend(expand())
        return failed


def _unreadable(node: GuardNode, value: object, step_kind: str) -> str | None:
    """Why a step of `step_kind` below `node` must not be taken on `value`, or None: its type differs, or (for an
    item) its keys or length differ; the generated function stops at those checks before reading anything below.
    Other failures still let the children be read, since learning (structural entries) compares them."""
    guarding = (TypeMatch, DictKeysMatch, LengthMatch) if step_kind == "item" else (TypeMatch,)
    for check, _, _ in node.checks:
        if isinstance(check, guarding):
            why = check.explain(value)
            if why is not None:
                return f"not read: {why}"
    return None


class _Reader:
    """Reads node values on the slow path, each once; a read that raises is remembered as its exception."""

    def __init__(self, guard: GuardFunction, args: tuple, cells: tuple | None) -> None:
        self._guard = guard
        self._args = args
        self._cells = cells
        self._values: dict[GuardNode, tuple[object, BaseException | None]] = {}

    def __call__(self, node: GuardNode) -> tuple[object, BaseException | None]:
        found = self._values.get(node)
        if found is None:
            found = self._values[node] = self._read(node)
        return found

    def _read(self, node: GuardNode) -> tuple[object, BaseException | None]:
        try:
            if node.parent.parent is not None:
                base, error = self(node.parent)
                if error is not None:
                    return None, error
                mistyped = _unreadable(node.parent, base, node.step[0])
                if mistyped is not None:
                    # the generated function stops at that check and never reads further: an item of an object of
                    # another type may run code (a defaultdict's __missing__ inserts the key), so neither do we
                    return None, TypeError(mistyped)
                return read_step(base, node.step), None
            return self._read_root(node.step), None
        except Exception as error:
            return None, error

    def _read_root(self, step: tuple) -> object:
        kind, key = step
        if kind == "local":
            index = self._guard.params.index(key)
            if index >= len(self._args):
                raise IndexError(f"no argument for parameter {key!r} among the {len(self._args)} passed")
            return self._args[index]
        if kind == "global":
            return self._guard._globals_dict[key]
        if kind == "builtin":
            return self._guard._builtins_dict[key]
        if kind == "module":
            return sys.modules[key]
        if kind == "held":
            return key.obj
        if kind == "cellobj":
            return self._cells[key]
        return self._cells[key].cell_contents


def compile_tree(tree: GuardTree, params: list[str], globals_dict: dict, builtins_dict: dict,
                 examples: tuple | None = None) -> GuardFunction:
    """Generate and compile the check function for `tree`.

    `params` are the guarded function's parameter names in order; the generated function takes them
    positionally, then the closure cells tuple (or None). Raises ValueError if a local path names no parameter.
    `examples`, when given, are live arguments the tree holds for (one per parameter): the tensor checks on
    parameters are then merged into one native check built from them (one C++ call for all the tensors).
    """
    params = tuple(params)
    plan = _schedule(tree)
    ns = Namespace()
    ns["__builtins__"] = builtins  # the real builtins for `type`, `len`; builtins_dict is only for guarded reads
    ns[_GLOBALS] = globals_dict
    ns[_BUILTINS] = builtins_dict
    source = _Codegen(params, ns, examples, tree).function(plan)
    code = compile(source, "<jitcore guard>", "exec")
    # A plain dict, not the Namespace subclass: CPython 3.12 specialises LOAD_GLOBAL only for exact-dict
    # globals; with a subclass every builtin lookup (`type`, `len`) goes through a raised KeyError (~4x slower).
    function_globals = dict(ns)
    exec(code, function_globals)
    return GuardFunction(function_globals[_FUNCTION_NAME], source, tree, params, plan, globals_dict, builtins_dict)


def _schedule(tree: GuardTree) -> list[tuple[GuardNode, Check, str]]:
    """The order checks run in: the checks on the frame's arguments and on torch's global state first, then the
    other root checks, then the rest, then the module-state batch (Note [Batches last]), each part cheapest first
    (ties in insertion order), except that a node's value is read only after every check on its parent has passed
    (a read on a wrong type may raise or run user code).

    Arguments first (Note [Arguments first]): their types, shapes and numbers are what tell one cache entry of a
    frame from another, so a call that misses an entry fails it after a few checks instead of after every module
    and namespace check the entries share. Relations that read arguments only follow them; other relations come
    last. Root checks read no value: nothing under an argument waits for them.
    """
    ready: list[tuple[int, int, int, Check, str, GuardNode]] = []
    remaining: dict[GuardNode, int] = {}

    def is_argument(node: GuardNode) -> bool:
        # an argument, or an item of one (`args[0]`, `kwargs['x']`, a list of tensors): what the call passes
        path = node.path
        return bool(path) and path[0][0] == "local" and all(step[0] in _ITEM_STEPS for step in path[1:])

    def open_node(node: GuardNode) -> None:
        if node in remaining:
            return
        if not node.checks:
            remaining[node] = 0
            for child in node.children.values():
                open_node(child)
            return
        remaining[node] = len(node.checks)
        if node is tree.root:
            # root checks read no value, so nothing below the root waits for them (the batch runs last)
            for child in node.children.values():
                open_node(child)
        for check, user_name, order in node.checks:
            # first the arguments' checks and the global state's (the one root check of cost 0), then the other
            # root checks (module state, namespaces), then the rest
            if is_argument(node) or (node is tree.root and check.cost == 0):
                tier = 0
            elif check.late:
                tier = 3
            else:
                tier = 1 if node is tree.root else 2
            heapq.heappush(ready, (tier, check.cost, order, check, user_name, node))  # `order` is unique: no ties

    for child in tree.root.children.values():
        if child.step[0] == "local":
            open_node(child)
    open_node(tree.root)
    early = [(nodes, check, user_name) for check, nodes, user_name in tree.relations
             if all(is_argument(node) for node in nodes)]
    plan = []
    while ready:
        tier, _, _, check, user_name, node = heapq.heappop(ready)
        if tier and early:
            plan += early
            early = []
        plan.append((node, check, user_name))
        remaining[node] -= 1
        if remaining[node] == 0 and node is not tree.root:
            for child in node.children.values():
                open_node(child)
    plan += early
    # relations read values whose leaf checks all ran: the others come last, as (nodes, check, user_name)
    plan += [(nodes, check, user_name) for check, nodes, user_name in tree.relations
             if not all(is_argument(node) for node in nodes)]
    return plan


_ITEM_STEPS = frozenset({"item", "dictitem"})

# Note [Arguments first]
# Entries of one frame share most of their checks (the modules, namespaces and globals the code reads) and differ
# in what the call passes: a tensor's shape, an int, a type, also inside the containers passed (`args[0]` of a
# `*args` wrapper, `kwargs['x']`). Run in cost order, a miss on an entry (the static
# entry that automatic dynamic leaves in front of the dynamic one, say) ran every shared check before the one
# that fails: a Hugging Face model's ~1,200 checks once per entry tried. The arguments are read without any
# step, so their checks are safe to run before anything else (their items still after the container's own checks,
# as everywhere), and running them first makes a miss cost a few checks. Order does not change what a guard accepts (a conjunction); only how soon a miss returns.


# Note [Batches last]
# The module-state batch checks hundreds of parameters, attributes and hook dicts in one check: on a hit it costs
# what it costs wherever it runs, but an entry that misses on one attribute (a cache dict a module fills on its
# first call, which leaves the first entry failing on every later call) paid for the whole batch before reaching
# that attribute's check. Run last, the batch is paid only by entries that pass everything else. Nothing reads a
# value through it: the per-value checks walk their own paths, so an attribute path that now leads elsewhere fails
# (or raises, which is a failure) on its own checks, and the conjunction is unchanged.


def _parameter_names(params: tuple[str, ...]) -> list[str]:
    """Names for the generated function's parameters: the user's own where safe, `___argN` otherwise.

    Unsafe: not an identifier, a keyword, a generated (`___`) name, a duplicate, or a builtin name that would
    shadow the `type`/`len` the rendered checks use.
    """
    names: list[str] = []
    for index, name in enumerate(params):
        safe = (isinstance(name, str) and name.isidentifier() and name.isascii() and not keyword.iskeyword(name)
                and not name.startswith("___") and name not in builtins.__dict__ and name not in names)
        names.append(name if safe else f"___arg{index}")
    return names


def _comment(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


class _Codegen:
    """Writes the source of one check function; each node's value is read once into a local."""

    def __init__(self, params: tuple[str, ...], ns: Namespace, examples: tuple | None = None,
                 tree: GuardTree | None = None) -> None:
        self._tree = tree
        self._params = params
        self._ns = ns
        self._names = _parameter_names(params)
        self._lines: list[str] = []
        self._vars: dict[GuardNode, str] = {}
        self._examples = examples
        self._implied = Implied()

    def function(self, plan: list[tuple[GuardNode, Check, str]]) -> str:
        header = f"def {_FUNCTION_NAME}({', '.join(self._names + [_CELLS])}):"
        renamed = [f"{new} is {old!r}" for new, old in zip(self._names, self._params) if new != old]
        if renamed:
            header += f"  # {_comment(', '.join(renamed))}"
        if not plan:
            return f"{header}\n    return True\n"
        merged = self._merged_tensor_checks(plan)
        for node, check, user_name in plan:
            if merged and id(check) in merged[0]:
                if check is merged[1]:
                    self._emit(f"if not ({merged[2]}):  # {_comment(merged[3])}")
                    self._emit("    return False")
                continue
            if type(node) is tuple:
                rendered = check.render_many([self._value(n) for n in node], self._ns)
                self._emit(f"if not ({rendered}):  # {_comment(user_name)}")
                self._emit("    return False")
                continue
            distinct = isinstance(check, DistinctObjects)
            # a test other checks let us narrow (None: DistinctObjects has no pair left, the rest render as usual)
            test = self._distinct(node, check) if distinct else \
                self._by_address(node, check) if type(check) in (CodeMatch, EqualsMatch) else None
            if test is not None:
                self._emit(f"if not ({test}):  # {_comment(user_name)}: {_comment(check.describe())}")
                self._emit("    return False")
            if test is not None or distinct:
                continue
            var = "None" if node.parent is None else self._value(node)
            if isinstance(check, Relation):
                others = [self._value(self._tree.node(path)) for path in check.other_paths]
                test = check.render_relation(var, others, self._ns)
            else:
                test = check.render(var, self._ns)
            self._emit(f"if not ({test}):  # {_comment(user_name)}: {_comment(check.describe())}")
            self._emit("    return False")
        body = "\n".join(self._lines)
        # Any Exception while reading or testing (a missing global, a hostile __getattr__ or __eq__) is a miss.
        return f"{header}\n    try:\n{body}\n        return True\n    except Exception:\n        return False\n"

    def _distinct(self, node: GuardNode, check) -> str | None:
        """DistinctObjects over the pairs of its values that the other checks do not already tell apart (Note
        [Facts implied by other checks], guards/implied.py), reading only the values of those pairs; None when
        no pair is left."""
        nodes = [self._tree.node(path) for path in check.other_paths] + [node]
        pairs = [(i, j) for i in range(len(nodes)) for j in range(i + 1, len(nodes))
                 if self._implied.may_be_same(nodes[i], nodes[j])]
        if not pairs:
            return None
        involved = {index for pair in pairs for index in pair}
        names = [self._value(n) if index in involved else None for index, n in enumerate(nodes)]
        return check.render_pairs(names, pairs)

    def _by_address(self, node: GuardNode, check) -> str | None:
        """CodeMatch on `f.__code__`, or EqualsMatch on a tuple `f.__defaults__`, of a function whose identity the
        guard has checked, as a read of the address `f` stores (Note [Audited reads]): a passing call makes no
        audited read. None where that does not apply."""
        if node.children or len(node.checks) != 1 or node in self._vars:
            return None
        if node.step == ("attr", "__code__") and type(check) is CodeMatch:
            word, held = 0, expected_words(check.code, None)[0]
        elif node.step == ("attr", "__defaults__") and type(check) is EqualsMatch and type(check.value) is tuple:
            word, held = 1, expected_words(None, check.value)[1]  # the check holds the tuple: its address is its own
        else:
            return None
        fn = self._implied.identity(node.parent)
        view = None if fn is UNKNOWN else code_defaults_view(fn)
        if view is None:
            return None
        owner = self._value(node.parent)  # the local holds the function alive while its words are read
        return f"{self._ns.constant(view, 'view')}[{word}] == {held} or {check.render(f'{owner}.{node.step[1]}', self._ns)}"

    def _merged_tensor_checks(self, plan):
        """(checks, first, rendered call, comment) for the checks on parameters that have a native form
        (TensorMatch's `native_check`), merged into one native check built from the live examples; None when
        fewer than two can be merged."""
        if self._examples is None:
            return None
        picked, examples, names = [], [], []
        for node, check, user_name in plan:
            if type(node) is tuple:
                continue
            native = getattr(check, "native_check", None)
            if native is None or node.parent is None or node.parent.parent is not None:
                continue
            kind, key = node.step
            if kind == "local" and key in self._params:
                example = self._examples[self._params.index(key)]
                try:
                    accepted = native(example) is True
                except Exception:
                    accepted = False
                if accepted:
                    picked.append(check)
                    examples.append(example)
                    names.append((node, user_name))
        if len(picked) < 2:
            return None
        native = type(picked[0]).combined_check(examples, picked)
        if native is None:
            return None
        args = ", ".join(self._value(node) for node, _ in names)
        rendered = f"{self._ns.constant(native, 'tensors_check')}({args})"
        comment = f"TensorMatch on {', '.join(name for _, name in names)} (one native check)"
        # by identity: checks compare by value, and an equal check on another value must still run
        return {id(check) for check in picked}, picked[0], rendered, comment

    def _emit(self, line: str) -> None:
        self._lines.append("        " + line)

    def _value(self, node: GuardNode) -> str:
        """The local that holds `node`'s value, emitting its read (and its ancestors') the first time."""
        var = self._vars.get(node)
        if var is not None:
            return var
        kind, key = node.step
        if node.parent.parent is None and kind == "local":
            if key not in self._params:
                raise ValueError(f"guard path {node.path!r} names local {key!r}, which is not a parameter of the "
                                 f"guarded function (parameters: {', '.join(self._params) or 'none'})")
            var = self._names[self._params.index(key)]
        else:
            expression = self._read_expression(node)
            var = self._ns.temp("v")
            name = node.user_name or default_user_name(node.path)
            self._emit(f"{var} = {expression}  # {_comment(name)}")
        self._vars[node] = var
        return var

    def _read_expression(self, node: GuardNode) -> str:
        kind, key = node.step
        if node.parent.parent is None:
            if kind == "global":
                return f"{_GLOBALS}[{constant_source(key, self._ns)}]"
            if kind == "builtin":
                return f"{_BUILTINS}[{constant_source(key, self._ns)}]"
            if kind == "module":
                modules = self._ns.constant(sys.modules, "sys_modules")
                return f"{modules}[{constant_source(key, self._ns)}]"
            if kind == "held":
                return self._ns.constant(key.obj, "held")
            if kind == "cellobj":
                return f"{_CELLS}[{key}]"
            return f"{_CELLS}[{key}].cell_contents"
        base = self._value(node.parent)
        if kind == "attr":
            # Non-ASCII names are NFKC-normalised by the parser, so they must go through getattr.
            if key.isidentifier() and key.isascii() and not keyword.iskeyword(key):
                return f"{base}.{key}"
            return f"getattr({base}, {key!r})"
        if kind == "item":
            return f"{base}[{constant_source(key, self._ns, 'key')}]"
        if kind == "rest":
            return f"{self._ns.constant(remaining_items, 'remaining_items')}({base})"
        if kind == "iterstate":
            return f"{self._ns.constant(iterator_state, 'iterator_state')}({base}, {key!r})"
        if kind == "from_numpy":
            return f"{self._ns.constant(array_tensor, 'from_numpy')}({base})"
        if kind == "size":
            return f"{base}.size({key!r})"
        if kind == "ctxvar":
            return f"{self._ns.constant(current_value, 'ctxvar')}({base})"
        getitem = self._ns.constant(dict.__getitem__, "dict_getitem")
        return f"{getitem}({base}, {constant_source(key, self._ns, 'key')})"

