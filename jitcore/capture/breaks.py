"""The one catalogue of graph-break kinds, and the exception that carries a break.

A handler or a value that cannot continue raises `GraphBreak(kind, detail)`. Each kind has a stable id, a one-line
explanation for the user and a hint. The interpreter adds the user's file:line before anyone reports it.
"""
from __future__ import annotations

import dataclasses

__all__ = ["BreakKind", "GraphBreak", "KINDS", "kind"]


@dataclasses.dataclass(frozen=True)
class BreakKind:
    """One kind of break: a stable id, a one-line explanation and a hint for the user. `hints` holds the hint for
    one break in the user's terms, by variant ("" is the kind's own): templates that name `{where}` (the user's
    function) and the fields of their variant. A break picks its variant where it is raised (GraphBreak.hint), or
    the report picks one from the user's source line."""
    id: str
    explanation: str
    hint: str
    hints: dict = dataclasses.field(default_factory=dict, compare=False)

    def hint_text(self, variant: str = "", **fields) -> str:
        """The hint for one break of this kind: its variant's template filled in, else the kind's hint."""
        template = self.hints.get(variant, self.hints.get(""))
        return self.hint if template is None else template.format(**fields)


KINDS: dict[str, BreakKind] = {}


def _kind(id: str, explanation: str, hint: str, **hints: str) -> None:
    """Add a kind; `here=` is its hint in the user's terms (the "" variant), other keywords name variants."""
    KINDS[id] = BreakKind(id, explanation, hint, {("" if v == "here" else v): t for v, t in hints.items()})


_kind("unsupported_opcode", "this bytecode instruction is not supported by jitcore's interpreter",
      "move this statement out of the compiled function, or mark the helper that holds it with jit.disable",
      here="move this statement into a helper marked with @jit.disable, or out of {where}")
_kind("unsupported_call", "a call to a function jitcore cannot trace or put in the graph",
      "move the call out of the compiled function, or wrap it with jit.allow_in_graph if it only does tensor work",
      here="move the call out of {where}, mark the callee with @jit.disable to keep it out of tracing, or wrap it "
           "with jit.allow_in_graph if it only does tensor work",
      process_state="call {callee} once outside {where} (e.g. at start-up)")
_kind("debugger", "a debugger is entered here (breakpoint(), pdb.set_trace()): the function runs in Python, so "
      "the debugger stops in its own frame with its own variables",
      "remove the breakpoint when you are done debugging; the function is compiled again then",
      here="nothing to do while debugging: {where} runs in Python for calls like this one; remove the breakpoint "
           "to compile it again")
_kind("class_statement", "a class statement runs in Python (a new class each call)",
      "define the class at module level, outside the compiled function",
      here="define the class at module level instead of inside {where}; the code after it is compiled")
_kind("print_or_io", "printing, logging and I/O have to run in Python",
      "move the print/log call out of the compiled function, or only print outside the hot path",
      here="move the print/log call out of {where} (return the value and print it after the call), or print only "
           "outside the hot path")
_kind("numpy", "a NumPy operation jitcore cannot trace into the graph exactly as NumPy computes it (torch._numpy "
      "would give another type, dtype or shape, or the operation is not modelled)",
      "keep the NumPy code outside the compiled function, or write it with torch operations",
      here="move this NumPy code out of {where}, or write it with torch operations")
_kind("data_dependent", "the value of a tensor is needed as a Python value (.item(), .tolist(), .numpy(), bool())",
      "keep the value as a tensor (e.g. use torch.where instead of a Python `if` on a tensor)",
      here="keep the value as a tensor in {where}: use torch.where / masking instead of a Python number",
      call="keep the value as a tensor instead of calling {call} inside {where} (torch.where, masking and "
           "reductions stay in the graph); read the Python value after the call returns")
_kind("tensor_branch", "a Python branch depends on a tensor's value",
      "use torch.where / masking instead of a Python if on a tensor, or move the decision out of the function",
      here="use torch.where / masking instead of a Python branch on a tensor's value in {where}",
      condition="use torch.where({condition}, a, b) instead of a Python `if` on a tensor, or decide outside "
                "{where} and pass the choice in as a Python value")
_kind("disabled_function", "the function is marked with jit.disable", "this break is what jit.disable asks for",
      here="this function is marked with jit.disable, so it runs in Python; remove the mark to compile it")
_kind("torch_runtime", "a call into torch's machinery (autograd, an optimizer, a function torch keeps "
      "uncompiled), which runs in Python, as under torch.compile",
      "expected: the call runs in Python between two graphs",
      here="expected: the call runs in Python between two graphs of {where}")
