"""Generators: `yield from`, send/throw/close, and module iterators (parameters(), children(), ...) in forward."""
import torch
from torch import nn
from harness import probe, T, main

G = "generators"


def _count(n):
    for i in range(n):
        yield i


def _sub(t):
    yield t + 1
    yield t + 2
    return 7


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = nn.Linear(3, 3)
        self.b = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 3))
        self.register_buffer("scale", torch.ones(3))


def _net():
    return (T(), _Net())


@probe(G)
def yield_from_return_value(x):
    out = []

    def outer(t):
        r = yield from _sub(t)
        yield t * r
    for v in outer(x):
        out.append(v)
    return out


@probe(G)
def yield_from_list_and_range(x):
    def g():
        yield from [1, 2]
        yield from range(3)
        yield from (x, x)
    return [v if isinstance(v, int) else v.sum() for v in g()]


@probe(G)
def yield_from_nested(x):
    def inner(n):
        yield from _count(n)

    def outer():
        yield from inner(2)
        yield from inner(3)
    return x + sum(outer())


@probe(G)
def send_returns_next_yield(x):
    def echo():
        v = 0
        while True:
            v = yield v * 2
    g = echo()
    next(g)
    return x + g.send(3) + g.send(4)


@probe(G)
def send_until_stop_value(x):
    def avg():
        total, n = 0.0, 0
        while n < 3:
            total += yield
            n += 1
        return total / n
    g = avg()
    next(g)
    g.send(1.0)
    g.send(2.0)
    try:
        g.send(6.0)
    except StopIteration as e:
        return x * e.value


@probe(G)
def send_through_yield_from(x):
    def inner():
        a = yield 1
        b = yield a + 1
        return a + b

    def outer():
        r = yield from inner()
        yield r * 10
    g = outer()
    first = next(g)
    second = g.send(5)
    third = g.send(6)
    return x + first + second + third


@probe(G)
def throw_caught_inside(x):
    def g():
        try:
            yield 1
        except ValueError:
            yield 100
        yield 3
    it = g()
    a = next(it)
    b = it.throw(ValueError("boom"))
    c = next(it)
    return x + a + b + c


@probe(G)
def throw_uncaught_propagates(x):
    log = []

    def g():
        try:
            yield 1
        finally:
            log.append("finally")
    it = g()
    next(it)
    try:
        it.throw(KeyError("k"))
    except KeyError:
        log.append("caught")
    return x + len(log), log


@probe(G)
def close_runs_finally(x):
    log = []

    def g():
        try:
            yield 1
            yield 2
        finally:
            log.append("closed")
    it = g()
    next(it)
    it.close()
    return x + len(log), log, list(it)


@probe(G)
def close_generator_exit_handler(x):
    log = []

    def g():
        try:
            yield 1
        except GeneratorExit:
            log.append("exit")
            raise
    it = g()
    next(it)
    it.close()
    it.close()
    return x * 2, log


@probe(G)
def close_unstarted(x):
    def g():
        yield x
    it = g()
    it.close()
    return x + len(list(it))


@probe(G, args=_net)
def parameters_sum(x, m):
    return x + sum(p.sum() for p in m.parameters())


@probe(G, args=_net)
def named_parameters_dict(x, m):
    d = dict(m.named_parameters())
    return x @ d["a.weight"] + d["b.2.bias"], sorted(d)


@probe(G, args=_net)
def children_and_modules(x, m):
    kinds = [type(c).__name__ for c in m.children()]
    n = len(list(m.modules()))
    return x * n, kinds


@probe(G, args=_net)
def named_modules_names(x, m):
    names = [n for n, _ in m.named_modules()]
    for _, mod in m.named_modules():
        if isinstance(mod, nn.Linear):
            x = mod(x)
    return x, names


@probe(G, args=_net)
def buffers_and_named_buffers(x, m):
    total = x
    for b in m.buffers():
        total = total * b
    return total, [n for n, _ in m.named_buffers()]


@probe(G, args=_net)
def parameters_count_numel(x, m):
    return x + sum(p.numel() for p in m.parameters() if p.requires_grad)


class _SelfSum(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.l1 = nn.Linear(3, 3)
        self.l2 = nn.Linear(3, 3)

    def forward(self, x):
        reg = sum(p.pow(2).sum() for p in self.parameters())
        for c in self.children():
            x = c(x)
        return x + reg


@probe(G, args=lambda: (T(), _SelfSum()))
def forward_iterates_self_parameters(x, m):
    return m(x)


@probe(G)
def generator_return_in_for(x):
    def g():
        yield 1
        return 5
    out = [v for v in g()]
    return x + sum(out)


if __name__ == "__main__":
    main(G)
