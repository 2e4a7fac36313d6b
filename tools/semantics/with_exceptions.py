"""with-blocks whose body raises (WITH_EXCEPT_START), contextlib helpers, exception text, inference_mode."""
import contextlib
import unittest
import torch
from harness import probe, T, main

G = "with_exc"


class _Swallow:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, typ, val, tb):
        self.log.append(typ.__name__ if typ else "none")
        return typ is not None and issubclass(typ, KeyError)


@probe(G)
def exit_swallows(x):
    log = []
    with _Swallow(log):
        y = x + 1
        raise KeyError("k")
    return y * 2, log


@probe(G)
def exit_does_not_swallow(x):
    log = []
    try:
        with _Swallow(log):
            raise ValueError("v")
    except ValueError as e:
        log.append(str(e))
    return x + len(log), log


@probe(G)
def exit_sees_exception_value(x):
    seen = []

    class CM:
        def __enter__(self):
            return self

        def __exit__(self, typ, val, tb):
            seen.append((typ, val.args if val is not None else None))
            return True
    with CM():
        raise IndexError(3, "three")
    return x + 1, seen


@probe(G)
def contextmanager_finally_on_error(x):
    log = []

    @contextlib.contextmanager
    def cm():
        log.append("in")
        try:
            yield
        finally:
            log.append("out")
    try:
        with cm():
            raise RuntimeError("r")
    except RuntimeError:
        log.append("caught")
    return x + len(log), log


@probe(G)
def contextmanager_swallows(x):
    @contextlib.contextmanager
    def ignoring(*types):
        try:
            yield
        except types:
            pass
    with ignoring(KeyError, IndexError):
        {}["missing"]
    return x * 3


@probe(G)
def contextmanager_reraises_other(x):
    @contextlib.contextmanager
    def wrap():
        try:
            yield
        except KeyError as e:
            raise ValueError("wrapped") from e
    try:
        with wrap():
            raise KeyError("k")
    except ValueError as e:
        return x + 1, str(e), type(e.__cause__).__name__


@probe(G)
def suppress_with_tensor_work(x):
    with contextlib.suppress(ZeroDivisionError):
        x = x * 2
        1 / 0
    return x + 1


@probe(G)
def nested_with_inner_raises(x):
    log = []
    with _Swallow(log):
        with _Swallow(log):
            raise ValueError("inner")
    return x - 1, log


@probe(G)
def no_grad_restored_after_error(x):
    try:
        with torch.no_grad():
            raise ValueError("v")
    except ValueError:
        pass
    return x * 2, torch.is_grad_enabled()


class _Case(unittest.TestCase):
    def runTest(self):
        pass


@probe(G, tc_config={"enable_trace_unittest": True})
def assert_raises_context(x):
    tc = _Case()
    with tc.assertRaises(ValueError) as cm:
        raise ValueError("x")
    with tc.assertRaises(KeyError):
        {}["miss"]
    return x + 1, cm.exception.args


@probe(G, tc_config={"enable_trace_unittest": True})
def assert_raises_regex_context(x):
    tc = _Case()
    with tc.assertRaisesRegex(KeyError, "miss"):
        {}["miss"]
    return x + 1


@probe(G)
def str_repr_args_of_raised(x):
    try:
        raise ValueError("bad value", 3)
    except ValueError as e:
        return x + 1, str(e), repr(e), e.args


@probe(G)
def str_of_single_arg_exception(x):
    try:
        raise RuntimeError(f"size {x.shape[0]}")
    except RuntimeError as e:
        msg = str(e)
    return x * 2, msg, f"{e!r}", f"{e}", msg.upper()


@probe(G)
def str_of_keyerror_from_dict(x):
    d = {"a": 1}
    try:
        d["b"]
    except KeyError as e:
        return x + 2, str(e), repr(e), e.args


@probe(G)
def str_of_user_exception(x):
    class MyErr(Exception):
        def __init__(self, code):
            super().__init__(f"code={code}")
            self.code = code
    try:
        raise MyErr(7)
    except MyErr as e:
        return x * e.code, str(e), repr(e), e.args


@probe(G)
def inference_mode_inside(x):
    with torch.inference_mode():
        y = x * 2
    return y + 1, y.is_inference()


@probe(G)
def inference_mode_false_inside(x):
    with torch.inference_mode(False):
        y = x.sin()
    return y


if __name__ == "__main__":
    main(G)
