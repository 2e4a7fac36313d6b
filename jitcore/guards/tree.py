"""The guard tree: one node per access path from a frame, leaf checks on the nodes, root checks on the root.

A path is a tuple of plain steps, the only thing guards/ knows about where a value lives (see Note [Access
steps]). Imports the standard library, guards.checks, guards.iterators, guards.arrays and guards.context_vars only; never jitcore or bytecode.
Entry points: GuardTree (add, add_root, checks, pretty), count_checks, read_step, default_user_name.
"""

from __future__ import annotations

from collections.abc import Iterator

from jitcore.guards.arrays import array_tensor
from jitcore.guards.checks import Check, Relation
from jitcore.guards.context_vars import current_value
from jitcore.guards.iterators import iterator_state, remaining_items
from jitcore.guards.identity import address

__all__ = ["CHILD_STEPS", "ROOT_STEPS", "GuardNode", "Held", "GuardTree", "count_checks", "default_user_name", "read_step"]

# Note [Access steps]
# Root steps (the first step of every path):
#   ("local", name)    an argument of the guarded function, passed to the check function by position
#   ("global", name)   globals_dict[name], the globals dict bound when compiling
#   ("builtin", name)  builtins_dict[name], the builtins dict bound when compiling
#   ("cell", index)    cells[index].cell_contents, `cells` being the closure tuple passed to the check function
#   ("cellobj", index) cells[index], the cell itself (a closure of a function in the frame that shares it)
#   ("module", name)   sys.modules[name], read when the guard runs: the globals of another module, reached by an
#                      inlined function defined there (("module", "torch.nn.modules.module"), ("attr", "_hooks"))
#   ("held", Held(obj)) an object the guard itself holds: a closure cell of a function inlined without a source
#                      (a method found on its class), whose contents are read with ("attr", "cell_contents")
# Child steps:
#   ("attr", name)     getattr(obj, name)
#   ("item", key)      obj[key], for any hashable constant key
#   ("dictitem", key)  dict.__getitem__(obj, key): raw dict access (module._parameters['w']) that bypasses a
#                      Python-level __getitem__
#   ("rest", 0)        the items an iterator has not produced yet, as a tuple, read without advancing it
#                      (guards/iterators.remaining_items: a loop's iterator handed to a resume function)
#   ("iterstate", part) a part of an iterator (guards/iterators.iterator_state): a list iterator's list ("seq") or
#                      position ("pos"), a dict iterator's dict ("dict"), the i-th argument of a zip / enumerate / map
#                      (an int), whether a zip is strict ("strict")
#   ("size", dim)      obj.size(dim): a tensor's size, handed to a graph as a SymInt input
#   ("from_numpy", 0)  the tensor sharing a NumPy array's memory (guards/arrays.array_tensor), checked like a tensor
#   ("ctxvar", 0)      a ContextVar's value in the running context, or guards/context_vars.UNSET when it has none
#                      (guards/context_vars.current_value)
ROOT_STEPS = frozenset({"local", "global", "builtin", "cell", "cellobj", "module", "held"})
CHILD_STEPS = frozenset({"attr", "item", "dictitem", "rest", "iterstate", "from_numpy", "size", "ctxvar"})

_dict_getitem = dict.__getitem__


class Held:
    """The key of a "held" root step: one object, compared and hashed by identity (a cell is unhashable), kept
    alive by the guards that read it."""

    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return address(self.obj)

    def __eq__(self, other: object) -> bool:
        return type(other) is Held and other.obj is self.obj

    def __repr__(self) -> str:
        return f"<held {type(self.obj).__name__}>"


def read_step(base: object, step: tuple) -> object:
    """Apply one child step to `base`, the slow-path twin of the code compile.py generates."""
    kind, key = step
    if kind == "attr":
        return getattr(base, key)
    if kind == "item":
        return base[key]
    if kind == "dictitem":
        return _dict_getitem(base, key)
    if kind == "rest":
        return remaining_items(base)
    if kind == "iterstate":
        return iterator_state(base, key)
    if kind == "from_numpy":
        return array_tensor(base)
    if kind == "size":
        return base.size(key)
    if kind == "ctxvar":
        return current_value(base)
    raise ValueError(f"unknown child step {step!r}")


