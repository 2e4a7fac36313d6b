"""Mutations of objects that existed before the call, recorded while tracing and replayed after the graph runs.

Tracing never mutates real objects: a list passed in keeps its new items in its value, an attribute assigned on a
module or user object lives in an overlay here, and so does an assignment to a global or a closure cell. The entry
function (codegen/transform.py) computes every value it writes first and then writes them, in the order they were
first made, once, after the graph. Objects created inside the function need no replay: they are rebuilt.

Note [Write-back is a delta]: a container passed in is never overwritten whole with a state read earlier. Its
contents at the first mutation are kept (`snapshot()` of the kind), and the replay writes only what changed
against them: `d[k] = v` and `d.pop(k, None)` per key, `s.add(v)` / `s.discard(v)` per member, `lst.extend(...)`
for appends, `lst[i] = v` per changed position, and for a list resized inside (an insert, a pop, a remove) one
slice, `lst[a:b] = ...`, over the run between its unchanged head and tail. Another thread may write the same container between the guards and the replay (Python switches
threads between bytecodes): its writes to other keys survive, and no key is ever missing while the replay runs.
"""
from __future__ import annotations

from jitcore.guards.identity import address

__all__ = ["SideEffects", "DELETED"]


class _Deleted:
    __slots__ = ()

    def __repr__(self):
        return "DELETED"


#: what `load_attr` answers for an attribute deleted while tracing (replayed as a removal from the __dict__), and
#: `load_source` for a global deleted while tracing (replayed as `del` of the name)
DELETED = _Deleted()


