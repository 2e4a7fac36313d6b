"""Class attributes written inside the call, `del obj.attr` of objects passed in, class statements inside."""
import torch
from harness import probe, T, main

G = "class_writes"


class Counter:
    count = 0
    scale = 2


def _reset():
    Counter.count = 0
    Counter.scale = 2
    _Holder.__dict__  # noqa: B018


def _snap():
    return (Counter.count, Counter.scale)


@probe(G, state=(_reset, _snap), calls=3)
def class_counter_increment(x):
    Counter.count += 1
    return x * Counter.count


@probe(G, state=(_reset, _snap), calls=2)
def class_attr_set_then_read_by_instance(x):
    Counter.scale = Counter.scale + 1
    c = Counter()
    return x * c.scale


@probe(G, state=(_reset, _snap), calls=2)
def type_of_self_counter(x):
    c = Counter()
    type(c).count += 2
    return x + c.count


class _Holder:
    def __init__(self):
        self.a = 1
        self.b = 2


@probe(G, args=lambda: (T(), _Holder()))
def del_attr_of_arg(x, h):
    del h.a
    return x * h.b, hasattr(h, "a"), vars(h)


@probe(G, args=lambda: (T(), _Holder()))
def delattr_builtin_of_arg(x, h):
    delattr(h, "b")
    h.c = 5
    return x + h.c, sorted(vars(h))


@probe(G, calls=3)
def class_statement_inside(x):
    class Point:
        def __init__(self, v):
            self.v = v

        def double(self):
            return self.v * 2
    return Point(x).double()


@probe(G, calls=3)
def class_statement_with_class_attr(x):
    class Cfg:
        k = 3

        @property
        def twice(self):
            return self.k * 2
    return x * Cfg().twice + Cfg.k


if __name__ == "__main__":
    main(G)