def default_user_name(path: tuple) -> str:
    """A readable name for a path when the caller gave none: `x`, `G.scale`, `cell 0`, `self.fc['w']`."""
    if not path:
        return "global state"
    kind, key = path[0]
    name = {"local": str(key), "global": f"G.{key}", "builtin": f"builtins.{key}", "cell": f"cell {key}",
            "cellobj": f"cell object {key}", "module": str(key), "held": repr(key)}[kind]
    for kind, key in path[1:]:
        name += f".{key}" if kind == "attr" else f"({kind})" if kind in ("rest", "from_numpy", "ctxvar") else f"({key})" if kind == "iterstate" \
            else f".size({key})" if kind == "size" else f"[{key!r}]"
    return name


def _validate_path(path: tuple) -> None:
    if type(path) is not tuple or not path:
        raise ValueError(f"a guard path must be a non-empty tuple of steps, got {path!r}")
    for index, step in enumerate(path):
        allowed = ROOT_STEPS if index == 0 else CHILD_STEPS
        if type(step) is not tuple or len(step) != 2 or step[0] not in allowed:
            where = "first" if index == 0 else "later"
            raise ValueError(
                f"step {index} of guard path {path!r} is {step!r}; a {where} step must be a pair "
                f"(kind, key) with kind one of {sorted(allowed)}"
            )
        kind, key = step
        if kind == "held" and type(key) is not Held:
            raise ValueError(f"a held step needs a Held key, got {step!r} in {path!r}")
        if kind in ("cell", "cellobj", "size") and (type(key) is not int or key < 0):
            raise ValueError(f"a {kind} step needs an index >= 0, got {step!r} in {path!r}")
        if kind in ("local", "global", "builtin", "attr", "module") and type(key) is not str:
            raise ValueError(f"a {kind} step needs a name (str), got {step!r} in {path!r}")
        hash(key)  # an unhashable key raises TypeError here, naming the key


def _validate_check(check: object) -> None:
    if not isinstance(check, Check):
        raise TypeError(f"a guard check must be a Check (TypeMatch, TensorMatch, ...), got {check!r}")


def _step_key(step: tuple) -> tuple:
    # 1, 1.0 and True hash and compare equal but may select different things through a user __getitem__;
    # keep them apart by keying children on the key's type too.
    return (step[0], type(step[1]), step[1])


class GuardNode:
    """One access path. `checks` holds (check, user_name, order) in insertion order, `order` being the tree-wide
    insertion counter; `children` maps a step's key to the child node, in insertion order.

    Invariant: no two checks on a node are equal.
    """

    __slots__ = ("step", "path", "parent", "user_name", "checks", "children", "_seen")

    def __init__(self, step: tuple | None, parent: GuardNode | None) -> None:
        self.step = step
        self.parent = parent
        self.path: tuple = () if parent is None else parent.path + (step,)
        self.user_name: str | None = None
        self.checks: list[tuple[Check, str, int]] = []
        self.children: dict[tuple, GuardNode] = {}
        #: the checks already on this node, for the no-duplicates invariant in constant time (the root holds one
        #: check per class-dict entry a Hugging Face model reads: ~1,000, compared pairwise they cost seconds)
        self._seen: set = set()

    def walk(self) -> Iterator[GuardNode]:
        """This node and every descendant, depth first, children in insertion order."""
        yield self
        for child in self.children.values():
            yield from child.walk()


