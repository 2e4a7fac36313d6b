"""torch.vmap (torch.func.vmap) while tracing: the function is traced once, on per-example tensors, into a graph
of its own, and calling the vmapped function is one node of the frame's graph that runs torch.vmap over that graph.

Note [vmap as a nested graph]: `torch.vmap(f, in_dims, out_dims)` made in traced code is a `VmapValue`; calling it
traces `f` in a nested graph (`GraphBuilder.nested_graph`) whose inputs are the batched arguments with their vmapped
dim taken away (`fake.select(dim, 0)`: the shape and strides functorch shows `f`) and whose output is the flat tuple
of `f`'s tensors. A tensor `f` reaches from outside (a closure, an argument with in_dim None, a parameter, a graph
constant, the graph of an inner vmap) is a node of another graph: it becomes an input of the body with in_dim None
(`_lift`). The frame's graph gets one call_function node, `run_vmapped(body, in_dims, out_dims, randomness,
chunk_size, *args)`, whose fake result is that very call run on fakes; eager, make_fx and AOTAutograd run (and
differentiate) torch.vmap themselves, and a vmap inside `f` nests the same way. The body must be pure tensor work:
where `f` breaks the graph, raises, mutates an object or a tensor, switches state for good, or computes a size from
outer values (a node an outer value would keep), the call breaks at the vmap call (kind `vmap`) and runs natively,
as eager. randomness other than "error" and keyword arguments neither tensors nor constants break too.
A function torch.vmap made before the capture (a module attribute, functorch.vmap's result) is traced up to torch's
`vmap_impl`, whose call rule does the same.
Imports capture's breaks and values. Entry points: the call rules of torch.vmap and vmap_impl; `run_vmapped` (the
graph target).
"""
from __future__ import annotations

import inspect
import types

import torch
import torch.fx
from torch._functorch.vmap import vmap_impl

from jitcore.capture.breaks import GraphBreak, TracedException
from jitcore.capture.values.base import Value, NOT_CONSTANT
from jitcore.capture.values.call_rules import CallRule, Meaning, KNOWN_CALLABLE, register_callable
from jitcore.capture.values.constant import const
from jitcore.capture.values.sequence import TupleValue, ListValue
from jitcore.capture.values.tensor import TensorValue, wrap_fake_result

__all__ = ["VmapValue", "run_vmapped"]

_SIGNATURE = inspect.signature(torch.vmap)
#: what a size node computes: an outer value makes such a node on first use and keeps it (`_lift`)
_SYMBOLIC = (torch.SymInt, torch.SymFloat, torch.SymBool)


def run_vmapped(body, in_dims, out_dims, randomness, chunk_size, *args):
    """The graph target: torch.vmap over the traced body, on the flat arguments (Note [vmap as a nested graph])."""
    return torch.vmap(body, in_dims=in_dims, out_dims=out_dims, randomness=randomness, chunk_size=chunk_size)(*args)


class VmapValue(Value):
    """The function torch.vmap returned inside the capture: its function and options as values."""

    __slots__ = ("fn", "options")

    def __init__(self, fn, options: dict):
        super().__init__(None)
        self.fn = fn
        #: in_dims, out_dims, randomness, chunk_size: values, as torch.vmap was given them (defaults as constants)
        self.options = options

    def python_type(self):
        return types.FunctionType

    def children(self):
        return [self.fn, *self.options.values()]

    def call(self, state, args, kwargs):
        options = {name: value.constant() for name, value in self.options.items()}
        if NOT_CONSTANT in options.values():
            raise GraphBreak("vmap", "torch.vmap's in_dims, out_dims, randomness or chunk_size is not a constant")
        if options["randomness"] != "error":
            raise GraphBreak("vmap", f"torch.vmap with randomness={options['randomness']!r}")
        if any(value.constant() is NOT_CONSTANT and not value.is_tensor() for value in kwargs.values()):
            raise GraphBreak("vmap", "a keyword argument of the vmapped function that is not a tensor or a constant")
        try:
            return _traced_call(state, self.fn, args, kwargs, options)
        except (GraphBreak, TracedException) as exc:
            if isinstance(exc, GraphBreak) and exc.kind == "vmap":
                raise
            raise GraphBreak("vmap", f"the vmapped function cannot be one graph: {exc}") from None

    def reconstruct(self, codegen):
        vmap = codegen.constant_object(torch.vmap, "vmap")
        options = "".join(f", {name}={codegen.load(value)}" for name, value in self.options.items())
        return f"{vmap}({codegen.load(self.fn)}{options})"


def _vmap(state, fn, args, kwargs):
    try:
        bound = _SIGNATURE.bind(*args, **kwargs)
    except TypeError:
        return NotImplemented  # torch.vmap's own code raises the error
    given = bound.arguments
    options = {name: given[name] if name in given else const(parameter.default)
               for name, parameter in _SIGNATURE.parameters.items() if name != "func"}
    return VmapValue(given["func"], options)


