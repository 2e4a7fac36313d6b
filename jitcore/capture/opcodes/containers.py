"""Building and unpacking containers: BUILD_*, LIST_*/MAP_*/DICT_*, UNPACK_*, slices, strings."""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.opcodes.registry import opcode
from jitcore.capture.values import NOT_CONSTANT, const
from jitcore.capture.values.constant import fold
from jitcore.capture.values.exception import ExceptionValue
from jitcore.capture.values.mapping import DictValue, mapping_entries
from jitcore.capture.values.sequence import TupleValue, ListValue
from jitcore.capture.values.sets import SetValue
from jitcore.capture.values.string_format import format_field, join_text
from jitcore.capture.values.symint import symbolic_slice


@opcode("BUILD_TUPLE", signature="items[oparg] -- tup")
def build_tuple(state, inst, items):
    return TupleValue(items)


@opcode("BUILD_LIST", signature="items[oparg] -- lst")
def build_list(state, inst, items):
    return ListValue(items)


@opcode("BUILD_SET", signature="items[oparg] -- set")
def build_set(state, inst, items):
    result = SetValue.made(state, set, ("new", set))
    for item in items:
        result.add(state, item)
    return result


@opcode("SET_ADD", signature="st, unused[oparg-1], item -- st, unused[oparg-1]")
def set_add(state, inst, st, unused, item):
    st.add(state, item)
    return (st, *unused)


@opcode("SET_UPDATE", signature="st, unused[oparg-1], iterable -- st, unused[oparg-1]")
def set_update(state, inst, st, unused, iterable):
    st.update(state, iterable)
    return (st, *unused)


@opcode("BUILD_MAP", signature="items[oparg*2] -- dict")
def build_map(state, inst, items):
    result = DictValue({})
    for key, value in zip(items[::2], items[1::2]):
        result.setitem(state, key, value)
    return result


@opcode("BUILD_CONST_KEY_MAP", signature="values[oparg], keys -- dict")
def build_const_key_map(state, inst, values, keys):
    names = keys.constant()
    return DictValue(dict(zip(names, values)))


@opcode("BUILD_SLICE", signature="start, stop, step if (oparg == 3) -- slice")
def build_slice(state, inst, start, stop, step):
    return build_slice_value(state, [start, stop] + ([step] if step is not None else []))


def build_slice_value(state, parts):
    symbolic = symbolic_slice(parts)
    if symbolic is not None:
        return symbolic  # `x[:n]` with n a tensor's size: the bound stays symbolic
    consts = [p.constant() for p in parts]
    if NOT_CONSTANT in consts:
        raise GraphBreak("data_dependent" if any(p.is_tensor() for p in parts) else "unsupported_value",
                         "a slice bound that is not a Python constant")
    return const(slice(*consts))


@opcode("LIST_APPEND", signature="lst, unused[oparg-1], item -- lst, unused[oparg-1]")
def list_append(state, inst, lst, unused, item):
    # through the list's own protocol: a list passed in (a resume function's comprehension) records the append
    lst.call_method(state, "append", [item], {})
    return (lst, *unused)


@opcode("LIST_EXTEND", signature="lst, unused[oparg-1], iterable -- lst, unused[oparg-1]")
def list_extend(state, inst, lst, unused, iterable):
    lst.call_method(state, "extend", [iterable], {})
    return (lst, *unused)


@opcode("MAP_ADD", signature="dct, unused[oparg-1], key, value -- dct, unused[oparg-1]")
def map_add(state, inst, dct, unused, key, value):
    dct.setitem(state, key, value)
    return (dct, *unused)


@opcode("DICT_UPDATE", "DICT_MERGE", signature="dct, unused[oparg-1], update -- dct, unused[oparg-1]")
def dict_update(state, inst, dct, unused, update):
    entries = mapping_entries(state, update)
    if entries is None:
        raise GraphBreak("unsupported_value", f"** of a {update.kind_name}")
    if inst.opname == "DICT_MERGE":
        repeated = set(dct.items) & set(entries)
        if repeated:
            raise GraphBreak.raises(TypeError, f"got multiple values for keyword argument "
                                               f"'{sorted(repeated)[0]}'")
    dct.items.update(entries)
    return (dct, *unused)


@opcode("UNPACK_SEQUENCE", signature="seq -- unused[oparg]")
def unpack_sequence(state, inst, seq):
    items = seq.iterate(state)
    if len(items) > inst.arg:
        raise GraphBreak.raises(ValueError, f"too many values to unpack (expected {inst.arg})")
    if len(items) < inst.arg:
        raise GraphBreak.raises(ValueError, f"not enough values to unpack (expected {inst.arg}, got {len(items)})")
    return tuple(reversed(items))


@opcode("UNPACK_EX", signature="seq -- unused[(oparg & 0xFF) + (oparg >> 8) + 1]")
def unpack_ex(state, inst, seq):
    before, after = inst.arg & 0xFF, inst.arg >> 8
    items = seq.iterate(state)
    if len(items) < before + after:
        raise GraphBreak.raises(ValueError, f"not enough values to unpack (expected at least {before + after}, "
                                            f"got {len(items)})")
    middle = ListValue(items[before:len(items) - after])
    ordered = [*items[:before], middle, *items[len(items) - after:]]
    return tuple(reversed(ordered))


@opcode("CALL_INTRINSIC_1", signature="value -- res")
def call_intrinsic_1(state, inst, value):
    name = inst.argrepr
    if name == "INTRINSIC_LIST_TO_TUPLE":
        return TupleValue(list(value.sequence_items()))
    if name == "INTRINSIC_UNARY_POSITIVE":
        return value.unary_op(state, "pos")
    if name == "INTRINSIC_STOPITERATION_ERROR":
        # a generator's exception on its way out: StopIteration becomes RuntimeError (PEP 479), others pass
        if isinstance(value, ExceptionValue):
            if issubclass(value.cls, (StopIteration, StopAsyncIteration)):
                error = ExceptionValue(RuntimeError, [const("generator raised StopIteration")])
                error.origin = value.origin
                # raised from the StopIteration, which is also its context (CPython's _PyErr_FormatFromCause)
                error.attrs.update({"__cause__": value, "__context__": value, "__suppress_context__": const(True)})
                return error
            return value
    raise GraphBreak("unsupported_opcode", f"CALL_INTRINSIC_1 {name}")


@opcode("FORMAT_VALUE", signature="value, fmt_spec if ((oparg & 0x04) == 0x04) -- result")
def format_value(state, inst, value, fmt_spec):
    spec = "" if fmt_spec is None else fmt_spec.constant()
    return format_field(state, value, (None, "s", "r", "a")[inst.arg & 0x03], spec)


@opcode("BUILD_STRING", signature="pieces[oparg] -- str")
def build_string(state, inst, pieces):
    return join_text(list(pieces))
