"""Graph breaks inside loops: whether the frame a break stopped runs natively instead of resuming.

`runs_natively(continuation)` is the policy of Note [Breaks inside loops]; `inside_loop(code, offset)` the control-flow
fact it rests on. Imports capture's instruction and exception tables only; the runtime acts on the answer.
"""
from __future__ import annotations

from jitcore.capture.code_cache import CodeCache
from jitcore.capture.interpreter import instructions_of
from jitcore.capture.liveness import JUMPS
from jitcore.capture.values.torch_rules import is_torch_code

__all__ = ["runs_natively", "inside_loop"]

#: code -> {offset: whether the instruction there is inside a loop}
_LOOPS = CodeCache()
_RETURNS = frozenset({"RETURN_VALUE", "RETURN_CONST"})
#: graphs a container's resumed loop adds besides the layer that broke: the layers before it, the layers after it
_RESUME_PAYS = 2


# Note [Breaks inside loops]
# A break at an instruction that lies inside a loop of the frame being captured (some path from it comes back to
# it) does not resume in graphs: the frame runs natively, and every Python function it calls runs through its
# compiled copy, so each is captured as a frame of its own (codegen/native_calls.py, runtime/loop_native.py).
# That is torch.compile's rule (Dynamo skips a frame whose graph break lies before a backward jump), and it is
# what keeps the graph count no higher than torch.compile's: resumed loops make one entry per path through the
# body (a counter compared with a limit, the loop's last turn, each value of a constant index), each a graph,
# where a natively run loop makes none and its callees one per code.
# The exception is the loop of a torch.nn container's forward (Sequential's `for module in self`), which only calls
# the layers it holds. Run natively, each layer whose forward is the user's is a frame of its own with a graph of
# its own (torch.compile does the same; torch's own layers run eagerly on both sides); resumed, the layers before
# the one that broke make one graph and those after it another. So the container resumes when it holds more of
# the user's layers than those two graphs (`_RESUME_PAYS`), counted on the container the call was made on; a
# resume function of a container's frame (the loop met again after resuming) keeps resuming.
# A break the frame cannot resume from (unresumable) runs natively as before, its callees not compiled.


def runs_natively(continuation, container) -> bool:
    """Does the frame stopped at this break run natively (Note [Breaks inside loops])? `container`: the module a
    torch.nn container's forward was called on (None for a resume function of one)."""
    code = continuation.code
    if not inside_loop(code, continuation.inst.offset):
        return False
    if is_torch_code(code):
        # torch.nn's containers: the only torch code with compiled copies and resume functions of its own
        return container is not None and _user_layers(container) <= _RESUME_PAYS
    return True


def _user_layers(container) -> int:
    """How many of the container's modules have a forward of the user's (each a frame of its own when run
    natively)."""
    count = 0
    for module in container._modules.values():
        forward = getattr(type(module), "forward", None)
        code = getattr(forward, "__code__", None)
        count += code is not None and not is_torch_code(code)
    return count


def inside_loop(code, offset: int) -> bool:
    """Does a backward jump follow the instruction at `offset` before any return (torch.compile's test)?"""
    known = _LOOPS.get(code)
    if known is None:
        known = _LOOPS[code] = {}
    found = known.get(offset)
    if found is None:
        found = known[offset] = _jumps_back(code, offset)
    return found


def _jumps_back(code, offset: int) -> bool:
    insts, index = instructions_of(code)
    for inst in insts[index[offset]:]:
        if inst.opname in _RETURNS:
            return False
        if inst.opcode in JUMPS and inst.argval < offset:
            return True
    return False
