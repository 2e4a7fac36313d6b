"""torch.inference_mode() is a variant of torch's global state: calls inside it are captured (inference tensors
included) into entries of their own, guarded on the mode and on each tensor input being an inference tensor, and
no single variant that jitcore fails on turns the function native for the others."""
import pytest
import torch

import jitcore as jit
from jitcore.capture.interpreter import CaptureInternalError
from jitcore.runtime import pipeline as cache_module
from tests.support import CountingBackend


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


@pytest.mark.parametrize("way", ["compile", "enabled"])
def test_a_first_call_inside_inference_mode_is_captured_and_outside_gets_its_own_entry(way):
    model = _mlp()
    counting = CountingBackend()
    if way == "compile":
        fn = jit.compile(model, backend=counting)
    else:
        jit.register(model)
        fn = model

    def call(x):
        if way == "compile":
            return fn(x)
        with jit.enabled(backend=counting):
            return fn(x)

    try:
        for inference in (True, True, False, False, True):
            with torch.inference_mode(inference):
                x = torch.randn(3, 4)
                out, expected = call(x), model(x)
                assert out.is_inference() is expected.is_inference() is inference
                assert out.requires_grad is expected.requires_grad
                assert torch.allclose(out, expected)
    finally:
        if way == "enabled":
            jit.unregister(model)
    # one graph per mode (register + enabled runs the very first call natively while it captures)
    assert counting.graph_count == 2


def test_inference_mode_and_inference_tensors_are_guarded_and_folded_as_eager(counting):
    def f(x):
        y = x + 1 if torch.is_inference_mode_enabled() else x - 1
        return y * 2, x.is_inference()

    fn = jit.compile(f, backend=counting)
    with torch.inference_mode():
        inference_x = torch.ones(3)
    normal_x = torch.ones(3)
    for mode, x in [(True, inference_x), (True, normal_x), (False, normal_x), (True, inference_x),
                    (False, normal_x)]:
        with torch.inference_mode(mode):
            (out, flag), (want, want_flag) = fn(x), f(x)
            assert flag is want_flag and torch.equal(out, want)
    assert counting.graph_count == 3  # (mode on, inference x), (mode on, normal x), (mode off, normal x)


def test_inference_tensors_mutated_in_place_inside_inference_mode_match_eager(counting):
    def f(x):
        x[0] = 5.0
        x.add_(1)
        return x.sum()

    fn = jit.compile(f, backend=counting)
    with torch.inference_mode():
        a, b = torch.zeros(3), torch.zeros(3)
        assert torch.equal(f(a), fn(b))
        assert torch.equal(a, b)
    assert counting.graph_count == 1


def test_an_inference_tensor_used_with_autograd_outside_raises_as_eager():
    with torch.inference_mode():
        x = torch.ones(2)
    w = torch.ones(2, requires_grad=True)

    def f(x, w):
        return (x * w).sum()

    with pytest.raises(RuntimeError, match="Inference tensors"):
        f(x, w)
    with pytest.raises(RuntimeError, match="Inference tensors"):
        jit.compile(f, backend="eager")(x, w)


def test_a_variant_jitcore_fails_on_runs_natively_while_other_variants_still_compile(monkeypatch, counting):
    """A contained internal failure makes a native entry under that call's variant, not a catch-all."""
    real_capture = cache_module.capture_frame

    def failing_in_inference_mode(*args, **kwargs):
        if torch.is_inference_mode_enabled():
            raise CaptureInternalError("injected fault")
        return real_capture(*args, **kwargs)

    monkeypatch.setattr(cache_module, "capture_frame", failing_in_inference_mode)

    def f(x):
        return x * 3

    fn = jit.compile(f, backend=counting)
    with torch.inference_mode():
        assert torch.equal(fn(torch.ones(2)), torch.full((2,), 3.0))
    assert counting.graph_count == 0
    assert torch.equal(fn(torch.ones(2)), torch.full((2,), 3.0))
    assert torch.equal(fn(torch.ones(5)), torch.full((5,), 3.0))
    assert counting.graph_count == 2  # the other variants compiled
    with torch.inference_mode():
        fn(torch.ones(2))
    entries = fn._jitcore_cache.entries
    assert [e.native for e in entries] == [True, False, False]  # the failed variant is not captured again


def test_guards_name_inference_mode_and_inference_tensors_when_they_change():
    from jitcore.guards import GlobalStateMatch, TensorMatch
    normal = torch.ones(2, 3)
    with torch.inference_mode():
        state = GlobalStateMatch()
        inference = torch.ones(2, 3)
        assert state.explain() is None
    assert state.explain() == "grad mode changed False -> True; inference mode changed True -> False"
    match = TensorMatch(inference)
    assert match.explain(normal) == "is_inference() changed True -> False"
    assert TensorMatch(normal).explain(inference) == "is_inference() changed False -> True"
    # the Python form of the check (used with dynamic dims) tests it too
    dynamic = TensorMatch(inference, dynamic_dims=frozenset({0}))
    from jitcore.guards import GuardTree, compile_tree
    tree = GuardTree()
    tree.add((("local", "x"),), dynamic, "x")
    check = compile_tree(tree, ["x"], {}, {}).check
    assert check(inference, None) and not check(normal, None)
