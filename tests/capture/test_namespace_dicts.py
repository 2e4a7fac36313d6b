"""Dicts capture does not model item by item: a module's globals (`globals()`, `vars(module)`) and a dict that holds
itself. A namespace reached as a dict stays a native object (capture models globals by name, and two models of one
namespace would disagree); a dict that holds itself wraps in finite time. Both through `jit.compile` and
`register` + `enabled()`, compared with eager on results, printed output and the globals after the call."""
import operator
import sys


from tests.breaks.helpers import assert_in_graphs, call_capturing
from tests.support import Args, CountingBackend, assert_same, both_doors, randn

_THIS = sys.modules[__name__]
SCALE = 2.0


def write_through_namespace(x, ns):
    ns["SCALE"] = ns["SCALE"] + 1.0
    return x * SCALE


def test_global_written_through_the_namespace_dict_is_read_by_name(monkeypatch):
    with both_doors(write_through_namespace) as doors:
        for door in doors:
            for seed in range(2):
                monkeypatch.setattr(_THIS, "SCALE", 2.0 + seed)
                expected = write_through_namespace(randn(3, seed=seed), vars(_THIS))
                after = SCALE
                monkeypatch.setattr(_THIS, "SCALE", 2.0 + seed)
                assert_same(expected, door(randn(3, seed=seed), vars(_THIS)))
                assert SCALE == after


def _compare_printing(f, capsys, seeds=(0, 1)):
    """Each door against eager: printed output, no exception, the same result. Returns the counting backend."""
    counting = CountingBackend()
    with both_doors(f, counting) as doors:
        for door in doors:
            for seed in seeds:
                call = Args(randn(3, seed=seed))
                out, result, error = call_capturing(door, call, capsys)
                expected_out, expected, _ = call_capturing(f, call, capsys)
                assert (out, error) == (expected_out, None)
                assert_same(expected, result)
    return counting


def test_a_graph_break_at_globals_still_compiles_the_code_after_print(capsys):
    def f(x):
        y = x * 2
        print("SCALE" in globals())
        return y + 1

    counting = _compare_printing(f, capsys)
    assert_in_graphs(counting, operator.mul, operator.add)  # the code after the print is captured too


def test_locals_and_eval_at_a_break_see_the_users_frame(capsys):
    """Note [Calls that read their frame]: the call runs with the user's globals and every bound local."""
    def f(x):
        y = x * 2
        unused = 5  # noqa: F841 - dead here, still in locals()
        print(sorted(locals()), eval("SCALE + 1"), "SCALE" in vars(), len(globals()) > 3)
        return y + 1

    counting = _compare_printing(f, capsys, seeds=(0,))
    assert_in_graphs(counting, operator.mul, operator.add)


def test_dict_that_holds_itself_is_read_like_eager():
    def f(x, d):
        return x * d["scale"] + len(d), d["self"] is d

    counting = CountingBackend()
    with both_doors(f, counting) as doors:
        for door in doors:
            for seed in range(2):
                d = {"scale": 2.0 + seed}
                d["self"] = d
                assert_same(f(randn(3, seed=seed), d), door(randn(3, seed=seed), d))
                assert d["self"] is d and len(d) == 2
    assert counting.graph_count >= 1
