"""Successors of a breaking instruction: stack kinds from the handlers' declared signatures, live locals there."""
import dis

from jitcore.capture.continuation import _successors


def _inst(fn, opname):
    return next(i for i in dis.get_instructions(fn) if i.opname == opname)


def _looping(xs, done):
    for x in xs:
        print(x)
    return done


def test_an_exhausted_for_iter_continues_past_its_end_for_with_the_iterator_popped():
    code = _looping.__code__
    inst = _inst(_looping, "FOR_ITER")
    fall, jump = _successors(code, inst, ("value",), {"xs": 1, "done": 2})
    assert fall.kinds == ("value", "value") and fall.live == {"done"}
    insts = list(dis.get_instructions(code))
    end_for = next(i for i, ins in enumerate(insts) if ins.opname == "END_FOR")
    assert jump.offset == insts[end_for + 1].offset and jump.kinds == () and jump.live == {"done"}


def _nested(rows, done):
    for row in rows:
        for x in row:
            print(x)
    return done


def test_an_exhausted_inner_for_iter_keeps_the_outer_iterator():
    code = _nested.__code__
    inner = [i for i in dis.get_instructions(code) if i.opname == "FOR_ITER"][1]
    fall, jump = _successors(code, inner, ("value", "value"), {"rows": 1, "done": 2})
    assert fall.kinds == ("value", "value", "value")
    assert jump.kinds == ("value",)


def _method_load(obj):
    return obj.run()


def test_a_method_form_attribute_load_leaves_a_slot_only_the_running_code_knows():
    inst = _inst(_method_load, "LOAD_ATTR")
    fall, jump = _successors(_method_load.__code__, inst, ("value",), {})
    assert fall.kinds == ("unknown", "value") and jump is None


def _branching(x, a, b):
    if x:
        return a
    return b


def test_each_branch_of_a_conditional_jump_has_its_own_live_locals():
    inst = _inst(_branching, "POP_JUMP_IF_FALSE")
    fall, jump = _successors(_branching.__code__, inst, ("value",), {"x": 0, "a": 1, "b": 2})
    assert (fall.kinds, fall.live) == ((), {"a"})
    assert (jump.kinds, jump.live) == ((), {"b"})
