"""Set order (a table's history), live map/filter/reversed, exceptions with state of their own, calls that read
the call stack (logging records), the truth of tensors of many elements."""
import collections
import io
import logging

import torch
from harness import probe, T, main

G = "order_state"

_BUF = io.StringIO()
_LOG = logging.getLogger("jitcore.probes.order_state")
_HANDLER = logging.StreamHandler(_BUF)
_HANDLER.setFormatter(logging.Formatter("%(funcName)s:%(lineno)d:%(message)s"))
_LOG.addHandler(_HANDLER)
_LOG.propagate, _LOG.level = False, logging.INFO


def _log_reset():
    _BUF.seek(0)
    _BUF.truncate()


@probe(G)
def set_order_after_discard(x):
    s = {1, 9}
    s.discard(1)
    s.add(17)
    return x + 1, list(s), s


@probe(G)
def set_pop_after_add(x):
    s = {17, 1, 9}
    a = s.pop()
    s.add(25)
    return x * a + s.pop(), list(s)


@probe(G, args=lambda: (T(), {1, 9}))
def set_arg_written_back_in_order(x, s):
    s.add(17)
    s.discard(1)
    return x + len(s), list(s & {9, 17})


@probe(G, args=lambda: (T(), [1, 2, 3]))
def map_over_growing_list(x, lst):
    out = []
    for v in map(lambda a: a * 2, lst):
        if len(lst) < 5:
            lst.append(1)
        out.append(v)
    return x + len(out), out


@probe(G, args=lambda: (T(), [1, 2, 3]))
def reversed_with_insert(x, lst):
    out = []
    for v in reversed(lst):
        if v == 2:
            lst.insert(0, 9)
        out.append(v)
    return x + sum(out), out


@probe(G)
def oserror_state(x):
    e = OSError(2, "No such file", "a.txt")
    return x + e.errno, str(e), type(e).__name__, e.filename


@probe(G)
def syntax_unicode_error_state(x):
    s = SyntaxError("bad", ("f.py", 3, 4, "x y", 3, 5))
    u = UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
    return x + s.lineno, str(s), str(u), u.reason


@probe(G, state=(_log_reset, lambda: _BUF.getvalue()))
def logging_record_names_user_function(x):
    y = x + 1
    _LOG.info("hi %s", 3)
    return y * 2


@probe(G)
def truth_of_many_elements_caught(x):
    try:
        if x:
            return x
    except RuntimeError as e:
        return x + 1, str(e)


@probe(G)
def counter_of_set_made_inside(x):
    seen = set()
    for w in ("b", "a", "c", "a"):
        seen.add(w)
    return x + len(seen), sorted(collections.Counter(seen).items())


if __name__ == "__main__":
    main(G)