def _vmap_impl(state, fn, args, kwargs):
    # the call inside the function torch.vmap returned before the capture (`self.f = torch.vmap(g)` in __init__,
    # functorch.vmap's result), whose Python is traced up to here
    if len(args) < 5:
        return NotImplemented
    names = ("in_dims", "out_dims", "randomness", "chunk_size")
    return VmapValue(args[0], dict(zip(names, args[1:5]))).call(state, list(args[5:]), kwargs)


register_callable(torch.vmap, KNOWN_CALLABLE, CallRule("torch.vmap", Meaning.LOOKASIDE, _vmap))
register_callable(vmap_impl, KNOWN_CALLABLE, CallRule("torch.vmap's implementation", Meaning.LOOKASIDE, _vmap_impl))


def _traced_call(state, fn, args, kwargs, options):
    """Trace `fn` into a body and put one run_vmapped node in the current graph; its result rebuilt as `fn`'s."""
    in_dims = options["in_dims"]
    if type(in_dims) is int:
        in_dims = (in_dims,) * len(args)
    if type(in_dims) is not tuple or len(in_dims) != len(args):
        # torch.vmap raises: in_dims is an int or a tuple with one entry per argument
        raise GraphBreak("vmap", f"in_dims {in_dims!r} for {len(args)} arguments")
    graph = state.graph
    batched = []  # (outer value, dim, body placeholder) of each argument tensor vmap batches
    with graph.nested_graph() as body:
        inner = [_per_example(state, body, arg, dim, batched) for arg, dim in zip(args, in_dims)]
        if state.ctx.function_modes:
            # vmap's check of the batch sizes asks each batched tensor's size(dim), which a mode sees
            for value, dim, _ in batched:
                _asked_through_modes(state, value, "size", dim, value.fake.size(dim))
        _check_batch_sizes(batched)
        # what a mode did on vmap's own questions above is eager's too: only the function must be pure
        effects = (state.ctx.side_effects.writes, graph.write_count)
        cleanups = state.ctx.progress()[4]
        result = fn.call(state, inner, kwargs)
        if (state.ctx.side_effects.writes, graph.write_count) != effects or state.ctx.progress()[4] != cleanups:
            raise GraphBreak("vmap", "the vmapped function mutates an object or a tensor, or leaves a state switched")
        leaves, rebuild = _flatten_result(result)
        out_dims = _flat_out_dims(options["out_dims"], result)
        outputs = [leaf.node for leaf in leaves]
        lifted = _lift(body, outputs, {node for _, _, node in batched})
        body.output(tuple(outputs))
        body.lint()
    module = torch.fx.GraphModule(torch.nn.Module(), body)
    nodes = [value.node for value, _, _ in batched] + list(lifted)
    fakes = [value.fake for value, _, _ in batched] + [node.meta["example_value"] for node in lifted]
    flat_in_dims = tuple(dim for _, dim, _ in batched) + (None,) * len(lifted)
    head = (module, flat_in_dims, tuple(out_dims), options["randomness"], options["chunk_size"])
    fake = graph.run_fake(run_vmapped, [*head, *fakes], {})
    node = graph.create_node("call_function", run_vmapped, (*head, *nodes), {}, fake)
    return rebuild(wrap_fake_result(state, node, fake, {}).sequence_items())


def _per_example(state, body, value, dim, batched):
    """What `fn` sees for one argument: a batched tensor is a body input without its vmapped dim; a container is
    rebuilt over its items; anything with in_dim None is passed as it is."""
    if value.is_tensor() and dim is not None:
        if type(dim) is not int or not -value.fake.dim() <= dim < value.fake.dim():
            raise GraphBreak("vmap", f"in_dim {dim!r} for a tensor of {value.fake.dim()} dims")
        if state.ctx.function_modes:
            # vmap checks the in_dim against dim() twice, and a negative one asks a third time to wrap it
            for _ in range(3 if dim < 0 else 2):
                _asked_through_modes(state, value, "dim", None, value.fake.dim())
        with state.graph.fake_mode:
            fake = _example(value.fake, dim)
        node = body.placeholder(f"batched_{len(batched)}")
        node.meta["example_value"] = node.meta["val"] = fake
        batched.append((value, dim % value.fake.dim(), node))
        return TensorValue(node, fake)
    items = value.sequence_items()
    if items is not None and value.python_type() in (tuple, list) and dim is not None:
        dims = _per_item(dim, value.python_type(), len(items), "in_dims", "an argument")
        inner = [_per_example(state, body, item, d, batched) for item, d in zip(items, dims)]
        return TupleValue(inner) if value.python_type() is tuple else ListValue(inner)
    if dim is not None:
        raise GraphBreak("vmap", f"in_dim {dim!r} for an argument of type {value.python_type().__name__}")
    return value


