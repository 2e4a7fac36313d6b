"""The per-call path: a generated dispatcher tries each cache entry's guard, then runs the entry or captures anew.

The dispatcher is one Python function with the frame's own parameter names (no *args packing). When entries
change, its code is regenerated and swapped into the same function object, which the prologue holds as a constant.

Two modes. For a function swapped in place (register + enabled) the dispatcher returns FALLTHROUGH to make the
prologue run the original body. For a compiled copy (jit.compile) it calls the original function instead, so the
copy always behaves like the original *now*: its current defaults (the copy's defaults are placeholders that the
dispatcher resolves against the original's) and its current code (a replaced `__code__` runs natively).
"""
from __future__ import annotations

import inspect

import torch

from jitcore.guards import TensorMatch
from jitcore.guards.function_words import code_defaults_view
from jitcore.codegen.transform import safe_names
from jitcore.runtime.prologue import FALLTHROUGH

__all__ = ["Dispatcher", "DefaultPlaceholder"]


class DefaultPlaceholder:
    """Stands for 'this parameter was not passed' in a compiled copy; the dispatcher swaps in the real default."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<default of {self.name}>"


#: entries from which a shape switch is worth generating: two already, since automatic dynamic leaves a static
#: entry in front of the dynamic one, and a call at any other size would fail the static entry's whole guard first
_SWITCH_MIN = 2


def _switch(params, entries):
    """(parameter index, {size: entry indices}, indices for any other value) when the entries' guards pin the
    shape of one tensor parameter in two shapes, or in one beside entries that leave it free (the first such
    parameter), else None. Entries that do not pin it are candidates for every shape, in their original order."""
    for index, name in enumerate(params):
        sizes, anywhere = [], []
        for i, entry in enumerate(entries):
            node = entry.guard_function.tree.node((("local", name),))
            found = [c for c, _, _ in node.checks if isinstance(c, TensorMatch)] if node is not None else []
            if found and None not in found[0].sizes:
                sizes.append((i, found[0].sizes))
            else:
                anywhere.append(i)
        if len({size for _, size in sizes}) < (2 if not anywhere else 1):
            continue
        table = {}
        for i, size in sizes:
            table.setdefault(size, [])
        for size in table:
            table[size] = sorted([i for i, s in sizes if s == size] + anywhere)
        return index, table, anywhere
    return None


class Dispatcher:
    """Owns the generated function `fn(<params>, ___cells)` for one cache."""

    def __init__(self, code, params: tuple, miss, original=None, gate=None):
        self.code = code
        self.params = params
        #: identifiers the generated source uses for the parameters
        self.names = safe_names(params)
        self.name = "".join(ch if ch.isalnum() else "_" for ch in code.co_name)
        self.original = original
        self.namespace = {"___miss": miss, "___FALLTHROUGH": FALLTHROUGH, "___code": code,
                          "___orig": original, "___gate": gate}
        #: a thread-local object whose `depth` says whether this thread runs compiled code (enabled() blocks
        #: are per thread); None: always
        self.gate = gate
        #: for a module's forward swapped in place: the instances it runs compiled for (`in` answers live);
        #: every other instance of the class falls through to the original body. None: every call dispatches
        self.members = None
        #: past the cache limit (Note [Past the cache limit], runtime/cache.py): a one-item list the dispatcher
        #: counts its calls in, or None; `native`: the frame gave up, every call runs the original body
        self.calls = None
        self.native = False
        self.placeholders: dict = {}
        if original is not None:
            self._make_placeholders(code)
        self.fn = self._generate([])

    def _make_placeholders(self, code) -> None:
        n = code.co_argcount
        defaults = self.original.__defaults__ or ()
        for index, name in enumerate(code.co_varnames[n - len(defaults):n]):
            # counted from the end, as Python binds defaults: a longer `__defaults__` set later still gives this
            # parameter the last items
            self.placeholders[name] = ("__defaults__", index - len(defaults), DefaultPlaceholder(name))
        for name in (self.original.__kwdefaults__ or {}):
            self.placeholders[name] = ("__kwdefaults__", name, DefaultPlaceholder(name))

    def copy_defaults(self):
        """(__defaults__, __kwdefaults__) for the compiled copy: placeholders the dispatcher resolves."""
        n = self.code.co_argcount
        defaults = self.original.__defaults__ or ()
        names = self.code.co_varnames[n - len(defaults):n]
        positional = tuple(self.placeholders[name][2] for name in names) or None
        keyword = {name: self.placeholders[name][2] for name in (self.original.__kwdefaults__ or {})} or None
        return positional, keyword

    def _call_original(self) -> str:
        code = self.code
        parts = []
        n, nkw = code.co_argcount, code.co_kwonlyargcount
        names = self.names
        parts += list(names[:n])
        index = n + nkw
        if code.co_flags & inspect.CO_VARARGS:
            parts.append(f"*{names[index]}")
            index += 1
        parts += [f"{original}={safe}" for original, safe in zip(code.co_varnames[n:n + nkw], names[n:n + nkw])]
        if code.co_flags & inspect.CO_VARKEYWORDS:
            parts.append(f"**{names[index]}")
        return f"___orig({', '.join(parts)})"

    def _generate(self, entries):
        args = ", ".join([*self.names, "___cells"])
        packed = "(" + "".join(f"{p}, " for p in self.names) + ")"
        lines = [f"def ___dispatch_{self.name}({args}):"]
        if self.gate is not None:
            lines.append("    if not ___gate.depth:")
            lines.append("        return ___FALLTHROUGH")
        if self.members is not None:
            self.namespace["___members"] = self.members
            lines.append(f"    if {self.names[0]} not in ___members:")
            lines.append("        return ___FALLTHROUGH")
        calling = self.original is not None
        if calling:
            safe = dict(zip(self.params, self.names))
            for index, (name, (attr, key, placeholder)) in enumerate(self.placeholders.items()):
                self.namespace[f"___d{index}"] = placeholder
                lines.append(f"    if {safe[name]} is ___d{index}:")
                lines.append(f"        {safe[name]} = ___orig.{attr}[{key!r}]")
            view = code_defaults_view(self.original)
            if view is not None and view[0] == id(self.code):
                # Note [Audited reads] (guards/function_words.py): `___orig.__code__` calls any audit hook on every
                # call; the address the function stores is the same test while the dispatcher holds both objects
                self.namespace["___code_word"], self.namespace["___code_address"] = view, id(self.code)
                lines.append("    if ___code_word[0] != ___code_address:")
            else:
                lines.append("    if ___orig.__code__ is not ___code:")
            lines.append(f"        return {self._call_original()}")
        if self.calls is not None:
            self.namespace["___calls"] = self.calls
            lines.append("    ___calls[0] += 1")
        switch = _switch(self.params, entries) if len(entries) >= _SWITCH_MIN else None
        if self.native:
            lines.append("    ___r = ___FALLTHROUGH")
        elif switch is not None:
            # entries that differ in one tensor's shape: the shape picks the candidates, so a hit costs about one
            # entry's checks however many entries there are (DESIGN §5: flat dispatch cost)
            index, table, fallback = switch
            self.namespace["___table"] = {size: tuple((entries[i].guard_check, entries[i].run) for i in idx)
                                          for size, idx in table.items()}
            self.namespace["___fallback"] = tuple((entries[i].guard_check, entries[i].run) for i in fallback)
            self.namespace["___Tensor"] = torch.Tensor
            p = self.names[index]
            lines.append(f"    ___cands = ___table.get({p}.size(), ___fallback) if isinstance({p}, ___Tensor) "
                         f"else ___fallback")
            lines.append("    for ___g, ___run in ___cands:")
            lines.append(f"        if ___g({args}):")
            lines.append(f"            ___r = ___run({args})")
            lines.append("            break")
            lines.append("    else:")
            lines.append(f"        ___r = ___miss({packed}, ___cells)")
        else:
            for i, _ in enumerate(entries):
                lines.append(f"    {'if' if i == 0 else 'elif'} ___guard{i}({args}):")
                lines.append(f"        ___r = ___run{i}({args})")
            if entries:
                lines.append("    else:")
                lines.append(f"        ___r = ___miss({packed}, ___cells)")
            else:
                lines.append(f"    ___r = ___miss({packed}, ___cells)")
        if calling:
            lines.append("    if ___r is ___FALLTHROUGH:")
            lines.append(f"        return {self._call_original()}")
        lines.append("    return ___r")
        source = "\n".join(lines) + "\n"
        for i, entry in enumerate(entries):
            self.namespace[f"___guard{i}"] = entry.guard_check
            self.namespace[f"___run{i}"] = entry.run
        exec(compile(source, f"<jitcore dispatch for {self.name}>", "exec"), self.namespace)
        fn = self.namespace[f"___dispatch_{self.name}"]
        fn.source = source
        return fn

    def admit_only(self, members, entries) -> None:
        """Dispatch only calls whose first argument (a module's `self`) is in `members`; regenerate."""
        self.members = members
        self.update(entries)

    def count_calls(self, calls: list, entries) -> None:
        """Count every call in `calls[0]` (the cache is past its limit); regenerate."""
        self.calls = calls
        self.update(entries)

    def go_native(self, native: bool, entries) -> None:
        """Every call runs the original body without trying an entry (True), or dispatches again (False)."""
        self.native = native
        if not native:
            self.calls = None
        self.update(entries)

    def update(self, entries) -> None:
        """Regenerate for the current entries; the function object the prologue holds stays the same."""
        fresh = self._generate(entries)
        self.fn.__code__ = fresh.__code__
        self.fn.source = fresh.source
