"""A dict's version tag (CPython 3.12 `ma_version_tag`, PEP 509) read through a ctypes view, so that a check over
many dicts can tell in one pass that none of them changed (Note [Dict version tags]).

Imports the standard library only; never jitcore. Entry point: tag_views(dicts) -> a reader of their tags, or None.
"""
from __future__ import annotations

import ctypes
import operator

__all__ = ["tag_views", "read_tag", "read_tags"]

_WORD = ctypes.c_ssize_t
_TAG = ctypes.c_uint64


# Note [Dict version tags]
# CPython 3.12 keeps a 64-bit version tag in every dict (PyDictObject.ma_version_tag, after ma_used; PEP 509,
# deprecated by PEP 699 but still maintained in 3.12). Every change of a dict's contents stores a fresh value
# drawn from one interpreter-wide counter (Objects/dictobject.c: insertdict, insert_to_emptydict, delitem_common,
# PyDict_Clear, dict_popitem, PyDict_SetDefault, dict_merge's clone; Python/bytecodes.c: STORE_ATTR_WITH_HINT),
# so the counter never hands the same value out twice: a dict whose tag still reads as before has not been
# changed since, as long as the dict stayed alive (the checks hold the dicts they view). Storing the same object
# again keeps the tag, and leaves the dict as it was. Adding a dict watcher sets low bits of the tag without a
# change of contents: that only makes a check take its slow path once. What a tag does not cover: the objects a
# dict holds (a tensor's metadata, a list's items), and the order of an OrderedDict (`move_to_end` changes its
# own linked list, not the dict). The offset is probed on import: ma_used must read as the dict's length and the
# next word must change on every kind of change the probe makes and stay put on reads; if not, tag_views gives
# None and the checks keep their item-by-item path.


def _probe_offset() -> int | None:
    probe: dict = {}
    for index in range(2, 8):
        offset = index * ctypes.sizeof(_WORD)
        used = _WORD.from_address(id(probe) + ctypes.sizeof(_WORD) * (index - 1))
        tag = _TAG.from_address(id(probe) + offset)
        if used.value != 0:
            continue
        seen = [tag.value]
        probe["a"] = 1
        seen.append(tag.value)
        counted = used.value == 1
        probe["a"] = 2
        seen.append(tag.value)
        probe.get("a")
        same = tag.value == seen[-1]
        del probe["a"]
        seen.append(tag.value)
        probe.setdefault("b", 1)
        seen.append(tag.value)
        probe.clear()
        seen.append(tag.value)
        if same and counted and used.value == 0 and len(set(seen)) == len(seen) and seen == sorted(seen):
            return offset
        return None
    return None


_OFFSET = _probe_offset()
#: one tag read: what `map` applies to each view
read_tag = operator.attrgetter("value")


def tag_views(dicts) -> list | None:
    """Views of the tags of `dicts`, in order, or None where this interpreter's layout was not found or one is not
    an exact dict (a subclass may keep its contents elsewhere). The views hold no reference: the caller keeps the
    dicts alive."""
    if _OFFSET is None:
        return None
    views = []
    for table in dicts:
        if type(table) is not dict:
            return None
        views.append(_TAG.from_address(id(table) + _OFFSET))
    return views


def read_tags(views) -> list:
    """The tags the views read now."""
    return list(map(read_tag, views))
