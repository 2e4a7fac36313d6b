"""functools.partial objects: attributes, calls, nesting (test_functions.py partial tests)."""
import functools
import torch
from harness import probe, T, main

G = "partial"


def _scale(x, a, b=1.0):
    return x * a + b


P_GLOBAL = functools.partial(_scale, b=2.0)


@probe(G)
def partial_call_kw(x):
    p = functools.partial(_scale, b=3.0)
    return p(x, 2.0)


@probe(G)
def partial_global_call(x):
    return P_GLOBAL(x, 0.5)


@probe(G)
def partial_func_attr(x):
    p = functools.partial(_scale, a=2.0)
    if p.func is _scale:
        return x + 1
    return x - 1


@probe(G)
def partial_args_keywords(x):
    p = functools.partial(_scale, 3.0)
    q = functools.partial(_scale, b=4.0)
    return x * len(p.args) + q.keywords["b"]


@probe(G)
def partial_dunder_call(x):
    p = functools.partial(torch.add, alpha=2)
    return p.__call__(x, x)


@probe(G)
def partial_hasattr(x):
    p = functools.partial(_scale, a=1.0)
    return x + (1 if hasattr(p, "func") else 0) + (10 if hasattr(p, "nope") else 0)


@probe(G)
def partial_dict_attr(x):
    p = functools.partial(_scale, a=1.0)
    return x + len(p.__dict__)


@probe(G)
def partial_func_name(x):
    p = functools.partial(_scale, a=1.0)
    return x + len(p.func.__name__)


@probe(G)
def partial_nested(x):
    p = functools.partial(_scale, b=1.0)
    q = functools.partial(p, a=3.0)
    return q(x)


@probe(G)
def partial_of_lambda(x):
    p = functools.partial(lambda t, k: t.pow(k), k=2)
    return p(x)


@probe(G)
def partial_torch_fn(x):
    clip = functools.partial(torch.clamp, min=-0.5, max=0.5)
    return clip(x)


@probe(G)
def partial_of_module_method(x):
    lin = torch.nn.functional.linear
    p = functools.partial(lin, weight=torch.ones(4, 3))
    return p(x)


@probe(G)
def partial_callable(x):
    p = functools.partial(_scale, a=1.0)
    return x + (1 if callable(p) else 0)


@probe(G, args=lambda: (T(), functools.partial(_scale, b=5.0)))
def partial_passed_in(x, p):
    return p(x, 2.0) + p.keywords["b"]


@probe(G)
def partial_isinstance(x):
    p = functools.partial(_scale, a=1.0)
    return x + (1 if isinstance(p, functools.partial) else 0)


@probe(G)
def partial_in_list_map(x):
    fns = [functools.partial(torch.mul, other=k) for k in (1.0, 2.0, 3.0)]
    return sum(f(x) for f in fns)


@probe(G)
def partial_wraps(x):
    @functools.wraps(_scale)
    def w(*a, **k):
        return _scale(*a, **k)
    return w(x, 2.0), w.__name__


if __name__ == "__main__":
    main(G)
