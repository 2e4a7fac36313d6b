"""itertools over values: each constructor makes a lazy iterator (lazy_iterator.LazyIteratorValue) whose items are
computed when its consumer asks, pulling its inputs exactly when CPython's Modules/itertoolsmodule.c would, so a
generator feeding it runs its side effects in Python's order and an infinite one (count, cycle, repeat) is only
as long as its consumer takes. product, combinations and permutations read their inputs whole when called, as
CPython does (it makes tuples of the pools first).

Each iterator is written as a Python generator over values (`_Pull`: the interpreter state of the current pull);
registered as BUILTIN call rules on the itertools classes (and chain.from_iterable's descriptor).
"""
from __future__ import annotations

import itertools
import operator

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import NOT_CONSTANT
from jitcore.capture.values.call_rules import CallRule, Meaning, KNOWN_CALLABLE, register_callable, call
from jitcore.capture.values.compare import items_equal
from jitcore.capture.values.constant import const
from jitcore.capture.values.lazy_iterator import LazyIteratorValue
from jitcore.capture.values.iterator import IteratorValue
from jitcore.capture.values.sequence import TupleValue

__all__ = ["lazy_iterator"]


class _Pull:
    """What a lazy iterator's body asks while it computes one item: the state of the current next()."""

    __slots__ = ("state",)

    def __init__(self):
        self.state = None

    def next(self, iterator):
        """The iterator's next item, or None when exhausted."""
        return iterator.next_item(self.state)

    def iter(self, value):
        return call(self.state, iter, [value], {})

    def call(self, fn, args):
        return fn.call(self.state, list(args), {})

    def equal(self, a, b) -> bool:
        return items_equal(self.state, a, b, _binary)


def _binary(state, op, a, b):
    return call(state, getattr(operator, op), [a, b], {})


def lazy_iterator(iter_type, body, *args) -> LazyIteratorValue:
    """An iterator whose items are those `body(pull, *args)` yields, each computed at its next()."""
    pull = _Pull()
    generator = body(pull, *args)

    def produce(state):
        pull.state = state
        return next(generator, None)
    return LazyIteratorValue(produce, iter_type)


def _constant(value, what):
    c = value.constant() if value is not None else None
    if c is NOT_CONSTANT:
        raise GraphBreak("unsupported_value", f"{what} that is not a Python constant")
    return c


def _rule(cls):
    def register(handler):
        register_callable(cls, KNOWN_CALLABLE, CallRule(f"itertools.{cls.__name__}", Meaning.BUILTIN,
                                                        lambda state, fn, args, kwargs: handler(state, *args,
                                                                                                **kwargs)))
        return handler
    return register


# -- chain, zip_longest, pairwise, starmap: one pass over their inputs ---------------------------------------

def _chain(pull, iterables):
    for iterable in iterables:  # chain calls iter() on each argument only when it reaches it
        source = pull.iter(iterable)
        while (item := pull.next(source)) is not None:
            yield item


@_rule(itertools.chain)
def _chain_rule(state, *iterables):
    return lazy_iterator(itertools.chain, _chain, iterables)


def _chain_from(pull, outer):
    outer = pull.iter(outer)
    while (iterable := pull.next(outer)) is not None:
        yield from _chain(pull, [iterable])


register_callable(vars(itertools.chain)["from_iterable"], KNOWN_CALLABLE, CallRule(
    "itertools.chain.from_iterable", Meaning.BUILTIN,
    lambda state, fn, args, kwargs: lazy_iterator(itertools.chain, _chain_from, *args) if len(args) == 1
    and not kwargs else NotImplemented))


def _zip_longest(pull, sources, fill):
    active = [True] * len(sources)
    remaining = len(sources)
    while remaining:
        row = []
        for i, source in enumerate(sources):
            item = pull.next(source) if active[i] else None
            if item is None:
                if active[i]:
                    active[i] = False
                    remaining -= 1
                    if not remaining:  # zip_longest_next stops at once when the last input runs out
                        return
                item = fill
            row.append(item)
        yield TupleValue(row)


@_rule(itertools.zip_longest)
def _zip_longest_rule(state, *iterables, fillvalue=None):
    sources = [call(state, iter, [it], {}) for it in iterables]
    return lazy_iterator(itertools.zip_longest, _zip_longest, sources, fillvalue or const(None))


