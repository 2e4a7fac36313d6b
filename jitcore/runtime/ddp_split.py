"""Splitting a graph captured under DistributedDataParallel at DDP's gradient buckets.

DDP all-reduces a bucket of gradients as soon as every gradient in it is ready, so that communication overlaps the
rest of backward. A graph compiled by an AOTAutograd backend is one autograd node: every gradient it produces is
ready only when its whole backward has run, and DDP's all-reduces would all start at the end. So a graph captured
while a DDP forward runs (`DistributedDataParallel._get_active_ddp_module()`) is cut into consecutive subgraphs,
one per bucket, each compiled on its own (Note [DDP buckets]).

Entry point: `ddp_split(gm, example_inputs, input_sources, ddp, backend)` -> `Split`, whose `compiled` runs like
`backend(gm, example_inputs)` would, and whose `buckets`/`reason` say what was done.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

import torch
import torch.distributed as dist
import torch.fx

from jitcore.runtime.graph_meta import InputSource, is_module_state

__all__ = ["Split", "ddp_split", "bucket_limits", "active_ddp"]

# Note [DDP buckets]
# DDP's reducer first puts every parameter into one bucket (unless find_unused_parameters is set), then after the
# first backward rebuilds its buckets in the order gradients became ready, with `_compute_bucket_assignment_by_size`
# and the size limits [first bucket cap, bucket cap] (or the user's bucket_cap_mb_list). Gradients become ready
# roughly in the reverse of the order the forward first uses the parameters. The split takes the graph's
# parameter inputs in that reverse order and asks torch's own assignment for the buckets under DDP's limits; each
# bucket's graph starts at the first use of its earliest-used parameter. The last bucket in the forward order is
# the first one in backward: its backward graph runs first and its all-reduce starts while the earlier buckets'
# backward graphs still run. Parameters are recognised as graph inputs read from a module's `_parameters` that
# require grad (what DDP reduces), and weighed by their byte size, as DDP weighs them.


def active_ddp():
    """The DistributedDataParallel module whose forward is running now (its `_inside_ddp_forward`), or None."""
    ddp_class = torch.nn.parallel.DistributedDataParallel
    getter = getattr(ddp_class, "_get_active_ddp_module", None)
    return getter() if getter is not None else None


def bucket_limits(ddp) -> list:
    """DDP's bucket size limits in bytes after its first iteration: [first bucket cap, bucket cap, ...]."""
    config = getattr(ddp, "_bucket_config", None)
    if config is not None:
        if config.per_bucket_bytes_caps:
            return list(config.per_bucket_bytes_caps)
        return [config.first_bucket_bytes_cap, config.bucket_bytes_cap]
    cap = ddp.bucket_bytes_cap
    first = dist._DEFAULT_FIRST_BUCKET_BYTES if getattr(ddp, "bucket_bytes_cap_default", False) else cap
    return [min(first, cap), cap]


@dataclass
class Split:
    """The outcome of splitting one graph: what to run, the bucket sizes (bytes, forward order) and why."""

    compiled: object
    buckets: list = field(default_factory=list)
    parts: list = field(default_factory=list)
    reason: str = ""


def ddp_split(gm, example_inputs, input_sources, ddp, backend) -> Split:
    """Compile gm for DDP: one subgraph per gradient bucket, each handed to `backend` with its own example inputs.
    A graph whose parameters fit one bucket is compiled whole."""
    limits = bucket_limits(ddp)
    placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
    params = _parameter_inputs(placeholders, input_sources, example_inputs)
    caps = _describe_limits(limits)
    if not params:
        return Split(backend(gm, example_inputs), reason="no parameter that needs a gradient is a graph input")
    order = {node: i for i, node in enumerate(gm.graph.nodes)}
    first_use = {node: min(order[user] for user in node.users) for node, _ in params if node.users}
    used = sorted((node for node, _ in params if node in first_use), key=lambda n: first_use[n], reverse=True)
    sizes = {node: nbytes for node, nbytes in params}
    if not used:
        return Split(backend(gm, example_inputs), reason="no parameter input is used by the graph")
    # torch's own assignment, over stand-ins with each parameter's byte size (its C++ side reads real metadata)
    stand_ins = [torch.empty(sizes[node], dtype=torch.uint8, device="meta") for node in used]
    assignment, _ = dist._compute_bucket_assignment_by_size(stand_ins, limits)
    starts = sorted({min(first_use[used[i]] for i in bucket) for bucket in assignment})
    bucket_bytes = []
    for bucket in sorted(assignment, key=lambda b: min(first_use[used[i]] for i in b)):
        bucket_bytes.append(sum(sizes[used[i]] for i in bucket))
    if len(starts) < 2:
        return Split(backend(gm, example_inputs), buckets=bucket_bytes,
                     reason=f"the parameters ({_mb(sum(bucket_bytes))}) fit one DDP bucket ({caps})")
    parts = _partition(gm, starts[1:])
    compiled, graphs = _compile_parts(gm, parts, example_inputs, backend, len(starts))
    reason = (f"{len(used)} parameters ({_mb(sum(bucket_bytes))}) in DDP's buckets ({caps}): one backward graph "
              f"per bucket lets each bucket's all-reduce start while the earlier buckets' backward still runs")
    return Split(compiled, bucket_bytes, graphs, reason)


