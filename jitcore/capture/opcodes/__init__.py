"""Opcode handlers, one module per family; importing this package fills the finished table.

`HANDLERS` maps each supported 3.12 opname to its handler; `UNSUPPORTED` lists the opnames refused on purpose with
their graph-break kind. Every other opname also breaks the graph (unsupported_opcode).
"""
from jitcore.capture.opcodes.registry import HANDLERS, UNSUPPORTED, Signature, unsupported
from jitcore.capture.opcodes import (stack, loads, arith, containers, calls, jumps, functions,  # noqa: F401
                                    with_blocks, generators, imports, exceptions, names)

unsupported("generator", "GET_AWAITABLE", "GET_AITER", "GET_ANEXT", "END_ASYNC_FOR", "BEFORE_ASYNC_WITH")
unsupported("side_effect", "DELETE_DEREF")
unsupported("unsupported_opcode", "GET_LEN", "MATCH_MAPPING", "MATCH_SEQUENCE", "MATCH_KEYS", "MATCH_CLASS",
            "CHECK_EG_MATCH",
            "CALL_INTRINSIC_2", "LOAD_FROM_DICT_OR_GLOBALS")

__all__ = ["HANDLERS", "UNSUPPORTED", "Signature"]
