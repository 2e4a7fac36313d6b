"""Container modules changed after the first call: the captured code iterated, measured or indexed a ModuleList,
Sequential, ModuleDict or ParameterList, so which items it holds, in which order, is guarded and a change
recompiles. Each case compares eager, `jit.compile` and `register` + `enabled()` call by call, results and the
log each forward writes."""
import torch

import jitcore as jit
from tests.support import CountingBackend, assert_same, both_doors, randn


class Tagged(torch.nn.Module):
    """A layer with a tag, which the stack logs when it runs the layer."""

    def __init__(self, tag, log=None):
        super().__init__()
        self.tag = tag
        torch.manual_seed(tag)
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        return torch.tanh(self.lin(x))


class Stack(torch.nn.Module):
    def __init__(self, log, n=2):
        super().__init__()
        self.log = log
        self.layers = torch.nn.ModuleList([Tagged(i, log) for i in range(n)])
        self.named = torch.nn.ModuleDict({f"k{i}": Tagged(10 + i, log) for i in range(n)})
        self.gains = torch.nn.ParameterList([torch.nn.Parameter(torch.full((3,), 1.0 + i)) for i in range(n)])

    def forward(self, x):
        for layer in self.layers:
            self.log.append(layer.tag)
            x = layer(x)
        for key in self.named:
            self.log.append(key)
            x = self.named[key](x) * len(key)
        for gain in self.gains:
            x = x * gain
        return x + len(self.layers), self.layers[-1](x)


def _run(changes, graphs):
    """Run Stack eagerly, compiled and registered; apply each change to the model between rounds of calls."""
    log = []
    model = Stack(log)
    backend = CountingBackend()
    compiled = jit.compile(model, backend=backend)
    jit.register(model)
    try:
        for change in [None, *changes]:
            if change is not None:
                change(model, log)
            for seed in range(2):
                x = randn(2, 3, seed=seed)
                del log[:]
                expected = model(x)
                eager_log = list(log)
                del log[:]
                assert_same(expected, compiled(x))
                assert log == eager_log
                del log[:]
                with jit.enabled(backend="eager"):
                    assert_same(expected, model(x))
                assert log == eager_log
    finally:
        jit.unregister(model)
    assert backend.graph_count == graphs


def test_layer_appended_to_a_module_list_runs():
    _run([lambda m, log: m.layers.append(Tagged(7, log))], graphs=2)


def test_layer_removed_from_a_module_list_stops_running():
    def remove(m, log):
        del m.layers[0]
    _run([remove], graphs=2)


def test_module_list_shrunk_back_by_del_runs_its_remaining_layers():
    """`del layers[i]` renumbers a ModuleList by giving it a new `_modules` dict; the old dict, which an entry
    compiled for an earlier length checked, keeps that length's keys. Grown to three layers, then deleted back to
    one: no entry compiled for one or two layers may run."""
    def grow(m, log):
        m.layers.append(Tagged(7, log))

    def shrink(m, log):
        del m.layers[-1]
        del m.layers[-1]
    _run([grow, shrink, grow], graphs=4)


def _run_sequential(seq, changes):
    """run_all(x, seq) through both doors against eager, after each change to the Sequential passed in."""
    def run_all(x, seq):
        return seq(x) + len(seq)

    with both_doors(run_all) as doors:
        for change in (None, *changes):
            if change is not None:
                change()
            x = randn(4, seed=len(seq))
            expected = run_all(x, seq)
            for door in doors:
                assert_same(expected, door(x, seq))


def test_sequential_shrunk_by_pop_is_seen():
    seq = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Tanh(), torch.nn.Sigmoid())
    _run_sequential(seq, [lambda: seq.pop(2), lambda: seq.append(torch.nn.Softsign()), lambda: seq.pop(1)])


def test_recompile_reason_names_a_renumbered_container():
    model = Stack([], n=3)
    compiled = jit.compile(model, backend="eager")
    compiled(randn(2, 3))
    del model.layers[0]
    entry = type(compiled).forward._jitcore_cache.entries[0]
    reasons = entry.guard_function.failures((compiled, randn(2, 3)), None)
    assert reasons[0] == ("module state: self.layers._modules was replaced by another dict (a container's items "
                          "renumbered by del, or reassigned)")


def test_module_dict_gains_a_key_and_changes_order():
    def add(m, log):
        m.named["late"] = Tagged(20, log)

    def reorder(m, log):
        m.named["k0"] = m.named.pop("k0")  # the same modules, iterated in another order
    _run([add, reorder], graphs=3)


def test_parameter_list_appended_to():
    _run([lambda m, log: m.gains.append(torch.nn.Parameter(torch.full((3,), -2.0)))], graphs=2)


def test_sequential_extended_inside_a_function_argument():
    seq = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Tanh())
    _run_sequential(seq, [lambda: seq.append(torch.nn.Sigmoid()), lambda: seq.insert(0, torch.nn.Softsign())])


def test_recompile_reason_names_the_container():
    model = Stack([])
    compiled = jit.compile(model, backend="eager")
    compiled(randn(2, 3))
    model.layers.append(Tagged(5, model.log))
    entry = type(compiled).forward._jitcore_cache.entries[0]
    reasons = entry.guard_function.failures((compiled, randn(2, 3)), None)
    assert reasons == ["module state: self.layers._modules keys changed ('0', '1') -> ('0', '1', '2')"]
