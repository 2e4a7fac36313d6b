"""Fault containment: a failure inside jitcore, or of a backend, never reaches the user's program.

Every stage of making an entry is contained: capture, building the graph module, the backend compile, codegen of
the entry, codegen of the guards, and the first run of the backend's compiled graph (`FirstRun`). A contained fault
is reported once through `events.emit("fallbacks", ...)` and the frame runs natively; under `fullgraph=True` or
strict mode it is raised instead, as `InternalError` (a fault of jitcore) or `BackendCompileError` (of the
backend), naming the stage. `Containment` holds what the reports name (the frame, the backend).
"""
from __future__ import annotations

from jitcore import events
from jitcore.codegen.transform import RngState
from jitcore.config import config
from jitcore.errors import BackendCompileError, InternalError

__all__ = ["Containment", "FirstRun", "CAPTURE", "GRAPH_MODULE", "CODEGEN", "GUARD_CODEGEN"]

#: the stages a fault of jitcore itself is reported in (the backend's own stages have messages of their own)
CAPTURE = "capture"
GRAPH_MODULE = "graph module construction"
CODEGEN = "codegen"
GUARD_CODEGEN = "guard codegen"


class Containment:
    """Reports, or raises, the faults met while making and first running the entries of one frame."""

    def __init__(self, code, where: str, options):
        self.code = code
        #: the frame as messages name it
        self.where = where
        self.backend_name = options.backend_name
        self.fullgraph = options.fullgraph

    def raising(self) -> bool:
        """Faults are raised, not contained (fullgraph=True or strict mode)."""
        return self.fullgraph or config.strict

    def internal(self, stage: str, exc: Exception) -> None:
        """A fault of jitcore in `stage`: raised under fullgraph/strict, else reported once per frame and stage."""
        if self.raising():
            raise InternalError(f"jitcore failed during {stage} of {self.where}: {exc}") from exc
        events.emit("fallbacks", f"internal error during {stage} of {self.where}: {type(exc).__name__}: {exc}; "
                    f"running calls like this one natively from now on", key=("internal", self.code, stage), always=True,
                    code=self.code, stage=stage, error=exc)

    def backend_failed(self, exc: Exception) -> None:
        """The backend raised while compiling a graph of this frame."""
        message = (f"backend {self.backend_name!r} failed to compile a graph of {self.where}: "
                   f"{type(exc).__name__}: {exc}")
        if self.raising():
            raise BackendCompileError(message + " (run with backend='eager' to check the graph itself)") from exc
        events.emit("fallbacks", message + "; running it natively", key=("backend", self.code, self.backend_name),
                    always=True, code=self.code, error=exc, backend=self.backend_name)

    def backend_returned(self, result) -> None:
        """The backend returned something that cannot be called in the graph's place (None, a number ...)."""
        what = "None" if result is None else f"{type(result).__name__} {_short_repr(result)}"
        message = (f"backend {self.backend_name!r} returned {what} instead of a callable when compiling a graph of "
                   f"{self.where}")
        if self.raising():
            raise BackendCompileError(message + "; a backend must return the function to run in the graph's place "
                                      "(see jitcore.backends.register_backend)")
        events.emit("fallbacks", message + "; running it natively", key=("backend", self.code, self.backend_name),
                    always=True, code=self.code, returned=what, backend=self.backend_name)

    def first_run_failed(self, exc: Exception) -> None:
        """The backend's compiled graph raised on its first run where the captured graph, run eagerly, did not."""
        message = (f"the graph backend {self.backend_name!r} compiled for {self.where} failed on its first run: "
                   f"{type(exc).__name__}: {exc}")
        if self.raising():
            raise BackendCompileError(message + " (run with backend='eager' to check the graph itself)") from exc
        events.emit("fallbacks", message + "; running it natively from now on", key=("first run", self.code),
                    always=True, code=self.code, error=exc, backend=self.backend_name)

    def rebuild_failed(self, exc: Exception) -> None:
        """An entry's result could not be rebuilt from its graph's outputs (a fault in jitcore's generated code)."""
        if self.raising():
            raise InternalError(f"jitcore failed while rebuilding the result of {self.where}: {exc}") from exc
        events.emit("fallbacks", f"internal error while rebuilding the result of {self.where}: "
                    f"{type(exc).__name__}: {exc}; running it natively from now on", key=("rebuild", self.code),
                    always=True)


def _short_repr(value, limit: int = 40) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


class FirstRun:
    """The backend's compiled graph as an entry calls it until its first run succeeds.

    A backend may do part of its work on the first call (compile lazily, record a CUDA graph). When that first run
    raises, the captured graph runs eagerly on the same inputs to tell whose fault it is: if it raises too, the
    program itself fails and the backend's exception is raised as it came (the entry stays, a later call may
    succeed); if not, the backend is at fault: `on_fault(exc)` contains it (the entry runs natively from then on)
    and this call goes on with the eager graph's outputs. Used only for graphs that mutate no input, which can run
    twice without a visible difference (a graph that draws random numbers runs the second time from the
    generators' state the first found: `uses_rng`). After the first success the entry calls the compiled graph
    directly. A program error raised here reaches the entry, which runs the frame natively (Note [A graph that
    raises], codegen/transform.py).
    """

    def __init__(self, compiled, gm, on_fault, uses_rng: bool = False):
        self.compiled = compiled
        self.gm = gm
        self.on_fault = on_fault
        self.uses_rng = uses_rng
        #: the entry function's globals, set once it is built: where the entry finds its graph
        self.namespace = None
        self.slot = None

    def settle_in(self, namespace: dict, slot: str) -> None:
        """The entry reads its graph from namespace[slot]; a successful first run puts the compiled graph there."""
        self.namespace, self.slot = namespace, slot

    def __call__(self, *inputs):
        rng = RngState() if self.uses_rng else None
        try:
            outputs = self.compiled(*inputs)
        except Exception as exc:
            failure = exc
        else:
            if self.namespace is not None:
                self.namespace[self.slot] = self.compiled
            return outputs
        if rng is not None:
            rng.restore()
        try:
            # forward itself: GraphModule.__call__ prints the graph's code to stderr when it raises
            outputs = self.gm.forward(*inputs)
        except Exception:
            program_fails = True
        else:
            program_fails = False
        if program_fails:
            raise failure
        self.on_fault(failure)
        return outputs
