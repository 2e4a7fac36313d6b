"""Generators and context managers inside compiled code."""
import contextlib
import torch
from harness import probe, T, main

G = "gen_ctx"


def _gen(t, n):
    for i in range(n):
        yield t * i


@probe(G)
def generator_list(x):
    return list(_gen(x, 3))


@probe(G)
def generator_next(x):
    g = _gen(x, 3)
    next(g)
    return next(g)


@probe(G)
def yield_from(x):
    def outer(t):
        yield from _gen(t, 2)
        yield t * 10
    return sum(outer(x))


@probe(G)
def generator_send(x):
    def acc():
        total = 0
        while True:
            v = yield total
            total += v
    g = acc()
    next(g)
    g.send(2)
    return x + g.send(3)


@probe(G)
def generator_in_zip(x):
    return [a + b for a, b in zip(_gen(x, 2), _gen(x, 3))]


@probe(G)
def contextmanager_user(x):
    log = []

    @contextlib.contextmanager
    def cm():
        log.append("in")
        yield 2
        log.append("out")
    with cm() as k:
        y = x * k
    return y + len(log)


@probe(G)
def class_context_manager(x):
    class CM:
        def __enter__(self):
            self.v = 3
            return self

        def __exit__(self, *a):
            self.v = 0
            return False
    c = CM()
    with c as cc:
        y = x * cc.v
    return y + c.v


@probe(G)
def no_grad_region(x):
    with torch.no_grad():
        y = x * 2
    return y + x


@probe(G)
def nullcontext(x):
    with contextlib.nullcontext():
        return x + 1


@probe(G)
def exitstack(x):
    with contextlib.ExitStack() as st:
        st.enter_context(torch.no_grad())
        return x * 2


@probe(G)
def enable_grad_nested(x):
    with torch.no_grad():
        with torch.enable_grad():
            return x + torch.is_grad_enabled()


@probe(G)
def autocast_cpu(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return torch.mm(x, x.t())


@probe(G)
def generator_early_break(x):
    out = x
    for v in _gen(x, 100):
        out = out + v
        if v is not None:
            break
    return out


@probe(G)
def generator_expression_any(x):
    return x + any(d == 3 for d in x.shape)


if __name__ == "__main__":
    main(G)
