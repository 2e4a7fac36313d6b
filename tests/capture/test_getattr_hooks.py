"""getattr with a default and hasattr catch an AttributeError raised by a traced attribute hook, however deep.

Hugging Face configs answer attribute reads through a chain of `__getattribute__` overrides that end in
`super().__getattribute__(key)`; `getattr(config, "output_x", False)` must give False, as Python does, not a break.
"""
import torch

import jitcore as jit
from tests.support import check_registered_against_eager


class _Mapped:
    attribute_map = {"hidden": "h"}

    def __init__(self):
        self.h = 3

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)


class _Layered(_Mapped):
    def __getattribute__(self, key):
        spec = super().__getattribute__("__dict__").get("_spec")
        if spec is not None and key in spec:
            raise AttributeError(f"read {key} per layer")
        return super().__getattribute__(key)


CONFIG = _Layered()
LOG = []


class _Logging:
    def __getattr__(self, name):
        LOG.append(name)
        raise AttributeError(name)


def _reads(x):
    flags = ("attentions", "hidden")
    # a try around the reads (transformers' wrappers restore config values in a `finally`) makes the hook's
    # AttributeError a traced exception that unwinds frames, not just a failed lookup
    try:
        found = {f"output_{k}": getattr(CONFIG, f"output_{k}", False) for k in flags}
        return x + CONFIG.hidden + sum(1 for v in found.values() if v) + hasattr(CONFIG, "missing")
    finally:
        LOG.append("restored")


def test_getattr_default_catches_an_error_from_nested_getattribute_overrides():
    x = torch.ones(2)
    CONFIG._spec = ("output_attentions",)
    compiled = jit.compile(_reads, backend="eager", fullgraph=True)
    torch.testing.assert_close(compiled(x), _reads(x))


def test_getattr_default_through_both_doors():
    check_registered_against_eager(_reads, (torch.ones(2),))


def test_a_getattr_hook_that_raises_runs_once_per_read():
    hooked = _Logging()

    def read(x):
        return x + (1 if getattr(hooked, "scale", None) is None else 2)

    LOG.clear()
    read(torch.ones(1))
    eager_log = list(LOG)
    LOG.clear()
    jit.compile(read, backend="eager")(torch.ones(1))
    assert LOG == eager_log == ["scale"]
