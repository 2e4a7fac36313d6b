"""The one registry of what calling a callable means while tracing.

A rule is claimed by the exact callable (its identity: `len`, `torch.no_grad`, `inspect.signature`), by the exact
type of the callable (every `types.FunctionType`), or by a predicate with a priority (a torch operator, a
standard-library function, a class whose instances a value kind models). Every question asks `rules_for(fn)`: the
matching rules, highest priority first (an identity claim before a type claim before a predicate at one priority).

- `wrap()` makes a callable's value from its first rule's `meaning` (a graph function, a builtin, a user function...).
- `call(state, fn, args, kwargs)` runs the handlers in that order; a handler answers a value or NotImplemented, which
  lets the next rule answer (`torch.no_grad(1)` is not a grad-mode region: the class is constructed instead).

Priorities, highest first: the user's marks (`jit.allow_in_graph`, `jit.disable`), then jitcore's own meaning for
one known callable, then torch's own machinery (run in Python), torch's operators, the standard library's
functions, the kinds of class jitcore constructs, and last the callable's type. `claims()` lists every (callable or type, priority) claimed, for the test that no two
rules claim one at the same priority.
"""
from __future__ import annotations

import enum
import itertools
import types
from typing import Callable, NamedTuple

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.tensor import graph_call
from jitcore.guards.identity import address
from jitcore.marks import generation as marks_generation, is_allowed_in_graph, is_marked_disabled

__all__ = ["Meaning", "CallRule", "RuleAnswers", "rules_for", "first_rule", "call", "register_callable", "register_type",
           "register_predicate", "claims", "ALLOWED_IN_GRAPH", "DISABLED", "KNOWN_CALLABLE", "TORCH_RUNTIME", "TORCH_OPERATOR",
           "NATIVE_LIBRARY", "NAMEDTUPLE_CLASS", "MODULE_CLASS", "EXCEPTION_CLASS", "DICT_CLASS", "PLAIN_CLASS",
           "BY_TYPE", "graph_node"]


class Meaning(enum.Enum):
    GRAPH = "one call_function node in the graph"
    LOOKASIDE = "jitcore's own implementation runs at capture time"
    BUILTIN = "a builtin's rule over values; folded to a constant when pure and the arguments are constants"
    CONSTRUCT = "calling a class makes a value of a kind jitcore models"
    INLINE = "Python code traced in a child frame"
    NATIVE = "runs in Python at a graph break of the rule's kind"
    OPAQUE = "not looked into: any use of it is a graph break"


class CallRule(NamedTuple):
    name: str
    meaning: Meaning
    #: (state, fn, args, kwargs) -> Value or NotImplemented; None where the value kind made for the meaning acts
    #: itself (INLINE: a user function inlines with its source guarded; NATIVE: the call breaks with break_kind;
    #: OPAQUE: any use breaks)
    handler: Callable | None = None
    #: the break kind of a NATIVE call
    break_kind: str | None = None


# -- priorities ----------------------------------------------------------------------------------------------
ALLOWED_IN_GRAPH = 100  # jit.allow_in_graph: one graph node, whatever else would apply
DISABLED = 90           # jit.disable: never traced into
KNOWN_CALLABLE = 80     # jitcore's meaning for one callable: a lookaside, a builtin's rule, a modelled constructor
TORCH_RUNTIME = 75      # torch's own machinery and what torch marks not-to-compile: runs in Python at a break
TORCH_OPERATOR = 70     # a callable from torch's operator namespaces or a Tensor method
NATIVE_LIBRARY = 60     # a standard-library function with effects
NAMEDTUPLE_CLASS = 50   # the kinds of class jitcore constructs, in the order their tests must run
MODULE_CLASS = 40
EXCEPTION_CLASS = 30
DICT_CLASS = 20
PLAIN_CLASS = 10
BY_TYPE = 0             # what any callable of one type means when nothing above claims it

#: callable -> {priority: rule}
_BY_CALLABLE: dict = {}
#: type of the callable -> {priority: rule}
_BY_TYPE: dict = {}
#: (priority, predicate, rule), highest priority first
_BY_PREDICATE: list = []


#: registrations made so far (Note [Call rules found once per capture])
_registrations = 0


def register_callable(fn, priority: int, rule: CallRule) -> None:
    _claim(_BY_CALLABLE, fn, priority, rule)


def register_type(tp: type, priority: int, rule: CallRule) -> None:
    _claim(_BY_TYPE, tp, priority, rule)


def register_predicate(priority: int, predicate: Callable, rule: CallRule) -> None:
    global _registrations
    _registrations += 1
    _BY_PREDICATE.append((priority, predicate, rule))
    _BY_PREDICATE.sort(key=lambda row: -row[0])


def _claim(table, key, priority, rule):
    global _registrations
    _registrations += 1
    by_priority = table.setdefault(key, {})
    if priority in by_priority:
        # two meanings for one callable at one priority: the order would depend on which module registered last
        raise ValueError(f"{key!r} is claimed twice at priority {priority}: {by_priority[priority].name}, "
                         f"{rule.name}")
    by_priority[priority] = rule


def claims() -> list:
    """(callable or type, priority) for every identity and type claim, for the test that none is claimed twice."""
    return [(key, priority) for table in (_BY_CALLABLE, _BY_TYPE) for key, by_priority in table.items()
            for priority in by_priority]


