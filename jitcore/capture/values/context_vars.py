"""`contextvars.ContextVar` objects that existed before the call: `get`, `set` and `reset` while tracing.

Note [Context variables]
A ContextVar passed in (or read from a global, an attribute) is guarded by identity. What it holds when the call
starts is read through the guard step "ctxvar" (`ContextVarValueSource`): the value is wrapped and guarded as any
input is (a dict collector by its keys, None by value), its absence guarded as `UNSET`. `set(v)` and `reset(token)`
change nothing real while tracing: the value keeps what the variable holds now (`current`), so a `get()` after a
`set()` answers the new value, and a log of the operations is replayed literally after the graph (one
`var.set(v)` / `var.reset(token)` per operation, in order, the tokens made by the replay), which leaves the context
exactly as the calls would have: a `reset` restores what its `set` found, unset included. A `set` undone by a
`reset` of its own token with nothing between them on that variable cancels out and is not replayed.
The tokens a trace makes (`ContextTokenValue`) exist only inside it. One that Python needs later (live at a graph
break, returned, stored on an object from outside) would have to be the real token of a real `set`: capture stops
before the root-frame instruction that made it instead (`escaping_token` -> `GraphBreak.earlier`, capture/frame.py),
so that `set` runs in Python and its token is real. A token from outside (made before the call) passed to
`reset`, a ContextVar made inside, `Context` objects and `copy_context()` are not modelled (a graph break).
Entry points: ContextVarValue, wrap_context_var, escaping_token.
"""
from __future__ import annotations

import contextvars
import linecache

from jitcore.guards import IdMatch
from jitcore.guards.context_vars import UNSET, current_value

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.sources import ContextVarValueSource
from jitcore.capture.values.base import KnownObjectValue, MethodCallValue, Value
from jitcore.capture.values.constant import const, CONSTANT_TYPES
from jitcore.capture.values.wrapping import wrap

__all__ = ["ContextVarValue", "ContextTokenValue", "wrap_context_var", "escaping_token"]


class _Initial:
    """What a variable's value stands for before the trace changed it: read through its source."""

    __slots__ = ()

    def __repr__(self):
        return "<as the call found it>"


_INITIAL = _Initial()


class ContextTokenValue(Value):
    """A token one traced `var.set(v)` returned: `old` is what the variable held before it (a value, `UNSET`, or
    `_INITIAL`), `origin` the (offset, visit) of the root-frame instruction that made it, `location` the user's
    (file, line, text, function) of the set()."""

    __slots__ = ("var", "old", "origin", "location", "used", "cancelled")

    def __init__(self, var, old, state):
        super().__init__(None)
        self.var, self.old, self.origin = var, old, state.origin()
        filename = state.code.co_filename
        self.location = (filename, state.lineno, linecache.getline(filename, state.lineno), state.code.co_name)
        self.used = self.cancelled = False

    def python_type(self):
        return contextvars.Token

    def children(self):
        return []

    def getattr(self, state, name):
        if name == "var":
            return self.var
        return super().getattr(state, name)

    def reconstruct(self, codegen):
        # capture stops before the set instead (Note [Context variables]); what is left cannot be rebuilt
        raise GraphBreak("unsupported_output", "a ContextVar token made while tracing is needed after the graph")


