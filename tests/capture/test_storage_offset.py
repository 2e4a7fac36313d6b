"""Views at different storage offsets: `storage_offset()` read in captured code answers for each call's view (the
offset is guarded where it was read), and graphs that only compute on views are right, and shared, whatever the
offset. Each case runs eagerly, through `jit.compile` and through `register` + `enabled()`; views are taken from
separate copies of one base so that in-place writes through them can be compared too."""
import torch

import jitcore as jit
from tests.support import CountingBackend, assert_same


def _forms(fn, backend):
    """(compiled copy, call under enabled()) of fn, both compiling with `backend`."""
    compiled = jit.compile(fn, backend=backend)
    jit.register(fn)

    def under_enabled(*args):
        with jit.enabled(backend=backend):
            return fn(*args)
    return compiled, under_enabled


def _check_views(fn, slices, graphs):
    """fn on views base[s] of three copies of one base: eager, compiled, under enabled(); results and the bases
    (in-place writes through the views) must agree call after call. `graphs`: graphs each compiled form makes."""
    via_compile, via_register = CountingBackend(), CountingBackend()
    compiled, _ = _forms(fn, via_compile)
    _, under_enabled = _forms(fn, via_register)
    bases = [torch.arange(12.0) for _ in range(3)]
    try:
        for s in slices:
            results = [form(base[s]) for form, base in zip((fn, compiled, under_enabled), bases)]
            for result in results[1:]:
                assert_same(results[0], result)
            for base in bases[1:]:
                assert_same(bases[0], base, "base after the call")
    finally:
        jit.unregister(fn)
    assert via_compile.graph_count == graphs
    assert via_register.graph_count == graphs


def _offset(x):
    return x.storage_offset(), x + 1


def _offset_through_the_class(x):
    return torch.Tensor.storage_offset(x) + 1, x * 2


def _offset_of_a_view_made_inside(x):
    return x[1:].storage_offset(), x.sum()


def _offset_scales_a_tensor(x):
    return x * x.storage_offset()


def _computes_on_the_view(x):
    y = x * 2 + x.sum()
    x.add_(1)
    return y, x[1:].mean()


def test_storage_offset_of_an_argument_is_guarded():
    _check_views(_offset, [slice(0, 3), slice(3, 6), slice(0, 3), slice(5, 8)], graphs=3)


def test_storage_offset_called_through_the_class_is_guarded():
    _check_views(_offset_through_the_class, [slice(0, 3), slice(3, 6), slice(3, 6)], graphs=2)


def test_storage_offset_of_a_view_made_in_the_graph_follows_its_input():
    _check_views(_offset_of_a_view_made_inside, [slice(0, 4), slice(2, 6), slice(0, 4)], graphs=2)


def test_storage_offset_used_in_tensor_math():
    _check_views(_offset_scales_a_tensor, [slice(1, 4), slice(6, 9)], graphs=2)


def test_views_at_other_offsets_share_one_graph_and_write_through_the_right_view():
    _check_views(_computes_on_the_view, [slice(0, 4), slice(4, 8), slice(8, 12), slice(2, 6)], graphs=1)


def test_recompile_reason_names_the_offset():
    compiled = jit.compile(_offset, backend="eager")
    base = torch.arange(10.0)
    compiled(base[0:3])
    entry = compiled._jitcore_cache.entries[0]
    assert entry.guard_function.failures((base[4:7],), None) == ["x: storage_offset() changed 0 -> 4"]