def _pairwise(pull, source):
    previous = pull.next(source)
    if previous is None:
        return
    while (item := pull.next(source)) is not None:
        yield TupleValue([previous, item])
        previous = item


@_rule(itertools.pairwise)
def _pairwise_rule(state, iterable):
    return lazy_iterator(itertools.pairwise, _pairwise, call(state, iter, [iterable], {}))


def _starmap(pull, fn, source):
    while (args := pull.next(source)) is not None:
        yield pull.call(fn, args.iterate(pull.state))


@_rule(itertools.starmap)
def _starmap_rule(state, fn, iterable):
    return lazy_iterator(itertools.starmap, _starmap, fn, call(state, iter, [iterable], {}))


def _accumulate(pull, source, fn, initial):
    total = initial
    if total is not None:
        yield total
    while (item := pull.next(source)) is not None:
        if total is None:
            total = item
        elif fn is None:
            total = _binary(pull.state, "add", total, item)
        else:
            total = pull.call(fn, [total, item])
        yield total


@_rule(itertools.accumulate)
def _accumulate_rule(state, iterable, func=None, *, initial=None):
    fn = None if func is None or func.constant() is None else func
    start = None if initial is None or initial.constant() is None else initial
    return lazy_iterator(itertools.accumulate, _accumulate, call(state, iter, [iterable], {}), fn, start)


def _filter_false(pull, fn, source):
    while (item := pull.next(source)) is not None:
        test = item if fn is None else pull.call(fn, [item])
        if not test.truth(pull.state):
            yield item


@_rule(itertools.filterfalse)
def _filterfalse_rule(state, fn, iterable):
    predicate = None if fn.constant() is None else fn
    return lazy_iterator(itertools.filterfalse, _filter_false, predicate, call(state, iter, [iterable], {}))


def _take_while(pull, fn, source):
    while (item := pull.next(source)) is not None:
        if not pull.call(fn, [item]).truth(pull.state):
            return
        yield item


@_rule(itertools.takewhile)
def _takewhile_rule(state, fn, iterable):
    return lazy_iterator(itertools.takewhile, _take_while, fn, call(state, iter, [iterable], {}))


def _drop_while(pull, fn, source):
    while (item := pull.next(source)) is not None:
        if not pull.call(fn, [item]).truth(pull.state):
            yield item
            break
    while (item := pull.next(source)) is not None:
        yield item


@_rule(itertools.dropwhile)
def _dropwhile_rule(state, fn, iterable):
    return lazy_iterator(itertools.dropwhile, _drop_while, fn, call(state, iter, [iterable], {}))


def _compress(pull, data, selectors):
    while (item := pull.next(data)) is not None:
        selector = pull.next(selectors)
        if selector is None:
            return
        if selector.truth(pull.state):
            yield item


@_rule(itertools.compress)
def _compress_rule(state, data, selectors):
    return lazy_iterator(itertools.compress, _compress, call(state, iter, [data], {}),
                         call(state, iter, [selectors], {}))


# -- islice, count, repeat, cycle: lengths decided by the consumer --------------------------------------------

def _islice(pull, source, start, stop, step):
    """islice_next: skip to the next wanted index, stop at `stop` without reading past it."""
    count, wanted = 0, start
    while True:
        while count < wanted:
            if pull.next(source) is None:
                return
            count += 1
        if stop is not None and count >= stop:
            return
        item = pull.next(source)
        if item is None:
            return
        count += 1
        wanted += step
        if stop is not None and wanted > stop:
            wanted = stop
        yield item


@_rule(itertools.islice)
def _islice_rule(state, iterable, *bounds):
    numbers = [_constant(b, "an islice() bound") for b in bounds]
    if not 1 <= len(numbers) <= 3:
        return NotImplemented
    window = slice(*numbers) if len(numbers) > 1 else slice(None, numbers[0])
    start = 0 if window.start is None else window.start
    step = 1 if window.step is None else window.step
    for n in (start, step, window.stop):
        if n is not None and (type(n) is not int or n < 0) or step == 0:
            return NotImplemented  # islice's own ValueError: Python raises it
    return lazy_iterator(itertools.islice, _islice, call(state, iter, [iterable], {}), start, window.stop, step)


def _count(pull, start, step):
    n = start
    while True:
        yield const(n)
        n += step


@_rule(itertools.count)
def _count_rule(state, start=None, step=None):
    first = 0 if start is None else _constant(start, "a count() start")
    by = 1 if step is None else _constant(step, "a count() step")
    return lazy_iterator(itertools.count, _count, first, by)


