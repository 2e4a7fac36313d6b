"""Returning closures and lambdas made inside the compiled function, called outside."""
import torch
from harness import probe, T, main

G = "closures"


def _call_with_t(fn):
    return fn(T(seed=3))


@probe(G, post=_call_with_t)
def return_lambda(x):
    return lambda t: t * 2 + 1


@probe(G, post=_call_with_t)
def return_closure_over_tensor(x):
    y = x.sum()

    def f(t):
        return t + y
    return f


@probe(G, post=lambda r: (r[0](T(seed=4)), r[1]))
def return_closure_and_value(x):
    k = x.shape[0]

    def f(t):
        return t * k
    return f, x + 1


@probe(G, post=lambda fns: [f(T(seed=5)) for f in fns])
def return_list_of_lambdas(x):
    return [lambda t, i=i: t * i for i in range(3)]


@probe(G, post=lambda r: (r(), r(), r()))
def return_counter_closure(x):
    n = 0

    def tick():
        nonlocal n
        n += 1
        return n
    tick()
    return tick


@probe(G, post=lambda f: (f.__name__, f(T(seed=6)), f.__defaults__))
def return_function_with_defaults(x):
    def scaled(t, s=3):
        return t * s
    return scaled


@probe(G, post=_call_with_t)
def return_closure_cell_updated_later(x):
    scale = 1

    def f(t):
        return t * scale
    scale = 5
    return f


@probe(G, post=lambda g: g(T(seed=7))(2))
def return_nested_closure_factory(x):
    def outer(t):
        def inner(k):
            return t * k + x
        return inner
    return outer


if __name__ == "__main__":
    main(G)
