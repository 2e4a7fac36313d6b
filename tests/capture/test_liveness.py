"""The liveness analysis behind what a resume function receives (capture/liveness.py)."""
import dis
import gc

from jitcore.capture.code_cache import CodeCache
from jitcore.capture.liveness import live_locals


def _offset(fn, opname, argval=None, nth=0):
    found = [i.offset for i in dis.get_instructions(fn)
             if i.opname == opname and (argval is None or i.argval == argval)]
    return found[nth]


def _straight(x, y):
    a = x + 1
    b = a * 2
    return b + y


def test_a_local_is_live_until_its_last_read_and_dead_once_overwritten():
    code = _straight.__code__
    assert live_locals(code, 0) == {"x", "y"}
    assert live_locals(code, _offset(_straight, "STORE_FAST", "a")) == {"y"}
    assert live_locals(code, _offset(_straight, "LOAD_FAST", "a")) == {"a", "y"}
    assert live_locals(code, _offset(_straight, "RETURN_VALUE")) == set()


def _looped(x, n):
    total = x
    for i in range(n):
        total = total + i
    return total


def test_a_loop_keeps_a_local_live_across_its_back_edge():
    assert live_locals(_looped.__code__, _offset(_looped, "FOR_ITER")) == {"total"}
    assert live_locals(_looped.__code__, _offset(_looped, "STORE_FAST", "total", nth=1)) == set()


def _handled(x, fallback):
    y = x * 2
    try:
        y = y.item()
    except ValueError:
        return fallback
    return y


def test_a_handler_of_the_exception_table_is_a_path_from_the_instructions_it_covers():
    call = _offset(_handled, "CALL")
    assert "fallback" in live_locals(_handled.__code__, call)
    assert "fallback" not in live_locals(_handled.__code__, _offset(_handled, "RETURN_VALUE", nth=1))


def _deleting(x, y):
    z = x + 1
    del y
    return z


def test_deleting_a_local_counts_as_reading_it():
    # DELETE_FAST of an unbound local raises, so the resume function must receive it to behave the same
    assert "y" in live_locals(_deleting.__code__, _offset(_deleting, "STORE_FAST", "z"))


def _reads_its_frame(x, y):
    z = x + 1
    return locals()


def test_code_reading_its_own_frame_keeps_every_local_live():
    code = _reads_its_frame.__code__
    assert live_locals(code, _offset(_reads_its_frame, "RETURN_VALUE")) == set(code.co_varnames)


def test_code_cache_entries_go_with_their_code_object():
    cache = CodeCache()
    namespace = {}
    exec("def made(a):\n    return a + 1\n", namespace)
    code = namespace.pop("made").__code__
    twin = compile("def made(a):\n    return a + 1\n", "<string>", "exec").co_consts[0]
    cache[code] = "first"
    assert cache.get(code) == "first" and cache.get(twin) is None  # by identity, not by equality
    del code
    gc.collect()
    assert len(cache) == 0
