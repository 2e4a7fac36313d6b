"""`address(obj)`: a key for an object's identity, as `id(obj)` is, without the audit event `id()` raises.

Imports nothing.
"""
from __future__ import annotations

__all__ = ["address"]

# Note [Identity keys without id()]
# `id()` raises the CPython audit event `builtins.id`. Once any audit hook is installed (the filelock package
# installs one when imported, and transformers, torch.compile and Inductor import it), each call runs that hook in
# Python: ~1 us against ~0.05 us (Note [Audited reads], guards/function_words.py). A capture keys its memos by
# identity tens of thousands of times (t5's first call called id() 37,000 times). `object.__hash__` is the
# pointer hash CPython gives objects by default, whatever the object's own class defines: the address rotated
# right by four bits, a one-to-one function of it (a live object's address is never all ones, the one value the
# hash would change), so two live objects never share it. It raises no event. Use it where the number is only a
# key compared with other keys made here; where the number must be the address itself (compared with what ctypes
# reads, or shown to the user), `id()` stays.
address = object.__hash__