class SideEffects:
    def __init__(self):
        #: key -> (kind, target, name), in the order of first mutation
        self._records: dict = {}
        #: (address(obj), name) -> value assigned to obj.name while tracing
        self._attrs: dict = {}
        #: objects whose attributes are overlaid, kept alive while tracing so ids stay unique
        self._owners: dict = {}
        #: source -> value assigned to it (globals, closure cells)
        self._sources: dict = {}
        #: address(container value) -> its contents at the first mutation (Note [Write-back is a delta])
        self._initial: dict = {}
        #: (address(module), name) -> persistent, for buffers registered while tracing
        self._buffers: dict = {}
        #: every write recorded, the first and the later ones (a traced body tells that it wrote nothing)
        self.writes = 0

    def __bool__(self):
        return bool(self._records)

    def __len__(self) -> int:
        """How many objects, attributes and sources have been written (each counted at its first write)."""
        return len(self._records)

    # -- recording --------------------------------------------------------------------------------------------
    def container_mutated(self, value) -> None:
        """A list/dict/set value that came from a source changed its contents."""
        self.writes += 1
        if ("container", address(value)) not in self._records:
            self._initial[address(value)] = value.snapshot()
            self._records[("container", address(value))] = ("container", value, None)

    def is_mutated(self, value) -> bool:
        """A container value that came from a source has been changed in this call."""
        return ("container", address(value)) in self._records

    def realized(self, value, items) -> None:
        """A lazily read list mutated before its items were read has them now: `items` are its initial ones."""
        if self._initial.get(address(value), ()) is None:
            self._initial[address(value)] = list(items)

    def store_attr(self, owner, obj, name: str, value) -> None:
        """owner (a value with a source, standing for obj) gets obj.name = value."""
        self.writes += 1
        self._owners[address(obj)] = obj
        self._attrs[(address(obj), name)] = value
        self._records.setdefault(("attr", address(obj), name), ("attr", owner, name))

    def register_buffer(self, owner, module, name: str, value, persistent: bool) -> None:
        """`module.register_buffer(name, value, persistent)` for a name the module lacks: reads of module.name see
        value (or what is assigned to it later), and the replay registers the final value as a buffer."""
        self.store_attr(owner, module, name, value)
        self._records[("attr", address(module), name)] = ("buffer", owner, name)
        self._buffers[(address(module), name)] = persistent

    def is_buffer(self, module, name: str) -> bool:
        """Whether module.name was registered as a buffer while tracing."""
        return (address(module), name) in self._buffers

    def delete_attr(self, owner, obj, name: str) -> None:
        """`del obj.name` on an object whose attributes live in its __dict__."""
        self.store_attr(owner, obj, name, DELETED)

    def load_attr(self, obj, name: str):
        """The value assigned to obj.name while tracing, DELETED after a `del`, or None."""
        return self._attrs.get((address(obj), name))

    def forget_attrs(self, obj) -> None:
        """obj's attribute writes now live in its __dict__'s value (read by `vars(o)` / `o.__dict__`), whose delta
        replays them: replaying them again as attribute writes would undo deletes made through the dict."""
        for key in [key for key in self._attrs if key[0] == address(obj)]:
            del self._attrs[key]
            del self._records[("attr", address(obj), key[1])]

    def attr_names(self, obj) -> list:
        """The names of obj's attributes written or deleted while tracing."""
        return [name for (owner, name) in self._attrs if owner == address(obj)]

    def store_source(self, source, value) -> None:
        """An assignable source (a global, a closure cell's contents) gets value."""
        self.writes += 1
        self._sources[source] = value
        self._records.setdefault(("source", source), ("source", source, None))

    def delete_source(self, source) -> None:
        """An assignable source (a global) is deleted: reads see DELETED, the replay deletes it."""
        self.store_source(source, DELETED)

    def load_source(self, source):
        """The value assigned to source while tracing, DELETED after a `del`, or None."""
        return self._sources.get(source)

    # -- replay -----------------------------------------------------------------------------------------------
    def _final(self, kind, target, name):
        if kind == "container":
            return target
        if kind in ("attr", "buffer"):
            return self._attrs[(address(target.identity()), name)]
        return self._sources[target]

    def values(self) -> list:
        """Every value the replay writes (the graph must output the tensors among them)."""
        finals = (self._final(*record) for record in self._records.values())
        return [final for final in finals if final is not DELETED]

    def emit(self, codegen) -> list:
        """Statements that compute every value written, then write them in first-mutation order (deltas only),
        after the replays marked `replay_first` and before those marked `replay_last`."""
        computed, first, writes, last = [], [], [], []
        for index, (kind, target, name) in enumerate(self._records.values()):
            temp = f"___se{index}"
            if kind == "container":
                initial = self._initial[address(target)]
                computed.append(f"{temp} = {target.changed_items(codegen, initial)}")
                order = first if target.replay_first else last if target.replay_last else writes
                order.append(target.replay(codegen, temp, initial))
            elif kind == "buffer":
                final = self._final(kind, target, name)
                if final is not DELETED:  # registered and deleted in the call: never there
                    persistent = self._buffers[(address(target.identity()), name)]
                    computed.append(f"{temp} = {codegen.load(final)}")
                    writes.append(f"{target.source.emit(codegen)}.register_buffer({name!r}, {temp}, "
                                  f"persistent={persistent!r})")
            elif kind == "attr" and self._final(kind, target, name) is DELETED:
                owner = target.source.emit(codegen) if target.source is not None else codegen.load(target)
                if isinstance(target.identity(), type):
                    # a class's __dict__ is a read-only proxy: delete through type.__delattr__ (if set at all:
                    # an attribute added and deleted in the call was never written)
                    writes.append(f"delattr({owner}, {name!r}) if {name!r} in vars({owner}) else None")
                else:
                    writes.append(f"vars({owner}).pop({name!r}, None)")
            elif kind == "attr":
                owner = target.source.emit(codegen) if target.source is not None else codegen.load(target)
                computed.append(f"{temp} = {codegen.load(self._final(kind, target, name))}")
                writes.append(f"setattr({owner}, {name!r}, {temp})")
            elif self._final(kind, target, name) is DELETED:
                writes.append(f"del {target.emit(codegen)}")
            else:
                computed.append(f"{temp} = {codegen.load(self._final(kind, target, name))}")
                writes.append(f"{target.emit(codegen)} = {temp}")
        return computed + first + writes + last
