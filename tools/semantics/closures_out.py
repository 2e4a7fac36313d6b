"""Returning closures and lambdas made inside the compiled function, called outside."""
import torch
from harness import probe, T, main

G = "closures"


def _call_with_t(fn):
    return fn(T(seed=3))


@probe(G, post=_call_with_t)
def return_lambda(x):
    y = x + 1
    return lambda t: t * 2 + y


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


@probe(G, post=lambda r: (r[0], [f(T(seed=5)) for f in r[1]]))
def return_list_of_lambdas(x):
    return x.cos(), [lambda t, i=i: t * i for i in range(3)]


@probe(G, post=lambda r: (r[0], r[1](), r[1](), r[2]()))
def return_counter_closure(x):
    n = 0

    def tick():
        nonlocal n
        n += 1
        return n

    def peek():
        return n
    tick()
    return x.sin(), tick, peek


@probe(G, post=lambda r: (r[0], r[1].__name__, r[1].__qualname__, r[1](T(seed=6)), r[1].__defaults__))
def return_function_with_defaults(x):
    def scaled(t, s=x.shape[0]):
        return t * s
    return x - 1, scaled


@probe(G, post=_call_with_t)
def return_closure_cell_updated_later(x):
    scale = x.sum()

    def f(t):
        return t * scale
    scale = scale * 5
    return f


@probe(G, post=lambda g: g(T(seed=7))(2))
def return_nested_closure_factory(x):
    x = x.exp()

    def outer(t):
        def inner(k):
            return t * k + x
        return inner
    return outer


@probe(G, post=lambda f: f(T(seed=8)))
def return_closure_made_by_inlined_factory(x):
    def make(scale):
        return lambda t: t * scale + 1
    return make(x.sum())


if __name__ == "__main__":
    main(G)