def _repeat(pull, value, times):
    n = 0
    while times is None or n < times:
        n += 1
        yield value


@_rule(itertools.repeat)
def _repeat_rule(state, value, times=None):
    count = None if times is None else _constant(times, "a repeat() count")
    if count is not None and type(count) is not int:
        return NotImplemented
    return lazy_iterator(itertools.repeat, _repeat, value, count)


def _cycle(pull, source):
    saved = []
    while (item := pull.next(source)) is not None:
        saved.append(item)
        yield item
    while saved:
        yield from saved


@_rule(itertools.cycle)
def _cycle_rule(state, iterable):
    return lazy_iterator(itertools.cycle, _cycle, call(state, iter, [iterable], {}))


# -- product, combinations, permutations: pools read whole at the call ---------------------------------------

def _pool(state, iterable):
    return call(state, iter, [iterable], {}).iterate(state)


def _indexed(iter_type, pool, indices):
    return IteratorValue([TupleValue([pool[i] for i in row]) for row in indices], iter_type)


@_rule(itertools.product)
def _product_rule(state, *iterables, repeat=None):
    times = 1 if repeat is None else _constant(repeat, "a product() repeat")
    pools = [_pool(state, it) for it in iterables] * times
    rows = itertools.product(*[range(len(pool)) for pool in pools])
    return IteratorValue([TupleValue([pool[i] for pool, i in zip(pools, row)]) for row in rows], itertools.product)


def _choose(iter_type):
    def handler(state, iterable, r=None):
        pool = _pool(state, iterable)
        size = None if r is None else _constant(r, f"a {iter_type.__name__}() length")
        if size is None and iter_type is not itertools.permutations:
            return NotImplemented
        return _indexed(iter_type, pool, iter_type(range(len(pool)), size))
    return handler


for _cls in (itertools.combinations, itertools.combinations_with_replacement, itertools.permutations):
    _rule(_cls)(_choose(_cls))


# -- groupby and tee: iterators that share one input ---------------------------------------------------------

class _Groups:
    """groupby's state (itertoolsmodule.c groupbyobject): the current key and value, the group being read."""

    def __init__(self, source, key):
        self.source, self.key = source, key
        self.target = self.current_key = self.current_value = self.grouper = None

    def step(self, pull) -> bool:
        value = pull.next(self.source)
        if value is None:
            return False
        self.current_value = value
        self.current_key = value if self.key is None else pull.call(self.key, [value])
        return True

    def groups(self, pull):
        while True:
            self.grouper = None
            while not (self.current_key is not None and (self.target is None or
                                                         not pull.equal(self.target, self.current_key))):
                if not self.step(pull):
                    return
            self.target = self.current_key
            marker = object()
            self.grouper = marker
            yield TupleValue([self.current_key, lazy_iterator(_GROUPER, self.members, marker,
                                                              self.target)])

    def members(self, pull, marker, target):
        while self.grouper is marker:  # a group is over once groupby moved on (_grouper_next)
            if self.current_value is None and not self.step(pull):
                return
            if not pull.equal(target, self.current_key):
                return
            value, self.current_value = self.current_value, None
            yield value


_GROUPER = type(next(itertools.groupby("a"))[1])
_TEE = type(itertools.tee(())[0])


@_rule(itertools.groupby)
def _groupby_rule(state, iterable, key=None):
    groups = _Groups(call(state, iter, [iterable], {}), None if key is None or key.constant() is None else key)
    return lazy_iterator(itertools.groupby, groups.groups)


def _tee_branch(pull, source, buffer, _):
    position = 0
    while True:
        if position == len(buffer):
            item = pull.next(source)
            if item is None:
                return
            buffer.append(item)
        yield buffer[position]
        position += 1


def _tee(state, fn, args, kwargs):
    if kwargs or not 1 <= len(args) <= 2:
        return NotImplemented
    n = 2 if len(args) == 1 else _constant(args[1], "a tee() count")
    if type(n) is not int or n < 0:
        return NotImplemented
    source, buffer = call(state, iter, [args[0]], {}), []
    return TupleValue([lazy_iterator(_TEE, _tee_branch, source, buffer, i)
                       for i in range(n)])


register_callable(itertools.tee, KNOWN_CALLABLE, CallRule("itertools.tee", Meaning.BUILTIN, _tee))
