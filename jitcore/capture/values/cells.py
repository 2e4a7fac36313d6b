"""Closure cells: CellBox for cells made inside the captured code, RootCell for cells that already existed.

Reading a RootCell wraps its contents with the cell's source (so it is guarded); writing one is a side effect on a
pre-existing object, which the frame must run natively.
"""
from __future__ import annotations

import types

from jitcore.guards import IdMatch
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.sources import CellObjectSource
from jitcore.capture.values.base import Value
from jitcore.capture.values.constant import CONSTANT_TYPES
from jitcore.capture.values.wrapping import wrap
from jitcore.guards.identity import address

__all__ = ["CellBox", "RootCell", "root_cell"]


class CellBox(Value):
    """A cell created by MAKE_CELL in a traced frame; holds a value (or None when empty)."""

    __slots__ = ("contents", "name")

    def __init__(self, contents=None, name=""):
        super().__init__(None)
        self.contents = contents
        self.name = name

    def get(self, state):
        if self.contents is None:
            raise GraphBreak.raises(NameError, f"free variable '{self.name}' referenced before assignment")
        return self.contents

    def set(self, state, value):
        self.contents = value

    #: one cell shared by every function rebuilt over it
    needs_identity = True

    def children(self):
        return [] if self.contents is None else [self.contents]

    def reconstruct(self, codegen):
        make = codegen.constant_object(types.CellType, "CellType")
        if self.contents is None:
            return f"{make}()"
        if id(self) in _REBUILDING:
            # a cell reached again while its contents are being rebuilt (a recursive inner function)
            raise GraphBreak("unsupported_output", "rebuilding a closure cell that refers to itself")
        _REBUILDING.add(id(self))
        try:
            return f"{make}({codegen.load(self.contents)})"
        finally:
            _REBUILDING.discard(id(self))

    def reconstruct_cell(self, codegen) -> str:
        """The cell object, for a function rebuilt over it."""
        return codegen.load(self)


#: ids of the cells being rebuilt right now (codegen runs under the capture lock, one at a time)
_REBUILDING: set = set()


class RootCell(Value):
    """A closure cell of a function that existed before the call."""

    __slots__ = ("cell", "value", "cell_source")

    def __init__(self, cell, source, cell_source=None):
        super().__init__(source)
        self.cell = cell
        self.value = None
        #: where the entry reads the cell object itself (`sources.CellObjectSource`: the running function's own
        #: closure), or None
        self.cell_source = cell_source

    def get(self, state):
        if self.source is not None:
            assigned = state.ctx.side_effects.load_source(self.source)
            if assigned is not None:
                return assigned
        if self.value is None:
            try:
                contents = self.cell.cell_contents
            except ValueError:
                raise GraphBreak.raises(NameError, "free variable referenced before assignment") from None
            if self.source is None:
                if type(contents) not in CONSTANT_TYPES and not callable(contents):
                    raise GraphBreak("unsupported_value", "a closure variable of a function jitcore cannot guard")
            self.value = wrap(state, contents, self.source)
        return self.value

    def set(self, state, value):
        if self.source is None:
            raise GraphBreak("side_effect", "assigning a nonlocal variable jitcore cannot write back")
        state.ctx.side_effects.store_source(self.source, value)

    def reconstruct_cell(self, codegen) -> str:
        """The very cell (its contents, when written in the call, are written back through its source): for a cell
        of the running function's closure, the one of this call (a resume function's closure is the frame's cells,
        new with every call of the frame), else the cell the guards hold."""
        if isinstance(self.cell_source, CellObjectSource):
            return self.cell_source.emit(codegen)
        return codegen.constant_object(self.cell, "cell")


def root_cell(ctx, cell, contents_source, cell_source):
    """The RootCell of a cell that existed before the call, one per cell object in a capture: a resume frame's
    own cells are also in the closures of the functions it was handed (Note [Resume functions share the frame's
    cells], codegen/resume.py), and a write through one must be read through the other. `cell_source` reaches
    the cell object itself (None for a cell the guards hold); the cells so shared are guarded the same object,
    the others distinct."""
    seen = ctx.root_cells.get(address(cell))
    if seen is not None and seen[0] is cell:
        first = seen[2]
        if cell_source is not None and first is not None:
            ctx.guard_same(first, cell_source)
        elif cell_source is not None or first is not None:
            ctx.guard(cell_source or first, IdMatch(cell))
        return seen[1]
    value = RootCell(cell, contents_source, cell_source)
    ctx.root_cells[address(cell)] = (cell, value, cell_source)
    if cell_source is not None:
        ctx.guard_distinct(cell_source)
    return value
