"""The `aot_eager` backend, and the AOTAutograd plumbing that `cudagraphs` and `inductor` share.

AOTAutograd traces the forward and backward graphs of a GraphModule and hands each to a compiler; here the
compiler is a no-op, so the graphs run eagerly. Imports torch only inside functions; never jitcore or guards.
Entry points: `aot_eager`, `compile_with_aot`, `sequence_output`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .registry import AOT_AUTOGRAD, _builtin

if TYPE_CHECKING:
    import torch.fx

__all__ = ["aot_eager", "compile_with_aot", "sequence_output"]

#: What a compiler handed to AOTAutograd returns: a callable that takes its inputs as one list (see Note [Boxed]).
BoxedCallable = Callable[[list[Any]], Any]

# Note [Boxed]
# AOTAutograd calls the forward and backward functions that its compilers return with the "boxed" convention:
# one list holding every input (`compiled([a, b])`, not `compiled(a, b)`), so that the callee may clear the list
# and free inputs early. A compiler marks a callable as boxed by setting `_boxed_call = True`, which is what
# torch._functorch.aot_autograd.make_boxed_func does around an ordinary function. The callable that
# aot_module_simplified itself returns is NOT boxed: it takes the graph's inputs positionally, and returns the
# graph's outputs as a list whatever sequence the graph returned (seen with torch 2.11 and 2.14).


def sequence_output(gm: torch.fx.GraphModule) -> tuple[torch.fx.GraphModule, Callable[[Callable[..., Any]], Any]]:
    """`gm`, or a copy of it that returns a tuple, and `restore`, which makes a compiled callable return what gm does.

    AOTAutograd (and inductor through it) accepts only graphs whose output is a tuple or list, and its compiled
    callable returns a list (Note [Boxed]). jitcore's graphs return flat tuples; a graph a user traced may return
    one tensor. `restore(compiled)` rebuilds the exact structure: a tuple, a list, or the single value.
    """
    import torch.fx

    output_node = next(node for node in reversed(gm.graph.nodes) if node.op == "output")
    (result,) = output_node.args
    if isinstance(result, tuple):
        return gm, _returning_tuple
    if isinstance(result, list):
        return gm, _returning_list
    graph = torch.fx.Graph()
    value = graph.graph_copy(gm.graph, {})  # every node but the output; returns what the output returned
    graph.output((value,))
    return torch.fx.GraphModule(gm, graph), _returning_single


def _returning_tuple(compiled: Callable[..., Any]) -> Callable[..., tuple[Any, ...]]:
    def run(*inputs: Any) -> tuple[Any, ...]:
        return tuple(compiled(*inputs))

    return run


def _returning_list(compiled: Callable[..., Any]) -> Callable[..., list[Any]]:
    def run(*inputs: Any) -> list[Any]:
        return list(compiled(*inputs))

    return run


def _returning_single(compiled: Callable[..., Any]) -> Callable[..., Any]:
    def run(*inputs: Any) -> Any:
        return compiled(*inputs)[0]

    return run


def compile_with_aot(
    gm: torch.fx.GraphModule,
    example_inputs: Sequence[Any],
    compiler: Callable[[torch.fx.GraphModule, list[Any]], BoxedCallable],
) -> Callable[..., Any]:
    """Run AOTAutograd over `gm` and compile its forward, backward and inference graphs with `compiler`.

    `compiler(graph, example_inputs)` must return a boxed callable (Note [Boxed]). The result takes gm's inputs
    positionally and returns what `gm(*inputs)` returns; its outputs carry an autograd node whose backward runs
    the compiled backward graph. Example inputs may be FakeTensors of one FakeTensorMode, which AOTAutograd
    finds on them and traces with, or real tensors, which it fakes itself.
    """
    from torch._functorch.aot_autograd import aot_module_simplified

    graph_module, restore = sequence_output(gm)
    compiled = aot_module_simplified(
        graph_module,
        list(example_inputs),
        fw_compiler=compiler,
        bw_compiler=compiler,
        inference_compiler=compiler,
    )
    return restore(compiled)


def _run_eagerly(graph: torch.fx.GraphModule, example_inputs: list[Any]) -> BoxedCallable:
    """The no-op compiler: run AOTAutograd's graph as it is, through its generated `forward`."""
    from torch._functorch.aot_autograd import make_boxed_func

    return make_boxed_func(graph.forward)


@_builtin("aot_eager", tags=("debug", AOT_AUTOGRAD))
def aot_eager(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
    """AOTAutograd with no compiler: tests the forward/backward split and functionalization, not code generation.

    Training works: when an example input requires grad, the outputs' `.backward()` runs the traced backward
    graph, and gives the gradients eager PyTorch gives. Input mutations in gm are applied to the real inputs.
    """
    return compile_with_aot(gm, example_inputs, _run_eagerly)