def _parameter_inputs(placeholders, input_sources, example_inputs) -> list:
    """(placeholder, byte size) of the graph inputs DDP reduces: module parameters that require grad."""
    found = []
    for node, source, example in zip(placeholders, input_sources, example_inputs):
        if isinstance(example, torch.Tensor) and example.requires_grad and is_module_state(source) \
                and source.dict_name == "_parameters":
            found.append((node, example.numel() * example.element_size()))
    return found


def _partition(gm, boundaries) -> list:
    """The graph's computing nodes cut before each boundary position: a list of node lists, in order."""
    parts, current = [[]], 0
    for position, node in enumerate(gm.graph.nodes):
        if node.op in ("placeholder", "output", "get_attr"):
            continue
        while current < len(boundaries) and position >= boundaries[current]:
            parts.append([])
            current += 1
        parts[-1].append(node)
    return [part for part in parts if part]


def _compile_parts(gm, parts, example_inputs, backend, buckets):
    """Each part as a GraphModule of its own compiled by `backend`, and one outer graph that calls them in order."""
    placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
    examples = dict(zip(placeholders, example_inputs))
    marked = "dynamo_compile_id" in gm.meta
    output = next(node for node in reversed(gm.graph.nodes) if node.op == "output")
    home = {node: index for index, part in enumerate(parts) for node in part}
    # a node's value leaves its part when a later part or the graph's output reads it
    leaving = [[] for _ in parts]
    for index, part in enumerate(parts):
        for node in part:
            if any(user is output or home.get(user, index) != index for user in node.users):
                leaving[index].append(node)
    outer = torch.fx.Graph()
    outer_env = {}
    for node in placeholders:
        outer_env[node] = outer.placeholder(node.name)
        outer_env[node].meta = dict(node.meta)
    graphs = []
    for index, part in enumerate(parts):
        sub = torch.fx.Graph()
        env, inputs = {}, []

        def load(arg, sub=sub, env=env, inputs=inputs):
            if arg not in env:
                if arg.op == "get_attr":
                    env[arg] = sub.node_copy(arg)
                else:
                    placeholder = sub.placeholder(arg.name)
                    placeholder.meta = {key: value for key, value in arg.meta.items() if key != "tensor_dict"} \
                        if arg.op != "placeholder" else dict(arg.meta)
                    if marked:
                        # AOTAutograd reads a source on every placeholder of a marked graph; a value an earlier
                        # bucket's graph computed is an activation, never a static input
                        placeholder._dynamo_source = getattr(arg, "_dynamo_source", None) or InputSource(arg.name)
                    env[arg] = placeholder
                    inputs.append(arg)
            return env[arg]

        for node in part:
            for arg in node.all_input_nodes:
                if arg not in env:
                    load(arg)
            env[node] = sub.node_copy(node, lambda arg: env[arg])
        sub.output(tuple(env[node] for node in leaving[index]))
        part_gm = torch.fx.GraphModule(gm, sub, class_name=f"DDPBucket{index}")
        part_gm.meta.update(gm.meta)
        part_gm.meta["jitcore_split"] = (gm, index, len(parts), buckets)
        if hasattr(gm, "_param_name_to_source"):
            part_gm._param_name_to_source = {}
        part_examples = [examples[arg] if arg in examples else arg.meta.get("example_value") for arg in inputs]
        compiled = backend(part_gm, part_examples)
        graphs.append(part_gm)
        call = outer.call_function(_Part(compiled, index), tuple(outer_env[arg] for arg in inputs))
        for position, node in enumerate(leaving[index]):
            outer_env[node] = outer.call_function(operator.getitem, (call, position))
            outer_env[node].meta = dict(node.meta)
    # what the output reads and no part computes (a get_attr constant) is read by the outer graph itself
    outer.output(torch.fx.node.map_arg(output.args[0], lambda arg: outer_env[arg] if arg in outer_env
                                       else outer.node_copy(arg)))
    runner = torch.fx.GraphModule(gm, outer, class_name="DDPSplitGraph")
    return runner.forward, graphs


class _Part:
    """One bucket's compiled graph as the outer graph calls it (a named callable, for readable generated code)."""

    __slots__ = ("compiled", "__name__")

    def __init__(self, compiled, index: int):
        self.compiled = compiled
        self.__name__ = f"bucket_{index}"

    def __call__(self, *inputs):
        return self.compiled(*inputs)


def _mb(nbytes: int) -> str:
    if nbytes >= 2**20:
        return f"{nbytes / 2**20:.1f} MiB"
    return f"{nbytes / 2**10:.1f} KiB"


def _describe_limits(limits: list) -> str:
    if len(limits) == 2:
        return f"first bucket cap {_mb(limits[0])}, bucket cap {_mb(limits[1])}"
    return "bucket caps " + ", ".join(_mb(limit) for limit in limits)
