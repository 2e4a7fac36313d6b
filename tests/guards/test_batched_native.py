"""Native (C++) tensor checks merged across arguments and module state: the merged form decides exactly as the
per-tensor checks would, and a miss is still explained per argument."""
import builtins

import torch

from jitcore.guards import BatchIdentityMatch, GuardTree, TensorMatch, compile_tree

BUILTINS = vars(builtins)


def _tree(*tensors):
    tree = GuardTree()
    for index, t in enumerate(tensors):
        tree.add((("local", f"t{index}"),), TensorMatch(t), f"t{index}")
    return tree


def test_tensor_checks_on_arguments_merge_into_one_native_call():
    xs = [torch.ones(2, 3), torch.zeros(4), torch.ones(1, dtype=torch.float64)]
    guard = compile_tree(_tree(*xs), ["t0", "t1", "t2"], {}, BUILTINS, examples=tuple(xs))
    assert guard.source.count("tensors_check") == 1 and "tensor_check0" not in guard.source
    assert guard.check(*xs, None) is True


def test_merged_check_rejects_any_one_changed_argument_and_explains_it():
    xs = [torch.ones(2, 3), torch.zeros(4), torch.ones(1, dtype=torch.float64)]
    guard = compile_tree(_tree(*xs), ["t0", "t1", "t2"], {}, BUILTINS, examples=tuple(xs))
    changed = [
        (torch.ones(2, 4), xs[1], xs[2]),
        (xs[0], torch.zeros(4, dtype=torch.float16), xs[2]),
        (xs[0], xs[1], torch.ones(1, dtype=torch.float64, requires_grad=True)),
        (xs[0], torch.zeros(8)[::2], xs[2]),
    ]
    for args in changed:
        assert guard.check(*args, None) is False
        assert guard.failures(args, None), args
    assert "t1" in guard.failures(changed[1], None)[0]


def test_without_examples_each_tensor_keeps_its_own_check():
    xs = [torch.ones(2), torch.ones(3)]
    guard = compile_tree(_tree(*xs), ["t0", "t1"], {}, BUILTINS)
    assert "tensors_check" not in guard.source
    assert guard.check(*xs, None) is True and guard.check(xs[1], xs[0], None) is False


def _batch(module):
    params = list(module._parameters.items())
    return BatchIdentityMatch(
        containers=[module._parameters] * len(params), keys=[k for k, _ in params], objects=[p for _, p in params],
        n_grads=len(params), empty=[module._forward_hooks], names=[f"m.{k}" for k, _ in params],
        empty_names=["m._forward_hooks"], owners=[module])


def test_module_state_batch_sees_a_data_swap_and_says_so():
    layer = torch.nn.Linear(3, 3)
    batch = _batch(layer)
    assert batch.holds()
    with torch.no_grad():
        layer.weight.data = torch.randn(5, 3)
    assert not batch.holds()
    assert "m.weight.shape changed" in batch.explain()


def test_module_state_batch_fails_for_good_once_its_module_dies():
    import gc
    layer = torch.nn.Linear(3, 3)
    batch = _batch(layer)
    del layer
    gc.collect()
    assert batch.holds() is False


def test_equal_tensor_checks_on_other_values_still_run_after_merging():
    """Checks compare by value: merging the arguments' checks must not swallow an equal check on a list item
    (found by the fuzzer: a stale shape of `ys[0]` was accepted)."""
    a, b = torch.ones(2, 3), torch.ones(2, 3)
    items = [torch.ones(2, 3)]
    tree = _tree(a, b)
    tree.add((("local", "items"), ("item", 0)), TensorMatch(items[0]), "items[0]")
    guard = compile_tree(tree, ["t0", "t1", "items"], {}, BUILTINS, examples=(a, b, items))
    assert guard.check(a, b, items, None) is True
    assert guard.check(a, b, [torch.ones(1, 3)], None) is False
