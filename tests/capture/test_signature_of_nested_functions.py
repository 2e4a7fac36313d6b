"""Capture: inspect.signature() of a function made inside the compiled function (a nested def or a closure) is
its code's, constant defaults' and annotations' signature, computed at capture time: one graph, as eager, through
jit.compile and register + enabled(); defaults that are tensors break."""

import inspect

from tests.support import check_against_eager, check_registered_against_eager, randn


def test_signature_of_nested_functions_and_closures_in_one_graph():
    def f(x):
        k = 3

        def g(a, b=1, *, c=2):
            return a

        def h(a: int, b=k, *args, c=2, **kw) -> int:
            return a + k

        params = inspect.signature(g).parameters
        s = inspect.signature(h)
        return x + len(params) + ("c" in params), str(s), s.parameters["b"].default, str(s.return_annotation)

    check_against_eager(f, (randn(3, seed=1),), expected_graphs=1)
    assert check_registered_against_eager(f, (randn(3, seed=1),)).graph_count == 1


def test_a_tensor_default_breaks_and_matches_eager():
    def f(x):
        def g(a, b=x):
            return a
        return x + len(inspect.signature(g).parameters)

    check_against_eager(f, (randn(3, seed=1),), expected_graphs=None)
    check_registered_against_eager(f, (randn(3, seed=1),))
