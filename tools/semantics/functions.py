"""Functions: closures, nonlocal, defaults, *args/**kwargs, keyword-only, positional-only, lambdas, decorators,
recursion, function attributes, inspect, call of a function stored in a dict."""
import functools
import inspect
import torch
from harness import probe, T, main

G = "functions"


def _pos_only(a, b=2, /, *, c=3):
    return a * b + c


@probe(G)
def closure_read(x):
    k = 3

    def inner(t):
        return t * k
    return inner(x)


@probe(G)
def nonlocal_counter(x):
    n = 0

    def inc():
        nonlocal n
        n += 1
    inc()
    inc()
    return x + n


@probe(G)
def nonlocal_tensor(x):
    acc = x

    def add(v):
        nonlocal acc
        acc = acc + v
    add(1)
    add(x)
    return acc


@probe(G)
def closure_returned_and_called(x):
    def make(k):
        def f(t):
            return t + k
        return f
    return make(1)(x) + make(2)(x)


@probe(G)
def args_kwargs_forward(x):
    def inner(*args, **kwargs):
        return args[0] * kwargs.get("s", 1) + len(args) + len(kwargs)
    return inner(x, 2, s=3)


@probe(G)
def kwargs_unpack_dict(x):
    def inner(t, a=1, b=2):
        return t * a + b
    kw = {"a": 2, "b": 5}
    return inner(x, **kw)


@probe(G)
def args_unpack_list(x):
    return torch.cat([*[x, x]], dim=0)


@probe(G)
def positional_only(x):
    return _pos_only(x, 3, c=1) + _pos_only(x)


@probe(G)
def keyword_only_error(x):
    try:
        return _pos_only(x, 1, 2)
    except TypeError:
        return x - 1


@probe(G)
def default_mutable_arg(x):
    def inner(t, acc=[]):
        acc.append(1)
        return t + len(acc)
    return inner(x)


@probe(G)
def lambda_sorted_closure(x):
    w = {"a": 2, "b": 1}
    keys = sorted(w, key=lambda k: w[k])
    return x + w[keys[0]]


@probe(G)
def decorator_wraps(x):
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            return fn(*a, **k) + 1
        return wrapper

    @deco
    def g(t):
        return t * 2
    return g(x)


@probe(G)
def recursion_small(x):
    def rec(t, n):
        return t if n == 0 else rec(t + 1, n - 1)
    return rec(x, 5)


@probe(G)
def function_attrs(x):
    def g(t):
        return t
    return x + len(g.__name__) + g.__code__.co_argcount


@probe(G)
def function_dict_dispatch(x):
    acts = {"relu": torch.relu, "tanh": torch.tanh, "gelu": torch.nn.functional.gelu}
    return acts["gelu"](x) + acts["tanh"](x)


@probe(G)
def inspect_signature(x):
    def g(a, b=1, *, c=2):
        return a
    params = inspect.signature(g).parameters
    return x + len(params) + ("c" in params)


@probe(G)
def callable_object(x):
    class Mul:
        def __init__(self, k):
            self.k = k

        def __call__(self, t):
            return t * self.k
    return Mul(3)(x)


@probe(G)
def staticmethod_classmethod(x):
    class C:
        base = 2

        @staticmethod
        def s(t):
            return t + 1

        @classmethod
        def c(cls, t):
            return t * cls.base
    return C.s(x) + C.c(x) + C().c(x)


@probe(G)
def generator_expression_sum(x):
    return sum(x * i for i in range(3))


@probe(G)
def nested_comprehension(x):
    m = [[i * j for j in range(3)] for i in range(2)]
    return x + m[1][2] + len({k: v for k, v in zip("ab", (1, 2))})


@probe(G)
def walrus(x):
    if (n := x.shape[0]) > 1:
        return x * n
    return x


@probe(G)
def match_statement(x):
    match x.dim():
        case 1:
            return x + 1
        case 2:
            return x + 2
        case _:
            return x


@probe(G)
def deep_recursion(x):
    def rec(t, n):
        return t if n == 0 else rec(t, n - 1) + 1
    return rec(x, 300)


@probe(G)
def partialmethod_and_cache(x):
    @functools.lru_cache(maxsize=None)
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)
    return x + fib(10)


if __name__ == "__main__":
    main(G)
