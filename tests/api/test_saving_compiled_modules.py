"""A compiled module saves like the module it compiles (Note [Saving a compiled module] in jitcore/api.py): pickle,
torch.save and deepcopy give back a compiled module of the loaded original, with the same compile arguments, whose
results are eager's; its state_dict has the original's keys and round-trips both ways."""
import copy
import io
import pickle

import torch
import torch.nn as nn

import jitcore as jit
from jitcore.api import _CompiledModuleMixin


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def _check_loaded(loaded, original):
    assert isinstance(loaded, _CompiledModuleMixin) and isinstance(loaded, nn.Sequential)
    assert loaded._jitcore_compile_args == {"backend": "eager", "fullgraph": False, "dynamic": None,
                                            "cache_limit": 3, "mode": None, "options": None}
    x = torch.randn(5, 4)
    torch.testing.assert_close(loaded(x), original(x))
    torch.testing.assert_close(loaded(x), original(x))
    assert loaded.forward._jitcore_cache.entries, "the loaded module compiles again on use"
    assert loaded._orig_mod is not original and type(loaded._orig_mod) is nn.Sequential


def test_pickled_compiled_module_loads_as_a_compiled_module_with_eager_results():
    model = _model()
    compiled = jit.compile(model, backend="eager", cache_limit=3)
    compiled(torch.randn(5, 4))
    _check_loaded(pickle.loads(pickle.dumps(compiled)), model)


def test_torch_save_of_a_compiled_module_loads_with_weights_only_false():
    model = _model()
    compiled = jit.compile(model, backend="eager", cache_limit=3)
    buffer = io.BytesIO()
    torch.save(compiled, buffer)
    buffer.seek(0)
    _check_loaded(torch.load(buffer, weights_only=False), model)


def test_deepcopy_of_a_compiled_module_is_a_compiled_copy_with_its_own_parameters():
    model = _model()
    compiled = jit.compile(model, backend="eager", cache_limit=3)
    copied = copy.deepcopy(compiled)
    _check_loaded(copied, model)
    assert copied[0].weight is not model[0].weight


def test_state_dict_of_a_compiled_module_has_the_original_keys_and_round_trips():
    model = _model()
    compiled = jit.compile(model, backend="eager")
    assert list(compiled.state_dict()) == list(model.state_dict())
    fresh = _model()
    with torch.no_grad():
        for p in fresh.parameters():
            p.add_(1.0)
    # compiled -> plain and plain -> compiled both load
    fresh.load_state_dict(compiled.state_dict())
    x = torch.randn(3, 4)
    torch.testing.assert_close(fresh(x), model(x))
    other = jit.compile(_model(), backend="eager")
    with torch.no_grad():
        model[0].weight.add_(0.5)
    other.load_state_dict(model.state_dict())
    torch.testing.assert_close(other(x), model(x))


def test_torch_compile_wrapper_of_a_jit_compiled_module_saves():
    model = _model()
    wrapped = torch.compile(jit.compile(model, backend="eager"), backend="eager")
    buffer = io.BytesIO()
    torch.save(wrapped, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=False)
    x = torch.randn(2, 4)
    torch.testing.assert_close(loaded(x), model(x))
