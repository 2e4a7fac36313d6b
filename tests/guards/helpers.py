"""Compile one check on one argument and report what the generated function and the slow path say."""

from __future__ import annotations

import builtins

from jitcore.guards import Check, GuardTree, compile_tree


def guard_one(check: Check, name: str = "v"):
    """A GuardFunction whose tree holds `check` on the guarded function's only argument, `name`."""
    tree = GuardTree()
    tree.add((("local", name),), check, name)
    return compile_tree(tree, [name], {}, vars(builtins))


def run(check: Check, value: object) -> tuple[bool, list[str]]:
    """(generated check result, failures()) for `value`; asserts the two agree with explain()."""
    guard = guard_one(check)
    hit = guard.check(value, None)
    messages = guard.failures((value,), None)
    assert hit == (messages == []), (hit, messages, guard.source)
    return hit, messages