class ContextVarValue(KnownObjectValue):
    """One ContextVar from a source (identity guarded). `current` is what it holds at this point of the trace,
    `log` the operations to replay: ("set", value, token) and ("reset", token)."""

    __slots__ = ("current", "log", "effects")
    replay_first = False
    # after every other write-back: a container read through the variable (`var.get()["k"] = v`) is written through
    # its source, which must still answer what the variable held when the call started
    replay_last = True

    def __init__(self, state, obj, source):
        super().__init__(obj, source)
        self.current = _INITIAL
        self.log: list = []
        self.effects = state.ctx.side_effects

    def getattr(self, state, name):
        if name in ("get", "set", "reset"):
            return MethodCallValue(self, name)
        if name == "name":
            return const(self.obj.name)
        raise GraphBreak("unsupported_value", f"ContextVar.{name}")

    def call_method(self, state, name, args, kwargs):
        # get([default]), set(value), reset(token): positional only
        if kwargs or len(args) > 1 or (name != "get" and not args):
            raise GraphBreak("unsupported_call", f"ContextVar.{name}() with these arguments")
        if name == "get":
            return self._get(state, args[0] if args else None)
        if name == "set":
            return self._set(state, args[0])
        if name == "reset":
            return self._reset(state, args[0])
        raise GraphBreak("unsupported_call", f"ContextVar.{name}()")

    def _held(self, state):
        """What the variable holds here: a value, or UNSET."""
        if self.current is not _INITIAL:
            return self.current
        source = ContextVarValueSource(self.source)
        real = current_value(self.obj)
        if real is UNSET:
            state.ctx.guard(source, IdMatch(UNSET))
            return UNSET
        return wrap(state, real, source)

    def _get(self, state, default):
        held = self._held(state)
        if held is not UNSET:
            return held
        if default is not None:
            return default
        try:
            # the variable's own default: a fixed part of the object (guarded by identity), read in an empty context
            fallback = contextvars.Context().run(self.obj.get)
        except LookupError:
            raise GraphBreak.raises(LookupError, repr(self.obj), (self.obj,)) from None
        if type(fallback) not in CONSTANT_TYPES:
            raise GraphBreak("unsupported_value", f"the default of ContextVar {self.obj.name!r} is not a constant")
        return const(fallback)

    def _set(self, state, value):
        self.effects.container_mutated(self)
        token = ContextTokenValue(self, self.current, state)
        self.current = value
        self.log.append(("set", value, token))
        return token

    def _reset(self, state, token):
        if not isinstance(token, ContextTokenValue):
            raise GraphBreak("unsupported_call", "ContextVar.reset() with a token made before the call")
        if token.var is not self:
            raise GraphBreak.raises(ValueError, "Token was created by a different ContextVar")
        if token.used:
            raise GraphBreak.raises(RuntimeError, "Token has already been used once")
        token.used = True
        self.current = token.old
        if self.log and self.log[-1][0] == "set" and self.log[-1][2] is token:
            self.log.pop()
            token.cancelled = True
        else:
            self.log.append(("reset", token))
        return const(None)

    # -- the side-effect protocol of a container passed in (Note [Context variables]) --------------------------
    def children(self):
        return [op[1] for op in self.log if op[0] == "set"]

    def snapshot(self):
        return None

    def changed_items(self, codegen, initial) -> str:
        return "(" + "".join(codegen.load(op[1]) + ", " for op in self.log if op[0] == "set") + ")"

    def replay(self, codegen, values: str, initial) -> str:
        if not self.log:
            return "None"
        var = self.source.emit(codegen)
        tokens, parts, index = {}, [], 0
        for op in self.log:
            if op[0] == "set":
                name = f"{values}_{len(tokens)}"
                tokens[id(op[2])] = name
                parts.append(f"({name} := {var}.set({values}[{index}]))")
                index += 1
            else:
                parts.append(f"{var}.reset({tokens[id(op[1])]})")
        return "(" + ", ".join(parts) + ")"


def wrap_context_var(state, value, source):
    """A ContextVar read from a source (not None), modelled and guarded by identity."""
    state.ctx.guard(source, IdMatch(value))
    return ContextVarValue(state, value, source)


def escaping_token(roots):
    """The first token made while tracing (not cancelled) that is reachable from `roots` (values Python needs
    after the graph), or None."""
    seen = set()
    stack = list(roots)
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, ContextTokenValue):
            if not value.cancelled:
                return value
            continue
        stack.extend(value if isinstance(value, list) else value.children())
    return None
