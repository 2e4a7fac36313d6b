"""The `inductor` backend: torch._inductor.compile_fx, which runs AOTAutograd and generates C++ or Triton kernels.

Takes torch.compile's `mode` and `options` and checks both when `lookup` binds them. Imports torch only inside
functions (torch._inductor costs seconds to import); never jitcore or guards.
Entry points: `inductor`, `config_patches`, `MODES`.
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .aot import sequence_output
from .registry import AOT_AUTOGRAD, BackendError, _builtin

if TYPE_CHECKING:
    import torch.fx

__all__ = ["MODES", "config_patches", "inductor"]

#: torch.compile's modes, as the torch._inductor.config settings each one turns on: those that
#: torch._inductor.list_mode_options gives (a test compares them); "default" changes nothing. On a machine
#: without CUDA, "triton.cudagraphs" has no effect, so "reduce-overhead" compiles like "default".
MODES: Mapping[str, Mapping[str, Any]] = {
    "default": {},
    "reduce-overhead": {"triton.cudagraphs": True},
    "max-autotune": {"max_autotune": True, "coordinate_descent_tuning": True, "triton.cudagraphs": True},
    "max-autotune-no-cudagraphs": {"max_autotune": True, "coordinate_descent_tuning": True},
}


def config_patches(mode: str = "default", options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The torch._inductor.config patches for `mode` and `options`; options win over the mode's settings.

    Option names may be spelled with '-' for '_' (as torch.compile allows). Raises BackendError for an unknown
    mode, a non-mapping `options`, a name torch._inductor.config lacks, or a value of the wrong type.
    """
    if mode not in MODES:
        raise BackendError(f"inductor: unknown mode {mode!r}; valid modes: {', '.join(MODES)}")
    patches = dict(MODES[mode])
    if options is None:
        return patches
    if not isinstance(options, Mapping):
        raise BackendError(
            f"inductor: options must be a dict of torch._inductor.config settings, got {type(options).__name__}"
        )
    from torch._inductor import config

    known = config.get_config_copy()
    for key, value in options.items():
        name = key.replace("-", "_") if isinstance(key, str) else key
        if name not in known:
            raise BackendError(_unknown_option_message(key, known))
        _check_option_type(config, name, value)
        patches[name] = value
    return patches


def _unknown_option_message(key: object, known: Mapping[str, Any]) -> str:
    close = difflib.get_close_matches(str(key), list(known), n=3) if isinstance(key, str) else []
    suggestion = f"did you mean {', '.join(map(repr, close))}? " if close else ""
    return (
        f"inductor: unknown option {key!r}; {suggestion}"
        "options must be settings of torch._inductor.config (torch._inductor.list_options() lists them)"
    )


def _check_option_type(config: Any, name: str, value: Any) -> None:
    """Reject a value whose type differs from the setting's declared type (as torch.compile does).

    Generic declared types (`Optional[int]`, `list[str]`) cannot be checked with isinstance and are let through;
    an int is accepted for a float setting.
    """
    declared = config.get_type(name)
    if typing.get_origin(declared) is not None or not isinstance(declared, type):
        return
    if declared is float and isinstance(value, int) and not isinstance(value, bool):
        return
    if not isinstance(value, declared):
        raise BackendError(
            f"inductor: option {name!r} must be a {declared.__name__}, got {type(value).__name__} ({value!r})"
        )


def _check_options(mode: str = "default", options: Mapping[str, Any] | None = None) -> None:
    """`lookup`'s check: the same validation the backend runs, so that a bad mode fails before any compile."""
    config_patches(mode, options)


@_builtin("inductor", tags=(AOT_AUTOGRAD,), check_options=_check_options)
def inductor(
    gm: torch.fx.GraphModule,
    example_inputs: Sequence[Any],
    *,
    mode: str = "default",
    options: Mapping[str, Any] | None = None,
) -> Callable[..., Any]:
    """Compile `gm` with TorchInductor under `mode` and `options` (torch.compile's meanings).

    compile_fx may rewrite `gm` in place (its docstring says it takes ownership); keep a copy to run it later.
    Training works as with aot_eager: compile_fx runs AOTAutograd and compiles the backward graph too.
    """
    patches = config_patches(mode, options)
    from torch._inductor.compile_fx import compile_fx

    # No context is set up here. Under torch.compile, Dynamo enters a TracingContext holding its FakeTensorMode
    # before it calls a backend; compile_fx enters one itself when none is active, built on the fake mode it
    # finds on `example_inputs` (torch._guards.detect_fake_mode), or on a new one when the inputs are real.
    # Without Dynamo's graph metadata ("dynamo_compile_id" in gm.meta) AOTAutograd marks no input as static, so
    # under the cudagraph modes every input, parameters included, is copied into the graph's buffers each call.
    graph_module, restore = sequence_output(gm)
    return restore(compile_fx(graph_module, list(example_inputs), config_patches=patches))
