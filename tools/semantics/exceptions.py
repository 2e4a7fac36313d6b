"""Exceptions: raise/catch inside, finally, custom exceptions, chaining, attributes, else clause, re-raise."""
import torch
from harness import probe, T, main

G = "exceptions"


class MyErr(Exception):
    def __init__(self, msg, code):
        super().__init__(msg)
        self.code = code


@probe(G)
def try_except_value(x):
    try:
        raise ValueError("bad")
    except ValueError as e:
        return x + len(str(e))


@probe(G)
def try_finally_order(x):
    log = []
    try:
        log.append(1)
        y = x + 1
    finally:
        log.append(2)
    return y + len(log)


@probe(G)
def except_else(x):
    try:
        y = x * 2
    except RuntimeError:
        y = x
    else:
        y = y + 1
    return y


@probe(G)
def custom_exception_attr(x):
    try:
        raise MyErr("m", 4)
    except MyErr as e:
        return x + e.code + len(e.args)


@probe(G)
def raise_from_cause(x):
    try:
        try:
            raise KeyError("k")
        except KeyError as e:
            raise ValueError("v") from e
    except ValueError as e2:
        return x + (1 if isinstance(e2.__cause__, KeyError) else 0)


@probe(G)
def implicit_context(x):
    try:
        try:
            raise KeyError("k")
        except KeyError:
            raise ValueError("v")
    except ValueError as e2:
        return x + (1 if isinstance(e2.__context__, KeyError) else 0)


@probe(G)
def uncaught_propagates(x):
    y = x + 1
    raise RuntimeError("boom")


@probe(G)
def reraise_bare(x):
    try:
        try:
            raise IndexError()
        except IndexError:
            raise
    except IndexError:
        return x - 1


@probe(G)
def except_tuple_types(x):
    try:
        {}["a"]
    except (IndexError, KeyError) as e:
        return x + (1 if type(e) is KeyError else 0)


@probe(G)
def except_base_class(x):
    try:
        [][1]
    except LookupError:
        return x + 1


@probe(G)
def assert_raises_caught(x):
    try:
        assert x.dim() == 5, "dims"
    except AssertionError as e:
        return x + len(str(e))
    return x


@probe(G)
def stopiteration_caught(x):
    it = iter([])
    try:
        next(it)
    except StopIteration:
        return x + 1


@probe(G)
def exception_in_loop_continue(x):
    total = x
    for v in [1, 0, 2]:
        try:
            total = total + 1 / v
        except ZeroDivisionError:
            continue
    return total


@probe(G)
def finally_return_override(x):
    def g(t):
        try:
            return t + 1
        finally:
            pass
    return g(x)


@probe(G)
def exception_args_repr(x):
    e = ValueError("a", 2)
    return x + len(e.args) + len(repr(e))


@probe(G)
def torch_shape_error_caught(x):
    try:
        return x @ x
    except RuntimeError:
        return x.sum()


@probe(G)
def attribute_error_caught(x):
    try:
        return x.not_an_attribute
    except AttributeError:
        return x + 1


@probe(G)
def raise_in_helper_caught(x):
    def h(t):
        if t.shape[0] == 2:
            raise TypeError("no")
        return t
    try:
        return h(x)
    except TypeError:
        return -x


@probe(G)
def contextlib_suppress(x):
    import contextlib
    with contextlib.suppress(KeyError):
        {}["x"]
    return x + 1


@probe(G)
def warnings_warn(x):
    import warnings
    warnings.warn("careful")
    return x + 1


if __name__ == "__main__":
    main(G)
