"""One root check standing for many NamespaceEntryMatch checks: the name-resolution facts of a capture.

A Hugging Face model's capture relies on a few hundred facts about class and module namespaces (a config
attribute absent from each class before the one that defines it in the MRO, a method found on its class, a
builtin not shadowed by a module global). As separate root checks each is a line of the generated guard, and
together they were the largest part of a call's guard time (BERT: 155 of ~470 checks). NamespaceBatchMatch
tests them all with C-level `map` over the namespaces and keys; a failure is reported member by member, in the
members' own words (`G.len: now set to ...`), so the batch changes the cost of a hit, not what a miss says.

Imports the standard library and guards only.
"""
from __future__ import annotations

import operator
from itertools import repeat

from jitcore.guards.checks import Check, NamespaceEntryMatch
from jitcore.guards.render import Namespace

__all__ = ["NamespaceBatchMatch", "batch_namespace_checks"]

#: below this many entries separate checks cost no more than the batch
MIN_ENTRIES = 4

_contains = operator.contains
_getitem = operator.getitem
_is = operator.is_
_is_not = operator.is_not
_call = operator.call


class NamespaceBatchMatch(Check):
    """A root check: every member NamespaceEntryMatch holds. The members keep their own references (the
    namespace strongly, the expected object weakly where it allows), so the batch keeps alive no more than they
    did; an expected object that died fails the batch, as it fails its member."""

    __slots__ = ("members", "_absent_in", "_absent_keys", "_strong_in", "_strong_keys", "_strong", "_weak_in",
                 "_weak_keys", "_weak_refs")
    cost = 3
    root_name = "namespaces"

    def __init__(self, members) -> None:
        self.members = tuple(members)
        absent = [m for m in self.members if m.expects_absent]
        strong = [m for m in self.members if not m.expects_absent and m._ref is None]
        weak = [m for m in self.members if not m.expects_absent and m._ref is not None]
        self._absent_in = tuple(m.namespace for m in absent)
        self._absent_keys = tuple(m.key for m in absent)
        self._strong_in = tuple(m.namespace for m in strong)
        self._strong_keys = tuple(m.key for m in strong)
        self._strong = tuple(m._strong for m in strong)
        self._weak_in = tuple(m.namespace for m in weak)
        self._weak_keys = tuple(m.key for m in weak)
        self._weak_refs = tuple(m._ref for m in weak)

    def holds(self) -> bool:
        try:
            if any(map(_contains, self._absent_in, self._absent_keys)):
                return False
            if not all(map(_is, map(_getitem, self._strong_in, self._strong_keys), self._strong)):
                return False
            expected = list(map(_call, self._weak_refs))
            return (all(map(_is, map(_getitem, self._weak_in, self._weak_keys), expected))
                    and all(map(_is_not, expected, repeat(None))))
        except KeyError:  # an entry that was deleted
            return False

    def render(self, var: str, ns: Namespace) -> str:
        return f"{ns.constant(self.holds, 'namespaces')}()"

    def failed_members(self) -> list[tuple]:
        """The members that fail now, as GuardFunction.failed_checks rows `(path, user_name, check, value, why)`."""
        failed = []
        for member in self.members:
            why = member.explain()
            if why is not None:
                failed.append((None, member.label, member, None, why))
        return failed

    def explain(self, value: object = None) -> str | None:
        for member in self.members:
            why = member.explain()
            if why is not None:
                return f"{member.label} {why}"
        return None

    def describe(self) -> str:
        return f"NamespaceBatchMatch({len(self.members)} namespace entries)"

    def _key(self) -> tuple:
        return tuple(member._key() for member in self.members)


def batch_namespace_checks(collected: list) -> list:
    """collected (source, check) pairs -> the same guards with the root NamespaceEntryMatch checks folded into
    one NamespaceBatchMatch (when there are at least MIN_ENTRIES of them)."""
    members = [check for source, check in collected if source is None and type(check) is NamespaceEntryMatch]
    if len(members) < MIN_ENTRIES:
        return collected
    unique = list({member: None for member in members})  # checks compare by key: one member per fact
    kept = [(source, check) for source, check in collected
            if not (source is None and type(check) is NamespaceEntryMatch)]
    return kept + [(None, NamespaceBatchMatch(unique))]