_kind("unsupported_value", "an operation on a kind of Python value jitcore does not model",
      "move this operation out of the compiled function, or pass plain tensors/containers instead")
_kind("side_effect", "a mutation of an object that existed before the call",
      "return the new value instead of mutating a pre-existing object inside the compiled function",
      here="return the new value from {where} instead of mutating an object that existed before the call")
_kind("fake_tensor_error", "the tensor operation failed while jitcore traced it with fake tensors",
      "check the shapes/dtypes of this operation; if eager runs it fine, report it as a jitcore bug")
_kind("raise_after_write", "an operation that can raise on tensor data follows an in-place write jitcore cannot "
      "undo, so it runs after that write and the side effects before it, where Python's `try` sees it",
      "write to a copy (x = x.clone()) before the in-place operation, or do the checked indexing first")
_kind("input_write_autograd", "an in-place write to an input tensor whose earlier reads autograd depends on: "
      "AOTAutograd cannot compile it in one graph with them", "write to a copy (x = x.clone()) of the input instead, "
      "or make the write before the reads")
_kind("user_exception", "the traced code raises an exception", "exceptions are re-raised by running the code natively")
_kind("generator", "generators and coroutines run natively", "move tensor work out of the generator into a function",
      here="move the tensor work out of the generator into a plain function, which jitcore can compile")
_kind("recursion_limit", "inlining went too deep", "mark the recursive helper with jit.disable",
      here="mark the recursive helper with @jit.disable")
_kind("autograd", "the backward pass and optimizer steps run in Python (autograd's engine, optimizer.step())",
      "this break is where the backward pass runs: what comes before and after it is compiled",
      here="this break in {where} is where autograd or the optimizer runs; the code before and after it is compiled")
_kind("hooks", "a module with hooks is called", "remove the hooks, or call the module outside the compiled function",
      here="remove the module's hooks, or call the module outside {where}")
_kind("distributed_module", "a DistributedDataParallel or FSDP2 (fully_shard) module is called: its own "
      "bookkeeping (DDP's reducer, FSDP's all-gather and reshard hooks) runs natively, and the forward it wraps "
      "is compiled as a graph of its own",
      "nothing to do: this split is intended; compile the DDP/FSDP module itself to skip the calling frame's graph",
      here="nothing to do: the module runs its hooks natively and its forward compiled")
_kind("tensor_subclass", "a tensor subclass with __torch_function__ is used (its results are subclass instances "
      "with behaviour of their own), so the function runs in Python for such inputs",
      "pass plain tensors (x.as_subclass(torch.Tensor)), or disable __torch_function__ on the subclass")
_kind("torch_function_mode", "a TorchFunctionMode (`with mode:`) is active: its __torch_function__ decides what "
      "every torch call does, so the code under it runs in Python",
      "enter the mode outside the compiled function, or keep the code under it small",
      here="enter the mode outside {where}, or keep the code under it small")
_kind("vmap", "a torch.vmap call whose function cannot be traced as one pure graph (it breaks, raises, mutates "
      "state, or uses options jitcore does not model), so the vmapped call runs in Python",
      "keep the vmapped function to tensor operations on its arguments and closures; move prints and mutations out",
      here="keep the function {where} vmaps to tensor operations; move prints and mutations out of it")
_kind("context_var", "a ContextVar.set() whose token Python needs after the graph (at a later break, returned or "
      "stored) runs in Python, so that the token is the real one",
      "reset the variable inside the compiled function (try/finally around the code that reads it), or keep the "
      "token out of what the function returns and stores",
      here="keep the token of this set() inside {where}: reset it there, before any call that breaks the graph")
_kind("unsupported_output", "the function returns a value jitcore cannot rebuild",
      "return tensors, Python constants, or tuples/lists/dicts of them")


def kind(id: str) -> BreakKind:
    return KINDS[id]


