"""Capture: builtin exceptions whose constructor keeps more than its arguments (OSError's errno/strerror/filename
and its subclass by errno, SyntaxError's location, UnicodeDecodeError's fields, ImportError's and
AttributeError's keywords, SystemExit.code, StopIteration.value) are made by CPython's own constructor from the
constant arguments (Note [Exceptions with state of their own], capture/values/exception.py): their attributes,
str(), repr(), `except` by subclass and the exception returned or raised are eager's; also a user subclass whose
Python __init__ calls the builtin one, and one that never calls it (args are still the call's). One graph, through
jit.compile and register + enabled()."""

from tests.support import both_doors, check_against_eager, check_registered_against_eager, outcome, randn


def one_graph_both_doors(fn, *arg_sets):
    check_against_eager(fn, *arg_sets, expected_graphs=1)
    assert check_registered_against_eager(fn, *arg_sets).graph_count == 1


def test_oserror_keeps_errno_strerror_filename_and_picks_its_subclass():
    def f(x):
        e = OSError(2, "No such file", "a.txt")
        return x + e.errno, str(e), repr(e), e.strerror, e.filename, type(e).__name__, e.args

    def g(x):
        try:
            raise OSError(13, "denied", "b.txt")
        except PermissionError as e:  # OSError(13, ...) is a PermissionError
            return x - 1, str(e)

    one_graph_both_doors(f, (randn(3, seed=1),))
    one_graph_both_doors(g, (randn(3, seed=1),))


def test_syntax_unicode_import_attribute_errors_and_exit_codes():
    def f(x):
        syntax = SyntaxError("bad", ("f.py", 3, 4, "x y", 3, 5))
        decode = UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
        missing = ImportError("no module", name="foo", path="/p")
        attr = AttributeError("no attribute", name="weight", obj=3)
        return (x + syntax.lineno + decode.end + SystemExit(3).code + StopIteration(5).value,
                str(syntax), syntax.msg, syntax.offset, str(decode), decode.reason, str(missing), missing.name,
                attr.name, attr.obj, str(KeyError("k")))

    one_graph_both_doors(f, (randn(3, seed=1),))


class SpecificError(OSError):
    def __init__(self, message):
        super().__init__(2, message)
        self.extra = 1


class Quiet(Exception):
    def __init__(self, value):
        self.value = value  # never calls the base __init__: args stay what the call passed


def test_user_subclasses_run_the_builtin_init_they_reach():
    def f(x):
        e, q = SpecificError("gone"), Quiet(3)
        return x + e.errno + e.extra + q.value, str(e), repr(e), e.args, q.args, str(q)

    one_graph_both_doors(f, (randn(3, seed=1),))


def test_attributes_written_later_and_the_exception_returned():
    def f(x):
        e = OSError(2, "No such file", "a.txt")
        e.filename = "b.txt"  # a slot of OSError's: str() reads it
        e.note = 5
        return x + 1, str(e), e

    with both_doors(f) as doors:
        for door in doors:
            x = randn(3, seed=1)
            expected, actual = f(x), door(x)
            assert [str(expected[1]), str(expected[2]), expected[2].filename, expected[2].note, type(expected[2])] \
                == [str(actual[1]), str(actual[2]), actual[2].filename, actual[2].note, type(actual[2])]


def test_raised_out_of_the_function_and_bad_keywords():
    def f(x):
        raise OSError(2, "No such file", "a.txt")

    def g(x):
        return x + len(TypeError(3, k=1).args)

    for fn in (f, g):
        with both_doors(fn) as doors:
            for door in doors:
                assert outcome(door, randn(3, seed=1)) == outcome(fn, randn(3, seed=1))
