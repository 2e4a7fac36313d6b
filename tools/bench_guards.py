"""Micro-benchmark of compiled guard functions: ns per call on a hit (informational, not a test).

Run: .venv/bin/python tools/bench_guards.py
Cases: one tensor argument, ten tensor arguments, and a module attribute path (self.fc.weight, self.fc.bias,
read through nn.Module.__getattr__ or through the raw _modules/_parameters dicts), each with the torch
global-state root check; plus an empty guarded call (the floor) and the global-state check alone.
"""

import builtins
import os
import sys
import timeit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from jitcore.guards import GlobalStateMatch, GuardTree, IdMatch, TensorMatch, compile_tree  # noqa: E402


def _tree_for_tensors(tensors: list[torch.Tensor]) -> GuardTree:
    tree = GuardTree()
    tree.add_root(GlobalStateMatch())
    for index, tensor in enumerate(tensors):
        tree.add((("local", f"x{index}"),), TensorMatch(tensor), f"x{index}")
    return tree


def _tree_for_module(module: torch.nn.Module, x: torch.Tensor) -> GuardTree:
    tree = GuardTree()
    tree.add_root(GlobalStateMatch())
    tree.add((("local", "self"),), IdMatch(module), "self")
    tree.add((("local", "self"), ("attr", "fc"), ("attr", "weight")), TensorMatch(module.fc.weight), "self.fc.weight")
    tree.add((("local", "self"), ("attr", "fc"), ("attr", "bias")), TensorMatch(module.fc.bias), "self.fc.bias")
    tree.add((("local", "x"),), TensorMatch(x), "x")
    return tree


def _tree_for_module_raw(module: torch.nn.Module, x: torch.Tensor) -> GuardTree:
    """The same facts reached through raw dict steps, skipping nn.Module.__getattr__ (a Python call per read)."""
    tree = GuardTree()
    tree.add_root(GlobalStateMatch())
    tree.add((("local", "self"),), IdMatch(module), "self")
    fc = (("local", "self"), ("attr", "_modules"), ("dictitem", "fc"), ("attr", "_parameters"))
    tree.add(fc + (("dictitem", "weight"),), TensorMatch(module.fc.weight), "self.fc.weight")
    tree.add(fc + (("dictitem", "bias"),), TensorMatch(module.fc.bias), "self.fc.bias")
    tree.add((("local", "x"),), TensorMatch(x), "x")
    return tree


def _ns_per_call(check, args: tuple, number: int = 50_000) -> float:
    # Call through a compiled statement, not a lambda, so the figure is the guard plus one call.
    names = {f"a{index}": value for index, value in enumerate(args)}
    statement = f"check({''.join(f'a{index}, ' for index in range(len(args)))}None)"
    assert eval(statement, {"check": check, **names}) is True, "benchmark guard must hit"
    timer = timeit.Timer(statement, globals={"check": check, **names})
    return min(timer.repeat(repeat=25, number=number)) / number * 1e9


class _Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)


def main() -> None:
    cases = []
    empty = compile_tree(GuardTree(), ["x0"], {}, vars(builtins))
    cases.append(("empty tree (call floor)", empty.check, (torch.zeros(1),)))
    for count in (1, 10):
        tensors = [torch.randn(16, 8) for _ in range(count)]
        params = [f"x{index}" for index in range(count)]
        guard = compile_tree(_tree_for_tensors(tensors), params, {}, vars(builtins))
        cases.append((f"{count} tensor(s) + global state", guard.check, tuple(tensors)))
    net, x = _Net(), torch.randn(2, 8)
    guard = compile_tree(_tree_for_module(net, x), ["self", "x"], {}, vars(builtins))
    cases.append(("module via getattr: self.fc.weight, .bias, x", guard.check, (net, x)))
    guard = compile_tree(_tree_for_module_raw(net, x), ["self", "x"], {}, vars(builtins))
    cases.append(("module via _modules/_parameters dicts", guard.check, (net, x)))
    only_state = GuardTree()
    only_state.add_root(GlobalStateMatch())
    cases.append(("global state only", compile_tree(only_state, [], {}, vars(builtins)).check, ()))
    print(f"torch {torch.__version__}, Python {sys.version.split()[0]}")
    for label, check, args in cases:
        print(f"{label:48s} {_ns_per_call(check, args):8.0f} ns/call")


if __name__ == "__main__":
    main()