class GraphBreak(Exception):
    """Capture cannot continue here. `kind` is a key of KINDS; `detail` says what exactly (the user's names).

    Typed fields, never parsed back from the text: `exc_type` and `message` for a modelled operation that raises a
    Python exception (kind user_exception, made with `GraphBreak.raises`), so a traced `except` can catch it;
    `hint` and `hint_fields`, the variant of its kind's hint in the catalogue that fits this break and its fields.
    """

    def __init__(self, kind: str, detail: str = "", *, exc_type: type | None = None, message: str = "",
                 hint: str = "", hint_fields: dict | None = None, untouched=None):
        if kind not in KINDS:
            raise KeyError(f"graph-break kind {kind!r} is not in the catalogue (capture/breaks.py)")
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail
        #: the Python exception the modelled operation raises (None: the break is not a raised exception)
        self.exc_type = exc_type
        #: that exception's message, and its exact arguments when known (GraphBreak.raises)
        self.message = message
        self.exc_args: tuple | None = None
        #: which of its kind's hints in the catalogue fits this break ("": chosen by the report), and its fields
        if hint and hint not in KINDS[kind].hints:
            raise KeyError(f"hint {hint!r} of graph-break kind {kind!r} is not in the catalogue (capture/breaks.py)")
        self.hint = hint
        self.hint_fields = hint_fields or {}
        #: filled by the interpreter: (filename, lineno, source line, function name)
        self.location: tuple | None = None
        #: filled by the interpreter: the torch function the break happened in, when it was inlining torch's own
        #: code (the location is then the user's call into torch)
        self.inside_torch = ""
        #: filled by the interpreter: where the root frame stood when capture stopped (its break point)
        self.root_offset: int | None = None
        self.root_visit = None
        #: the whole frame must run natively for calls like this one (no prefix graph, no resume point)
        self.whole_frame = False
        #: filled by capture: the guards gathered before the break (they decide when the same break happens again)
        self.guards: list = []
        #: filled by capture: the traced code asked torch.compiler.is_compiling() before this break (Note
        #: [is_compiling() when the traced code raises], capture/frame.py)
        self.asked_compiling = False
        #: the value (or the real callable) whose operation raised this before doing anything: a call that is a
        #: break as such, a tensor's truth. Set only where raising is the operation's first step (Note [A break
        #: at an untouched instruction], capture/frame.py); None: unknown
        self.untouched = untouched
        #: capture must stop at an earlier root-frame instruction than the break it was replaying to
        #: (`root_offset`/`root_visit`): a ContextVar token made there is needed after the graph (Note [Context
        #: variables], capture/values/context_vars.py)
        self.earlier = False
        #: set by the runtime: the break lies inside a loop, so its frame runs natively with the functions it
        #: calls compiled (Note [Breaks inside loops], capture/loop_breaks.py)
        self.in_loop = False

    @classmethod
    def raises(cls, exc_type: type, message: str = "", args: tuple | None = None) -> "GraphBreak":
        """The break for an operation that raises `exc_type(message)` in Python (its detail reads as Python's
        traceback line does: `KeyError: 'a'`). `args`: the exception's exact constructor arguments, where the
        model knows them (traced handlers can then read `str(e)` and `e.args`)."""
        detail = f"{exc_type.__name__}: {message}" if message else exc_type.__name__
        brk = cls("user_exception", detail, exc_type=exc_type, message=message)
        brk.exc_args = args
        return brk

    def fresh(self) -> "GraphBreak":
        """A new break of the same kind, detail and typed fields, not located yet."""
        brk = GraphBreak(self.kind, self.detail, exc_type=self.exc_type, message=self.message, hint=self.hint,
                         hint_fields=self.hint_fields)
        brk.exc_args = self.exc_args
        return brk

    @property
    def info(self) -> BreakKind:
        return KINDS[self.kind]

    def describe(self) -> str:
        where = ""
        if self.location:
            filename, lineno, line, func = self.location
            where = f" at {filename}:{lineno} in {func}()" + (f"\n    {line.strip()}" if line else "")
        detail = f" ({self.detail})" if self.detail else ""
        return f"{self.info.explanation}{detail}{where}\n  hint: {self.info.hint}"


class TracedException(Exception):
    """Python-level carrier of a traced `raise`: unwinds the interpreter's frames to a handler they contain.
    `origin` is where the root frame was when it was raised: a graph break inside the handler is moved there.
    It lives beside GraphBreak because both cross every value kind (an attribute hook that raises, say)."""

    def __init__(self, value, origin):
        super().__init__(value.cls.__name__)
        self.value = value
        self.origin = origin


def raises_attribute_error(exc: Exception) -> bool:
    """Whether a capture-time exception stands for an AttributeError the program raised (a traced `raise` in a
    `__getattr__`/`__getattribute__`, or an operation modelled as raising one): what getattr's default and
    hasattr catch."""
    if isinstance(exc, TracedException):
        return issubclass(exc.value.cls, AttributeError)
    return isinstance(exc, GraphBreak) and exc.exc_type is not None and issubclass(exc.exc_type, AttributeError)