class GuardTree:
    """The checks one cache entry needs, organised by access path.

    Vocabulary: the root node (path `()`) holds root checks such as GlobalStateMatch; every other node is
    reached from its parent by one step. Nodes are created for every prefix of a path that is added.
    """

    def __init__(self) -> None:
        self.root = GuardNode(None, None)
        self._count = 0
        #: checks over several paths (shape relations): (check, nodes, user_name), run after every leaf check
        self.relations: list = []

    def add(self, path: tuple, check: Check, user_name: str | None = None) -> bool:
        """Add `check` at the node for `path`; returns False when an identical check is already there."""
        _validate_path(path)
        _validate_check(check)  # before any node is created, so a refused call leaves the tree as it was
        node = self._node_for(path)
        if isinstance(check, Relation):
            for other in check.other_paths:  # a relation reads these too: their nodes must exist
                self._node_for(other)
        return self._add_check(node, check, user_name or default_user_name(path))

    def _node_for(self, path: tuple) -> GuardNode:
        _validate_path(path)
        node = self.root
        for step in path:
            key = _step_key(step)
            child = node.children.get(key)
            if child is None:
                child = node.children[key] = GuardNode(step, node)
            node = child
        return node

    def add_relation(self, check: Check, paths: list, user_name: str = "shape relations") -> None:
        """A check over the values at several paths (each already holding leaf checks: they run first and settle
        the types the relation reads). The check's `explain` gets the tuple of values, `render_many` their
        locals."""
        _validate_check(check)
        nodes = []
        for path in paths:
            node = self.node(path)
            if node is None or not node.checks:
                raise ValueError(f"a relation reads {path!r}, which holds no leaf check")
            nodes.append(node)
        self.relations.append((check, tuple(nodes), user_name))
        self._count += 1

    def add_root(self, check: Check, user_name: str = "global state") -> bool:
        """Add a check that reads no value (torch global state); root checks run before every other check."""
        return self._add_check(self.root, check, user_name)

    def _add_check(self, node: GuardNode, check: Check, user_name: str) -> bool:
        _validate_check(check)
        try:
            if check in node._seen:
                return False
            node._seen.add(check)
        except TypeError:  # a check whose key does not hash: compared with each one
            if any(check == existing for existing, _, _ in node.checks):
                return False
        if node.user_name is None:
            node.user_name = user_name
        node.checks.append((check, user_name, self._count))
        self._count += 1
        return True

    def node(self, path: tuple) -> GuardNode | None:
        """The node for `path`, or None if nothing was added at or below it."""
        node = self.root
        for step in path:
            node = node.children.get(_step_key(step))
            if node is None:
                return None
        return node

    def checks(self) -> Iterator[tuple[tuple, str, Check]]:
        """Every check as (path, user_name, check): root checks first, then depth first in insertion order."""
        for node in self.root.walk():
            for check, user_name, _ in node.checks:
                yield node.path, user_name, check
        for check, _, user_name in self.relations:
            yield (), user_name, check

    def __len__(self) -> int:
        return self._count

    def pretty(self) -> str:
        """The tree as indented text in the user's names; nodes without checks are folded into their children.

        Root checks print first, as siblings of the top-level nodes.
        """
        lines: list[str] = []
        top = ([self.root] if self.root.checks else []) + self._visible(self.root)
        self._pretty_entries(top, "", lines)
        for check, _, user_name in self.relations:
            lines.append(f"└── {user_name}: {check.describe()}")
        return "\n".join(lines)

    def _visible(self, node: GuardNode) -> list[GuardNode]:
        """The nearest descendants of `node` that hold checks."""
        found: list[GuardNode] = []
        for child in node.children.values():
            found += [child] if child.checks else self._visible(child)
        return found

    def _pretty_entries(self, entries: list[GuardNode], indent: str, lines: list[str]) -> None:
        for position, node in enumerate(entries):
            last = position == len(entries) - 1
            described = ", ".join(check.describe() for check, _, _ in node.checks)
            lines.append(f"{indent}{'└── ' if last else '├── '}{node.user_name}: {described}")
            if node is not self.root:  # the root's children are already listed beside it
                self._pretty_entries(self._visible(node), indent + ("    " if last else "│   "), lines)


def count_checks(tree: GuardTree) -> int:
    """How many checks `tree` holds (root checks included)."""
    return len(tree)
