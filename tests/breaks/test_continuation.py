"""What a break hands on: only live locals reach a resume function, a callee's compiled copy is decided and
guarded during capture, and the resume caches let a dropped function's code go."""
import dis
import gc
import weakref

import torch
from torch import nn

import jitcore as jit
from jitcore.capture import resume_points
from jitcore.codegen import resume
from jitcore.runtime.cache import Options
from jitcore.runtime.resume_fns import _RESUMES, resume_function
from tests.breaks.helpers import check_breaks, compare_printing
from tests.support import randn


def _parameters(fn) -> list:
    code = fn.__code__
    return [name for name in code.co_varnames[:code.co_argcount] if not name.startswith("___")]


def test_a_resume_function_receives_only_the_locals_read_after_the_break(counting, capsys):
    def f(x, unused):
        dead = x * 2
        kept = x + 1
        print("break")
        return kept * 3

    check_breaks(f, (randn(3), randn(3)), counting=counting, capsys=capsys)
    (resumed,) = _RESUMES.get(f.__code__).values()
    assert _parameters(resumed) == ["kept"]
    # the prefix graph hands on `kept` alone: `dead` is not rebuilt
    outputs = [node for node in counting.graphs[0].graph.nodes if node.op == "output"]
    assert len(outputs[0].args[0]) == 1


def test_a_live_local_unbound_at_the_break_raises_as_eager_does(counting, capsys):
    def f(x, flag):
        if flag:
            y = x + 1
        print("break")
        return x + y

    check_breaks(f, (randn(3), True), (randn(3), False), counting=counting, capsys=capsys)


def test_each_successor_of_a_branch_receives_its_own_live_locals(counting, capsys):
    def f(x, a, b):
        if x.sum() > 0:
            return a * 2
        return b * 3

    check_breaks(f, (randn(3), randn(3), randn(3)), (-randn(3), randn(3), randn(3)), counting=counting,
                 capsys=capsys)
    params = sorted(_parameters(fn) for fn in _RESUMES.get(f.__code__).values())
    assert params == [["a"], ["b"]]


class _Inner(nn.Module):
    def forward(self, x):
        print("inside")
        return x.sin()


class _Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = _Inner()

    def forward(self, x):
        return self.inner(x.cos()) + 1


def test_a_module_called_at_a_break_runs_its_compiled_forward_only_while_it_has_no_hooks(counting, capsys):
    model = _Outer()
    compiled = jit.compile(model, backend=counting)
    x = randn(3)
    compare_printing(model, compiled, (x,), capsys)
    assert counting.graph_count >= 2  # the callee's forward was captured on its own
    model.inner.register_forward_hook(lambda module, args, out: out * 10)
    compare_printing(model, compiled, (x,), capsys)


def test_the_resume_caches_let_a_dropped_code_object_go():
    namespace = {}
    exec("def made(x):\n    y = x + 1\n    print(end='')\n    return y * 2\n", namespace)
    code = namespace.pop("made").__code__
    target = next(i.offset for i in dis.get_instructions(code) if i.opname == "POP_TOP")
    offsets_before = len(resume.OFFSETS)
    resumed = resume_function(code, {}, target, ("value",), ("y",), Options(backend=None, backend_name="eager"))
    # a stub: no resume code is assembled until it runs natively (Note [Resume functions are stubs])
    (stub,) = [ref for ref, point in resume_points._POINTS._entries.values() if point.original is code]
    assert _RESUMES.get(code) and len(resume.OFFSETS) == offsets_before
    original = weakref.ref(code)
    del code
    gc.collect()
    assert original() is None and len(_RESUMES) == 0
    del resumed
    gc.collect()
    assert stub() is None