def _example(fake, dim: int):
    """One example of a batched tensor, as functorch shows it to the function: its sizes and strides but `dim`'s
    (an empty batch, as the recursion of torch's generic associative scan reaches, has no example to select)."""
    if fake.size(dim) != 0:
        return fake.select(dim, 0)
    keep = [d for d in range(fake.dim()) if d != dim % fake.dim()]
    example = torch.empty_strided([fake.size(d) for d in keep], [fake.stride(d) for d in keep], dtype=fake.dtype,
                                  device=fake.device)
    return example.requires_grad_(fake.requires_grad)


def _asked_through_modes(state, value, method: str, arg, expected) -> None:
    """Note [vmap under a TorchFunctionMode]: eager's vmap asks its batched inputs' dim() and size(dim) before
    calling the function, and an active mode sees those calls (a mode that counts calls counts them). Under a
    traced mode capture makes the same calls through it, in the same order; an answer the mode changed breaks,
    as vmap would then do something else."""
    answer = value.call_method(state, method, [] if arg is None else [const(arg)], {})
    got = answer.constant()
    if got is NOT_CONSTANT and answer.is_symbolic_number() and isinstance(expected, torch.SymInt):
        return  # a dynamic size handed back as it was read
    if got is NOT_CONSTANT or got != expected:
        raise GraphBreak("vmap", f"a TorchFunctionMode changed what Tensor.{method}() answers to torch.vmap")


def _check_batch_sizes(batched):
    # a symbolic size by its expression: SymInts do not hash, and two dims the ShapeEnv knows equal share one
    sizes = {_size_key(value.fake.size(dim)) for value, dim, _ in batched}
    if not sizes:
        raise GraphBreak("vmap", "no argument is batched")
    if len(sizes) != 1:
        raise GraphBreak("vmap", f"batch sizes {sorted(map(str, sizes))} are not known to be one size")


def _size_key(size):
    return size.node.expr if isinstance(size, torch.SymInt) else size


def _flatten_result(result):
    """The tensors `fn` returned, in order, and a function that rebuilds the result's structure from values."""
    if result.is_tensor():
        return [result], lambda items: items[0]
    items = result.sequence_items()
    kind = result.python_type()
    if items is None or kind not in (tuple, list):
        raise GraphBreak("vmap", f"the vmapped function returns {kind.__name__}, not tensors")
    parts = [_flatten_result(item) for item in items]
    counts = [len(leaves) for leaves, _ in parts]

    def rebuild(values):
        rebuilt, start = [], 0
        for (_, inner), count in zip(parts, counts):
            rebuilt.append(inner(values[start:start + count]))
            start += count
        return TupleValue(rebuilt) if kind is tuple else ListValue(rebuilt)
    return [leaf for leaves, _ in parts for leaf in leaves], rebuild


def _flat_out_dims(out_dims, result) -> list:
    """out_dims per tensor of the result, in the order `_flatten_result` lists them."""
    if result.is_tensor():
        if isinstance(out_dims, (tuple, list)):
            raise GraphBreak("vmap", "out_dims is a sequence for a tensor result")
        return [out_dims]
    items = result.sequence_items()
    dims = _per_item(out_dims, result.python_type(), len(items), "out_dims", "the result")
    return [flat for item, dim in zip(items, dims) for flat in _flat_out_dims(dim, item)]


def _per_item(dims, kind: type, count: int, name: str, what: str):
    """The dims of a tuple's or list's items: one int or None for all, or a container of the same type and length
    (torch's pytree matches the structure of the dims against the values', and raises where they differ)."""
    if dims is None or type(dims) is int:
        return (dims,) * count
    if type(dims) is not kind or len(dims) != count:
        raise GraphBreak("vmap", f"{name} {dims!r} does not match the structure of {what}")
    return dims


def _lift(body, outputs: list, batched: set) -> list:
    """Make every node of another graph that the body uses an input of the body (in_dim None), in order; returns
    the outer nodes. A body node that computes a number from outer values only breaks: the outer value that
    made it keeps it (a size node made on first use) and would hand it to the frame's graph; a tensor or a state
    switch computed so is the body's own."""
    lifted = {}
    first = next((node for node in body.nodes if node.op != "placeholder"), None)

    def inner(outer):
        if outer not in lifted:
            if first is None:
                placeholder = body.placeholder(f"lifted_{len(lifted)}")
            else:
                with body.inserting_before(first):
                    placeholder = body.placeholder(f"lifted_{len(lifted)}")
            placeholder.meta.update({key: outer.meta[key] for key in ("example_value", "val") if key in outer.meta})
            lifted[outer] = placeholder
        return lifted[outer]
    depends = set(batched)
    for node in list(body.nodes):
        if node.op == "placeholder":
            continue
        for arg in node.all_input_nodes:
            if arg.graph is not body:
                node.replace_input_with(arg, inner(arg))
        if any(arg in depends for arg in node.all_input_nodes):
            depends.add(node)
        elif isinstance(node.meta.get("example_value"), _SYMBOLIC):
            raise GraphBreak("vmap", f"the vmapped function computes {node.name} from values outside it only")
    outputs[:] = [inner(node) if node.graph is not body else node for node in outputs]
    return list(lifted)


