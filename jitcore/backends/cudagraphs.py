"""The `cudagraphs` backend: AOTAutograd, then each forward and backward graph captured once as a CUDA graph.

Every later call copies its inputs into the graph's static buffers, replays, and returns clones of the outputs.
Needs CUDA: without it, lookup("cudagraphs") works and compiling raises BackendError. Imports torch only inside
functions; never jitcore or guards. Entry point: `cudagraphs`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .aot import BoxedCallable, compile_with_aot
from .registry import AOT_AUTOGRAD, BackendError, _builtin

if TYPE_CHECKING:
    import torch
    import torch.fx

__all__ = ["cudagraphs"]

#: Eager runs before capture, on a side stream: they do the one-time work that must not be captured
#: (cuBLAS handles and workspaces, lazy kernel loading, allocator growth), as torch.cuda.graph's docs advise.
_WARMUP_RUNS = 2


@_builtin("cudagraphs", tags=(AOT_AUTOGRAD,))
def cudagraphs(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
    """Compile `gm` so that its forward (and, in training, backward) graphs replay as CUDA graphs.

    The caller guards input shapes, dtypes and devices, so one capture per graph is enough: nothing is
    re-recorded. A graph that computes any tensor off CUDA (a CPU op) runs uncaptured, since a CUDA graph would
    replay only its CUDA work.
    """
    import torch

    if not torch.cuda.is_available():
        raise BackendError(
            "cudagraphs needs CUDA, and torch.cuda.is_available() is False on this machine; "
            "use the 'inductor' or 'aot_eager' backend instead"
        )
    off_cuda = [
        f"input {index} on {value.device}"
        for index, value in enumerate(example_inputs)
        if isinstance(value, torch.Tensor) and value.device.type != "cuda"
    ]
    if off_cuda:
        raise BackendError(
            f"cudagraphs needs every tensor input on a CUDA device, got {', '.join(off_cuda)}; "
            "move them with .cuda(), or use the 'inductor' or 'aot_eager' backend"
        )
    return compile_with_aot(gm, example_inputs, _capture_on_first_call)


def _capture_on_first_call(graph: torch.fx.GraphModule, example_inputs: list[Any]) -> BoxedCallable:
    """AOTAutograd's compiler: a replayer that captures at its first call, when real inputs exist to capture with."""
    from torch._functorch.aot_autograd import make_boxed_func

    if _computes_off_cuda(graph):
        return make_boxed_func(graph.forward)
    return _GraphReplay(graph)


def _computes_off_cuda(graph: torch.fx.GraphModule) -> bool:
    """Whether any node of `graph` holds a tensor that is not on a CUDA device (per its FakeTensor in meta)."""
    import torch

    return any(
        isinstance(node.meta.get("val"), torch.Tensor) and node.meta["val"].device.type != "cuda"
        for node in graph.graph.nodes
    )


class _GraphReplay:
    """One AOTAutograd graph run as a CUDA graph, called with the boxed convention (see aot.py, Note [Boxed]).

    Vocabulary: the static inputs and outputs are the tensors the capture read and wrote; replay reads and
    writes the same memory again. Invariant: after the first call `_cuda_graph` is set and never changes, and
    non-tensor inputs must equal the ones captured (static shapes make them constants).
    """

    _boxed_call = True

    def __init__(self, graph: torch.fx.GraphModule) -> None:
        self._graph = graph
        self._cuda_graph: torch.cuda.CUDAGraph | None = None
        self._static_inputs: list[Any] = []
        self._static_outputs: list[Any] = []

    def __call__(self, inputs: list[Any]) -> list[Any]:
        if self._cuda_graph is None:
            self._capture(inputs)
        else:
            self._copy_in(inputs)
        self._cuda_graph.replay()
        return self._fresh_outputs()

    def _capture(self, inputs: list[Any]) -> None:
        import torch

        tensor_devices = (value.device for value in inputs if isinstance(value, torch.Tensor))
        device = next(tensor_devices, torch.device("cuda", torch.cuda.current_device()))
        # Clone, not alias: the caller's tensors die after this call, the static buffers must outlive it.
        self._static_inputs = [_static_copy(value) for value in inputs]
        with torch.cuda.device(device):
            side_stream = torch.cuda.Stream()
            side_stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side_stream):
                for _ in range(_WARMUP_RUNS):
                    self._graph(*self._static_inputs)
            torch.cuda.current_stream().wait_stream(side_stream)
            cuda_graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(cuda_graph):
                outputs = self._graph(*self._static_inputs)
        self._static_outputs = list(outputs)
        self._cuda_graph = cuda_graph

    def _copy_in(self, inputs: list[Any]) -> None:
        import torch

        for index, (static, value) in enumerate(zip(self._static_inputs, inputs, strict=True)):
            if isinstance(static, torch.Tensor):
                static.copy_(value)
            elif static != value:
                raise BackendError(
                    f"cudagraphs: input {index} was {static!r} at capture and is {value!r} now; a captured graph "
                    "bakes in non-tensor inputs, so the caller must guard them (or use another backend)"
                )

    def _fresh_outputs(self) -> list[Any]:
        """Clones of the static outputs, which the next replay overwrites; one output returned twice stays one."""
        import torch

        clones: dict[int, Any] = {}
        fresh = []
        for value in self._static_outputs:
            if isinstance(value, torch.Tensor):
                if id(value) not in clones:
                    clones[id(value)] = value.clone()
                value = clones[id(value)]
            fresh.append(value)
        return fresh


def _static_copy(value: Any) -> Any:
    """A buffer the capture can own: a detached clone of a tensor (same strides when dense), else the value."""
    import torch

    return value.detach().clone() if isinstance(value, torch.Tensor) else value
