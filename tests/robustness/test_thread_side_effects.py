"""Side effects replayed after a graph give what Python gives when threads interleave between bytecodes: a write
another thread made to the same container between this call's guards and its replay is never lost, no key is ever
missing while a replay runs, and no write is duplicated (capture/side_effects.py, Note [Write-back is a delta]).

Each race runs a bounded number of calls with a tiny switch interval, so threads switch inside replays.
"""
import sys
import threading

import pytest
import torch

import jitcore as jit
from tests.support import CountingBackend


@pytest.fixture
def fast_switching():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


def _race(fn, n_threads, work):
    """Run `work(fn, thread_index)` in n_threads threads at once; the exceptions they raised."""
    errors = []
    start = threading.Barrier(n_threads)

    def body(t):
        try:
            start.wait(10)
            work(fn, t)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors.append(repr(exc))

    threads = [threading.Thread(target=body, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    return errors


def store_key(d, key, x):
    d[key] = 1
    return (x * 2 + 1).sum()


def _distinct_keys(fn, t, d, x, per_thread):
    for i in range(per_thread):
        out = fn(d, f"{t}-{i}", x)
        assert torch.equal(out, (x * 2 + 1).sum())


@pytest.mark.parametrize("way", ["compile", "enabled"])
def test_threads_storing_distinct_keys_into_one_dict_keep_every_key(fast_switching, way):
    """ISSUE18: 8 threads x 400 keys through one compiled function: eager keeps 3,200 keys, so must jitcore."""
    d, x = {}, torch.randn(4)
    if way == "compile":
        fn = jit.compile(store_key, backend="eager")
        errors = _race(fn, 8, lambda fn, t: _distinct_keys(fn, t, d, x, 400))
    else:
        jit.register(store_key)

        def work(fn, t):
            with jit.enabled(backend="eager"):
                _distinct_keys(fn, t, d, x, 400)
        try:
            errors = _race(store_key, 8, work)
        finally:
            jit.unregister(store_key)
    assert errors == []
    assert len(d) == 3200 and set(d) == {f"{t}-{i}" for t in range(8) for i in range(400)}


def publish(slots, log, name, x):
    y = x * 2
    slots[name] = y
    log.append(y)
    return y.sum()


def test_compiled_entries_reused_by_racing_threads_lose_no_write_and_duplicate_none(fast_switching):
    """The same few entries serve every call (one key per thread): each thread's last write to its own key
    survives the others' replays, and the shared list holds every append once, in each thread's order."""
    counting = CountingBackend()
    fn = jit.compile(publish, backend=counting, cache_limit=32)
    slots, log, calls = {}, [], 150

    def work(fn, t):
        for i in range(calls):
            fn(slots, log, f"t{t}", torch.full((3,), float(t * 1000 + i)))

    errors = _race(fn, 8, work)
    assert errors == []
    assert sorted(slots) == [f"t{t}" for t in range(8)]
    for t in range(8):
        assert torch.equal(slots[f"t{t}"], torch.full((3,), 2.0 * (t * 1000 + calls - 1)))
    seen = [int(v[0].item()) // 2 for v in log]
    assert len(seen) == 8 * calls
    for t in range(8):
        assert [v - t * 1000 for v in seen if v // 1000 == t] == list(range(calls))
    assert counting.graph_count <= 32  # entries were reused, not one capture per call


def test_a_replay_never_empties_a_dict_another_thread_reads(fast_switching):
    """A compiled write-back touches only its own keys: a reader never sees a key of the initial dict missing."""
    def update(d, x):
        d["mine"] = x + 1
        return x

    fn = jit.compile(update, backend="eager", cache_limit=32)
    d = {"stable": 1, "mine": torch.zeros(2)}
    stop = threading.Event()
    missing = []

    def reader():
        while not stop.is_set():
            if "stable" not in d:
                missing.append(True)

    r = threading.Thread(target=reader)
    r.start()
    try:
        errors = _race(fn, 4, lambda fn, t: [fn(d, torch.ones(2)) for _ in range(300)])
    finally:
        stop.set()
        r.join()
    assert errors == [] and missing == []


def test_dict_write_back_applies_per_key_deltas_in_python_order(counting):
    """Single-threaded, the delta replay leaves exactly eager's dict, order included (a key deleted and set again
    moves to the end), and a list that only grew is extended."""
    def f(d, lst, x):
        del d["a"]
        d["a"] = x
        d["b"] = 2
        d.pop("c")
        d["new"] = x * 2
        lst.append(x.sum())
        return x + 1

    def state():
        return {"a": 1, "b": 1, "c": 3, "d": 4}, [0]

    fn = jit.compile(f, backend=counting)
    for _ in range(2):
        (de, le), (dc, lc) = state(), state()
        x = torch.ones(2)
        f(de, le, x)
        fn(dc, lc, x)
        assert list(dc) == list(de) == ["b", "d", "a", "new"]
        assert all(torch.equal(torch.as_tensor(dc[k]), torch.as_tensor(de[k])) for k in de)
        assert len(lc) == len(le) == 2
    assert counting.graph_count == 1


def test_list_changed_in_place_writes_only_changed_positions(counting):
    def f(lst, x):
        lst[1] = x
        return x * 3

    fn = jit.compile(f, backend=counting)
    lst = [1, 2, 3]
    fn(lst, torch.ones(1))
    assert lst[0] == 1 and lst[2] == 3 and torch.equal(lst[1], torch.ones(1))
    source = fn._jitcore_cache.entries[0].run.source
    assert "[1] = " in source and "[:]" not in source


def _insert_front(lst, x):
    lst.insert(0, x)
    return x * 3


def _pop_inside(lst, x):
    lst.pop(1)
    return x * 3


def _replace_a_slice(lst, x):
    lst[1:3] = [x]
    return x * 3


@pytest.mark.parametrize("fn, written", [(_insert_front, "[0:0] = "), (_pop_inside, "[1:2] = "),
                                         (_replace_a_slice, "[1:3] = ")])
def test_list_resized_inside_writes_back_only_the_changed_run(fn, written, counting):
    """An insert, pop or remove away from the end writes the run between the unchanged head and tail, never the
    whole list: an item another thread appends meanwhile survives, as it does in eager Python."""
    compiled = jit.compile(fn, backend=counting)
    for _ in range(2):
        lst_e, lst_c, x = [1, 2, 3, 4], [1, 2, 3, 4], torch.ones(1)
        assert torch.equal(compiled(lst_c, x), fn(lst_e, x))
        assert lst_c == lst_e
    source = compiled._jitcore_cache.entries[0].run.source
    assert written in source and "[:]" not in source


def test_threads_compiling_new_shapes_while_others_call_match_eager(fast_switching):
    """One thread captures a new variant while others run (and miss on) the same function: every result is
    eager's and each variant is compiled once."""
    counting = CountingBackend()

    def f(x, log):
        log.append(x.shape[0])
        return torch.relu(x) * x.shape[0]

    fn = jit.compile(f, backend=counting, dynamic=False, cache_limit=16)
    logs = [[] for _ in range(6)]

    def work(fn, t):
        for i in range(60):
            x = torch.randn(1 + (i + t) % 5)
            assert torch.equal(fn(x, logs[t]), torch.relu(x) * x.shape[0])

    errors = _race(fn, 6, work)
    assert errors == []
    assert all(log == [1 + (i + t) % 5 for i in range(60)] for t, log in enumerate(logs))
    assert counting.graph_count == 5
