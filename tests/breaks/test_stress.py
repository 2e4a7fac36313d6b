"""Stress: broken functions of every kind, called many times with gc in between and alternating shapes.

Each of the functions below breaks at least once (calls, conversions, tensor branches, loops, regions, inlined
calls, side effects, stack depths, NULL slots). They are called in interleaved rounds, 200 calls each, inputs
alternating between two shapes, with `gc.collect()` every 20 rounds; every call is compared with eager (results,
printed output, inputs afterwards). A crash here is a bug (bad exception-table depths or stack slots in generated
code often show up only under gc). The first mismatch of each function is collected so one run reports them all.
"""

import gc

import torch

import jitcore as jit
from tests.breaks.helpers import compare_printing
from tests.support import CountingBackend, randn

ROUNDS = 200
GC_EVERY = 20
SHAPES = ((3, 4), (5, 4))


class _Recorder:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, *exc):
        self.log.append("exit")
        return False


def _helper(t):
    u = torch.sin(t)
    print("helper", u.shape)
    return torch.cos(u)


def _kw(t, key=None):
    return t if key is None else t * key


@jit.disable
def _native(t):
    return t * 3


def _print_between(x):
    y = x + 1
    print(y.shape)
    return y * 2


def _item(x):
    n = int((x > 0).sum().item())
    return x * n


def _tolist(x):
    rows = x[:, 0].tolist()
    return x + len(rows), rows


def _numpy(x):
    a = (x * 2).numpy()
    return torch.from_numpy(a.copy()) - x


def _tensor_branch(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


def _tensor_while(x):
    t = x.abs() + 1
    steps = 0
    while t.max() > 1:
        t = t / 2
        steps += 1
    return t, steps


def _loop_print(x):
    for i in range(10):
        x = x + i
        print(i)
    return x


def _no_grad_print(x):
    with torch.no_grad():
        y = x * 2
        print("no grad")
        z = y + 1
    return z


def _user_context_manager(x, log):
    with _Recorder(log):
        y = x * 2
        print("cm")
    return y + 1


def _try_except(x):
    try:
        y = x * 2
        print("try")
        raise ValueError(f"rows {y.shape[0]}")
    except ValueError as error:
        return y, str(error)


def _inlined(x):
    return _helper(x * 2) + 1


def _list_side_effects(x, out):
    out.append(x.shape[0])
    print(len(out))
    out.pop(0)
    return x * len(out)


def _dict_side_effects(x, d):
    d["n"] = d.get("n", 0) + 1
    print("n", d["n"])
    return x * d["n"]


def _mid_expression_and_keywords(x):
    return torch.clamp(x, min=float(x.max().item()) - 1) + (print("m") or 1)


def _comprehension(x):
    t = "saved"
    return [print(t.shape) or t * 2 for t in x.unbind(0)], t


def _null_slots(x, out):
    out.append(print("append") or x.sum())
    return _kw(x, key=print("kw") or 2), len(out)


def _disabled(x):
    y = x + 1
    return _native(y) - y


def _try_escaping(x):
    try:
        v = x.sum().item()
        return [1, 2][int(v > 0) + 5]
    except KeyError:
        return None


def _rows(x):
    for row in x.unbind(0):
        yield row * 2


def _generator_loop(x):
    acc = x[0] * 0
    for row in _rows(x):
        acc = acc + row
    return acc


def _inlined_twice(x):
    a = _helper(x)
    b = _helper(a)
    return a + b


def _make_closure():
    count = 0

    def closure(x):
        nonlocal count
        count = (count + 1) % 3  # three values: the cell's value may be guarded
        print("count", count)
        return x * count

    return closure


#: name -> (maker of a fresh function, maker of the extra arguments for one call)
CASES = {
    "print_between": (lambda: _print_between, lambda: ()),
    "item": (lambda: _item, lambda: ()),
    "tolist": (lambda: _tolist, lambda: ()),
    "numpy": (lambda: _numpy, lambda: ()),
    "tensor_branch": (lambda: _tensor_branch, lambda: ()),
    "tensor_while": (lambda: _tensor_while, lambda: ()),
    "loop_print": (lambda: _loop_print, lambda: ()),
    "no_grad_print": (lambda: _no_grad_print, lambda: ()),
    "user_context_manager": (lambda: _user_context_manager, lambda: ([],)),
    "try_except": (lambda: _try_except, lambda: ()),
    "inlined": (lambda: _inlined, lambda: ()),
    "list_side_effects": (lambda: _list_side_effects, lambda: ([1, 2],)),
    "dict_side_effects": (lambda: _dict_side_effects, lambda: ({"n": 1},)),
    "mid_expression_and_keywords": (lambda: _mid_expression_and_keywords, lambda: ()),
    "comprehension": (lambda: _comprehension, lambda: ()),
    "null_slots": (lambda: _null_slots, lambda: ([],)),
    "disabled": (lambda: _disabled, lambda: ()),
    "closure": (_make_closure, lambda: ()),
    "try_escaping": (lambda: _try_escaping, lambda: ()),
    "generator_loop": (lambda: _generator_loop, lambda: ()),
    "inlined_twice": (lambda: _inlined_twice, lambda: ()),
}


def test_broken_functions_called_200_times_with_gc_match_eager(capsys):
    pool = [randn(*shape, seed=seed) for seed in range(4) for shape in SHAPES]  # shapes alternate with the index
    runners = {}
    for name, (make, _) in CASES.items():
        eager, backend = make(), CountingBackend()
        runners[name] = (eager, jit.compile(make(), backend=backend, cache_limit=64))
    failures = {}
    for round_index in range(ROUNDS):
        x = pool[round_index % len(pool)]
        for name, (eager, compiled) in runners.items():
            if name in failures:
                continue
            try:
                compare_printing(eager, compiled, (x, *CASES[name][1]()), capsys)
            except Exception as error:  # noqa: BLE001 - collected, reported together below
                failures[name] = f"call {round_index}: {type(error).__name__}: {str(error).splitlines()[0][:200]}"
        if round_index % GC_EVERY == GC_EVERY - 1:
            gc.collect()
    assert not failures, "\n".join(f"{name}: {message}" for name, message in failures.items())
