"""Globals: del of a global (DELETE_GLOBAL), global rebinding / mutation, graph break before any tensor op."""
import sys
import torch
from harness import probe, T, main

G = "globals"
_mod = sys.modules[__name__]

COUNTER = 0
GLIST = []
GDICT = {}


def _reset():
    global COUNTER, GLIST, GDICT
    COUNTER = 0
    GLIST = []
    GDICT = {}
    _mod.__dict__.pop("TMP", None)
    _mod.__dict__.pop("NEWG", None)
    _mod.TMP = 5


def _snap():
    return (COUNTER, list(GLIST), dict(GDICT), _mod.__dict__.get("TMP", "<absent>"), _mod.__dict__.get("NEWG", "<absent>"))


ST = (_reset, _snap)


@probe(G, state=ST)
def del_global(x):
    global TMP
    v = TMP
    del TMP
    return x + v


@probe(G, state=ST)
def del_global_then_read(x):
    global TMP
    del TMP
    try:
        return x + TMP
    except NameError:
        return x - 1


@probe(G, state=ST)
def global_increment(x):
    global COUNTER
    COUNTER += 1
    return x * COUNTER


@probe(G, state=ST)
def global_new_binding(x):
    global NEWG
    NEWG = 3
    return x + NEWG


@probe(G, state=ST)
def global_list_append(x):
    GLIST.append(1)
    return x + len(GLIST)


@probe(G, state=ST)
def global_list_iadd(x):
    global GLIST
    GLIST += [1, 2]
    return x + len(GLIST)


@probe(G, state=ST)
def global_dict_setitem(x):
    GDICT["k"] = 2
    return x + GDICT["k"]


@probe(G, state=ST)
def print_before_tensor_op(x):
    print("start")
    return x.sin() + x.cos()


@probe(G, state=ST)
def break_then_tensor_ops(x):
    GLIST.append(len(str(object())) > 0)
    print("a")
    y = x * 2
    return y.relu() + 1


@probe(G, state=ST)
def global_read_in_helper(x):
    def helper():
        return COUNTER + 2
    return x + helper()


@probe(G)
def builtins_via_module(x):
    import builtins
    return x + builtins.len([1, 2])


@probe(G)
def import_inside(x):
    import math as m
    from torch.nn import functional as F
    return F.relu(x) + m.pi


if __name__ == "__main__":
    main(G)