def rules_for(fn, answers: RuleAnswers | None = None):
    """The rules that claim fn, highest priority first; at one priority identity, then type, then predicates.
    `answers`: the capture's RuleAnswers, which finds them once per callable."""
    return _matching(fn) if answers is None else answers.rules(fn)


def _matching(fn):
    try:
        own = _BY_CALLABLE.get(_claimed_as(fn), {})
    except TypeError:  # an unhashable callable (an instance with __call__ and __eq__) has no identity claim
        own = {}
    typed = _BY_TYPE.get(type(fn), {})
    tables = sorted([(p, 0, r) for p, r in own.items()] + [(p, 1, r) for p, r in typed.items()],
                    key=lambda row: (-row[0], row[1]))
    index = 0
    for priority, predicate, rule in _BY_PREDICATE:
        while index < len(tables) and tables[index][0] >= priority:
            yield tables[index][2]
            index += 1
        if predicate(fn):
            yield rule
    for _, _, rule in tables[index:]:
        yield rule


# Note [Call rules found once per capture]
# What the rules say about a callable depends on the callable (its identity and type, its module and name, its
# marks, its class's attributes) and on the registrations. None of these changes during one capture attempt for
# an object already asked about: the traced code's writes to functions, classes, modules and the marks' tables are
# side effects, replayed after the graph (capture/side_effects.py). A registration or a mark made meanwhile (a rule
# registered lazily, a mark set from outside) empties the memo: `_generation` counts both. So an attempt finds each
# callable's rules once and replays them for every later question (t5 asks 2,753 times about a few hundred
# callables, each time through ~20 predicates). They are still found lazily, in order: a predicate runs only when
# a question reaches it, as before. An entry holds its callable, so that its id is not reused while it lives.
class RuleAnswers:
    """One capture attempt's memo of `rules_for`: id(callable) -> what was found for it so far."""
    __slots__ = ("_found", "_generation")

    def __init__(self):
        self._found: dict = {}
        self._generation = _generation()

    def rules(self, fn):
        generation = _generation()
        if generation != self._generation:
            self._found.clear()
            self._generation = generation
        found = self._found.get(address(fn))
        if found is None or found.fn is not fn:
            found = self._found[address(fn)] = _Found(fn)
        return found.replay()


class _Found:
    """The rules of one callable found so far (`rules`, in order) and the search that finds the rest."""
    __slots__ = ("fn", "rules", "search")

    def __init__(self, fn):
        self.fn = fn
        self.rules: list = []
        self.search = _matching(fn)

    def replay(self):
        index = 0
        while True:
            if index == len(self.rules):
                if self.search is None:
                    return
                try:
                    rule = next(self.search)
                except StopIteration:
                    self.search = None
                    return
                except BaseException:
                    # a predicate raised: a later question searches again past what was found, and meets it again
                    self.search = itertools.islice(_matching(self.fn), len(self.rules), None)
                    raise
                self.rules.append(rule)
            yield self.rules[index]
            index += 1


def _generation() -> tuple:
    return _registrations, marks_generation()


def _claimed_as(fn):
    """What a callable is claimed by: a C classmethod read from its class (`dict.fromkeys`,
    `itertools.chain.from_iterable`) is a new bound method on every read, so it is claimed by the descriptor in the
    class that defines it; its handler finds the class in `fn.__self__`."""
    if type(fn) is types.BuiltinMethodType and isinstance(fn.__self__, type):
        for klass in fn.__self__.__mro__:
            descriptor = vars(klass).get(fn.__name__)
            if descriptor is not None:
                return descriptor if type(descriptor) is types.ClassMethodDescriptorType else fn
    return fn


def first_rule(fn, answers: RuleAnswers | None = None) -> CallRule | None:
    return next(rules_for(fn, answers), None)


def call(state, fn, args: list, kwargs: dict):
    """`fn(*args, **kwargs)` by the first rule whose handler answers."""
    for rule in rules_for(fn, state.ctx.rule_answers if state is not None else None):
        if rule.handler is None:
            break
        result = rule.handler(state, fn, args, kwargs)
        if result is not NotImplemented:
            return result
    raise GraphBreak("unsupported_call", f"calling {getattr(fn, '__qualname__', None) or repr(fn)}")


# -- the user's marks ---------------------------------------------------------------------------------------
# Calling a class constructs it: the marks act on functions (a class's __init__ is inlined, or not, by its own).

def _marked_allowed(fn) -> bool:
    return not isinstance(fn, type) and is_allowed_in_graph(fn)


def _marked_disabled(fn) -> bool:
    return not isinstance(fn, type) and is_marked_disabled(fn)


def graph_node(state, fn, args, kwargs):
    return graph_call(state, "call_function", fn, args, kwargs)


register_predicate(ALLOWED_IN_GRAPH, _marked_allowed, CallRule("allowed in graph", Meaning.GRAPH, graph_node))
register_predicate(DISABLED, _marked_disabled, CallRule("disabled", Meaning.OPAQUE))


# -- what a callable means by its type, when nothing above claims it ------------------------------------------
register_type(types.FunctionType, BY_TYPE, CallRule("Python function", Meaning.INLINE))
_UNKNOWN_BUILTIN = CallRule("builtin without a rule", Meaning.OPAQUE)
for _tp in (types.BuiltinFunctionType, types.MethodDescriptorType, types.WrapperDescriptorType,
            types.MethodWrapperType, types.ClassMethodDescriptorType):
    register_type(_tp, BY_TYPE, _UNKNOWN_BUILTIN)
