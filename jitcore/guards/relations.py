"""A check over several values at once: the relations between symbolic sizes (and dynamic numbers) that a graph
over symbolic shapes relies on, as torch's ShapeEnv produced them (`2 <= T0.size()[0]`,
`T1.size()[0] == T0.size()[0]`, `(6*T0.size()[0]) % 4 == 0`, `T0.stride()[0] == T0.size()[1]`).

The expressions name the values by tokens (`T0`, `T1`, ...): token K is the value at the K-th path the tree
attached the check to. Rendering substitutes the guard function's locals; `explain` words the first relation that
fails in the user's names: `x.shape[0] >= 5 no longer holds (x.shape[0] = 4)`.
Imports the standard library, torch and guards.checks only; never jitcore.
"""
from __future__ import annotations

import ast
import re

from jitcore.guards.checks import Check
from jitcore.guards.render import Namespace

__all__ = ["ShapeRelationMatch", "TOKEN"]

#: how a value is named in a relation: TOKEN.format(k) for the k-th path
TOKEN = "T{}"
_READ = re.compile(r"\bT(\d+)\.(size|stride)\(\)\[(\d+)\]|\bT(\d+)\.storage_offset\(\)|\bT(\d+)\b")
_FLIP = {"<=": ">=", "<": ">", ">=": "<=", ">": "<"}


def _namespace() -> dict:
    """What produce_guards' expressions may call (torch.sym_max, math.floor, IsNonOverlappingAndDenseIndicator)."""
    from torch.fx.experimental.symbolic_shapes import SYMPY_INTERP  # lazy: only for entries with dynamic shapes
    return dict(SYMPY_INTERP)


def split_conjunctions(exprs) -> list[str]:
    """Each top-level `a and b` as two relations, so that each is checked and explained on its own."""
    out = []
    for expr in exprs:
        tree = ast.parse(expr, mode="eval").body
        if isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.And):
            out += split_conjunctions([ast.unparse(v) for v in tree.values])
        else:
            out.append(expr)
    return out


class ShapeRelationMatch(Check):
    """Every expression in `exprs` holds over the values at the tree's paths (token Tk = the k-th value).
    `names[k]` is the user's name of value k."""

    __slots__ = ("exprs", "names", "_compiled")
    cost = 50  # after every leaf check: they settle types and ranks, which the expressions rely on

    def __init__(self, exprs, names) -> None:
        self.exprs = tuple(split_conjunctions(exprs))
        self.names = tuple(names)
        self._compiled = None

    def render_many(self, variables: list[str], ns: Namespace) -> str:
        for name, value in _namespace().items():
            if name not in ns:
                ns[name] = value
        # Note [Sizes read once per relation]
        reads: dict[tuple[int, str], str] = {}

        def sub(match):
            if match.group(1) is not None:
                key = (int(match.group(1)), match.group(2))
                local = reads.get(key)
                if local is None:
                    local = reads[key] = ns.temp("z")
                return f"{local}[{match.group(3)}]"
            if match.group(4) is not None:
                return f"{variables[int(match.group(4))]}.storage_offset()"
            return variables[int(match.group(5))]

        tests = [f"({_READ.sub(sub, expr)})" for expr in self.exprs]
        if reads:
            # a tuple of one or more items is true: the reads run first, then every test reads their locals
            tests.insert(0, "(" + "".join(f"({local} := {variables[k]}.{kind}()), "
                                          for (k, kind), local in reads.items()) + ")")
        return " and ".join(tests)

    def render(self, var: str, ns: Namespace) -> str:
        raise TypeError("ShapeRelationMatch reads several values: GuardTree.add_relation, render_many")

    def holds(self, values) -> bool:
        return self.explain(values) is None

    def explain(self, value: object) -> str | None:
        """`value`: the tuple of values at the paths. The first relation that does not hold, in user names."""
        ns = _namespace()
        ns.update({TOKEN.format(k): v for k, v in enumerate(value)})
        for expr in self.exprs:
            try:
                ok = bool(eval(expr, ns))
            except Exception as error:
                return f"{self.user_text(expr)} could not be checked ({type(error).__name__}: {error})"
            if not ok:
                reads = []
                for read in dict.fromkeys(m.group(0) for m in _READ.finditer(expr)):
                    try:
                        reads.append(f"{self.user_text(read)} = {eval(read, ns)}")
                    except Exception:
                        pass
                return f"{self.user_text(expr)} no longer holds ({', '.join(reads)})"
        return None

    def user_text(self, expr: str) -> str:
        """An expression in the user's names: `x.shape[0] >= 2` for `2 <= T0.size()[0]`."""
        def sub(match):
            if match.group(1) is not None:
                name = self.names[int(match.group(1))]
                return f"{name}.shape[{match.group(3)}]" if match.group(2) == "size" else \
                    f"{name}.stride({match.group(3)})"
            if match.group(4) is not None:
                return f"{self.names[int(match.group(4))]}.storage_offset()"
            return self.names[int(match.group(5))]

        text = _READ.sub(sub, expr)
        flipped = re.fullmatch(r"(-?\d+) (<=|<|>=|>) ([^<>=]+)", text)
        if flipped:
            return f"{flipped.group(3)} {_FLIP[flipped.group(2)]} {flipped.group(1)}"
        return text

    def user_lines(self) -> list[str]:
        return [self.user_text(expr) for expr in self.exprs]

    def describe(self) -> str:
        return f"ShapeRelationMatch({'; '.join(self.user_lines())})"

    def _key(self) -> tuple:
        return (self.exprs, self.names)


# Note [Sizes read once per relation]
# The relations of a graph over symbolic sizes name the same few sizes many times: ResNet-18's over an image's
# height and width hold 53 reads of `x.size()[2]` and `x.size()[3]` (each output size of each stage, bounded and
# compared with 1). Rendered as written, every one is a `size()` call that builds a new torch.Size, about four
# fifths of the relation's cost per call. The generated test instead reads each tensor's `size()` and `stride()`
# once, into a local, before the first relation, and the relations index those locals. Nothing runs between the
# reads (the tensor's own checks have passed, and the relations only compute on ints), so this is the same test;
# a read that raises makes the guard miss, as it did before at the relation that read it.
