"""Caches do not keep user objects alive, stay bounded, and jit.reset() frees them."""
import gc
import tracemalloc
import weakref

import torch

import jitcore as jit


def _collect():
    # a cache is a cycle of functions, code and dicts; weakref callbacks inside it (fake tensors) need a second pass
    for _ in range(3):
        gc.collect()


def test_compiled_module_and_its_parameters_are_freed_when_dropped():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4))
    compiled = jit.compile(model, backend="eager")
    compiled(torch.randn(2, 4))
    refs = [weakref.ref(model), weakref.ref(model[0].weight)]
    del model, compiled
    _collect()
    assert all(ref() is None for ref in refs)


def test_guard_on_a_global_module_does_not_keep_it_alive():
    holder = {"m": torch.nn.Linear(2, 2)}

    def f(x, box):
        return box["m"](x)

    compiled = jit.compile(f, backend="eager")
    compiled(torch.randn(1, 2), holder)
    ref = weakref.ref(holder["m"])
    holder.clear()
    gc.collect()
    jit.reset()
    gc.collect()
    assert ref() is None


def test_many_closures_of_one_registered_code_keep_memory_bounded():
    def make(k):
        def add(v):
            return v * 2 + k
        return add

    jit.register(make(0))
    x = torch.ones(2)
    try:
        with jit.enabled(backend="eager", cache_limit=4):
            for k in range(40):
                make(k)(x)
            gc.collect()
            tracemalloc.start()
            before = tracemalloc.take_snapshot()
            for k in range(40, 240):
                fn = make(k)
                fn(x)
                fn(x)
            gc.collect()
            after = tracemalloc.take_snapshot()
            tracemalloc.stop()
    finally:
        jit.unregister(make(0))
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    assert grown < 2_000_000, f"{grown} bytes kept for 200 closures past the cache limit"


def test_reset_drops_every_cache_entry_and_resume_function():
    from jitcore.runtime.install import ALL_CACHES
    from jitcore.runtime.resume_fns import _RESUMES

    def f(x):
        y = x + 1
        print(end="")
        return y * 2

    compiled = jit.compile(f, backend="eager")
    compiled(torch.ones(2))
    assert _RESUMES and any(cache.entries for cache in ALL_CACHES)
    jit.reset()
    assert not _RESUMES
    assert not any(cache.entries for cache in ALL_CACHES)
    torch.testing.assert_close(compiled(torch.ones(2)), f(torch.ones(2)))


def test_model_passed_as_an_argument_is_freed_when_dropped():
    def step(model, x):
        return model(x).relu()

    compiled = jit.compile(step, backend="eager")
    model = torch.nn.Sequential(*[torch.nn.Linear(3, 3) for _ in range(4)])
    torch.testing.assert_close(compiled(model, torch.ones(2, 3)), step(model, torch.ones(2, 3)))
    refs = [weakref.ref(model), weakref.ref(model[2].weight)]
    del model
    _collect()
    assert all(ref() is None for ref in refs)
    other = torch.nn.Sequential(*[torch.nn.Linear(3, 3) for _ in range(4)])
    torch.testing.assert_close(compiled(other, torch.ones(2, 3)), step(other, torch.ones(2, 3)))


def test_many_distinct_compiled_closures_leave_no_jitcore_state_behind():
    """600 closures compiled with jit.compile, called and dropped: no cache or compiled copy survives, and the
    memory jitcore's own code still holds afterwards is bounded (its event log keeps at most 2,000 plain facts).
    torch's own caches (FakeTensor dispatch cache keyed by constants, torch.fx's generated-source caches) grow
    by about 1.5 KB per graph, under torch.compile too; they are not jitcore's and are not counted here."""
    import os
    from jitcore.runtime.install import ALL_CACHES

    def make(k):
        def add(v):
            return v * 2 + k
        return add

    x = torch.ones(2)
    for k in range(20):
        jit.compile(make(k), backend="eager")(x)
    _collect()
    caches_before = len(ALL_CACHES)
    root = os.path.dirname(jit.__file__)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for k in range(600):
        fn = jit.compile(make(k), backend="eager")
        fn(x)
        fn(x)
        del fn
    _collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    ours = sum(stat.size_diff for stat in after.compare_to(before, "filename")
               if stat.traceback[0].filename.startswith(root))
    print(f"jitcore-held bytes after 600 closures: {ours}")
    assert len(ALL_CACHES) <= caches_before
    assert ours < 1_000_000, f"jitcore's own code holds {ours} more bytes after 600 dropped closures"


def test_console_log_and_dedupe_keys_stay_bounded():
    from jitcore.report import console

    for i in range(console._MAX_SEEN + 500):
        console.say("graphs", f"graph {i}", key=("graph", i))
    console.say("graphs", "x" * 50_000, key=("graph", "long"))
    assert len(console._seen) <= console._MAX_SEEN
    assert len(console.EVENTS) <= console._MAX_EVENTS
    assert len(console.EVENTS[-1].message) < 5_000
