"""The shape-sweep corpus, third round (session 11): ground the first two rounds left out.

Python floats and ints that vary between calls (torch 2.14's `specialize_float=False`: a float that changes
becomes a graph input after one recompile) in every place a program puts them; broadcasting where a size turns 1 or
0; inputs whose sizes stop matching; size-driven views, splits, pads, pools, recurrent layers, gathers and scatters;
a training step with an optimizer; resume functions after a print; keyword tensors. tools/sweep_corpus.py imports
this module at its end, and each maker here registers into its `PROGRAMS`; torch.compile's counts for these
programs are `TORCH_COMPILE_GRAPHS` below (merged there). Imports only torch and the corpus's helpers.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from tools.sweep_corpus import GROW, UP_DOWN, _plain, _seeded, _t, program

__all__ = ["TORCH_COMPILE_GRAPHS"]

FLOATS = (0.5, 1.5, 2.5, 3.25, 1.5, 0.75)
FLOATS_SIGN = (0.5, 1.5, -2.0, 3.0, 0.25, -0.5)
INTS = (2, 3, 4, 5, 3, 6)
SEQ = ((1, 4), (1, 5), (2, 7), (2, 9), (3, 12), (1, 4))


def _with_float(rows=3, cols=4):
    return lambda a: (_t(rows, cols), a)


# -- Python floats that vary -----------------------------------------------------------------------------------

def float_arith(x, a):
    return x * a + a * 2 - a / 4


program("float", _with_float(), {"floats": FLOATS})(_plain(float_arith))


def float_math(x, a):
    return x * math.sqrt(abs(a)) + math.exp(-a) + math.floor(a)


program("float", _with_float(), {"floats": FLOATS_SIGN})(_plain(float_math))


def float_factory(x, a):
    return x + torch.full((x.shape[1],), a) + torch.tensor(a) * 2


program("float", _with_float(), {"floats": FLOATS})(_plain(float_factory))


def float_branch(x, a):
    if a > 1.0:
        return x * a
    return x - a


program("float", _with_float(), {"floats": FLOATS_SIGN})(_plain(float_branch))


def _clip(x, bound):
    return x.clamp(min=-bound, max=bound) * bound


def float_callee(x, a):
    return _clip(x, a) + _clip(x, a * 2)


program("float", _with_float(), {"floats": FLOATS})(_plain(float_callee))


def float_in_list(x, scales):
    return x * scales[0] + scales[1]


program("float", lambda item: (_t(3, 4), [item, item * 2]), {"floats": FLOATS})(_plain(float_in_list))


def float_in_dict(x, config):
    return x * config["scale"] + config["shift"]


program("float", lambda item: (_t(3, 4), {"scale": item, "shift": -item}), {"floats": FLOATS})(
    _plain(float_in_dict))


@program("float", lambda a: (_t(3, 4), a), {"floats": FLOATS})
@_seeded
def float_module_attribute():
    class Temperature(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.temperature = 1.0
            self.proj = torch.nn.Linear(4, 4)

        def forward(self, x, temperature):
            self.temperature = temperature
            return torch.softmax(self.proj(x) / self.temperature, dim=-1)
    return Temperature()


def float_with_int(x, a, n):
    return x * a + n


program("float", lambda item: (_t(3, 4), item[0], item[1]),
        {"both": ((0.5, 2), (1.5, 3), (2.5, 4), (0.5, 5), (3.0, 2))})(_plain(float_with_int))


def float_to_size(x, a):
    return x.new_zeros(int(a * 2)) + a


program("float", _with_float(), {"floats": FLOATS})(_plain(float_to_size))


def float_exponent(x, a):
    return x.abs() ** a + a ** 2


program("float", _with_float(), {"floats": FLOATS})(_plain(float_exponent))


def float_keyword_option(x, a):
    return F.leaky_relu(x, negative_slope=a) + F.elu(x, alpha=a)


program("float", _with_float(), {"floats": FLOATS})(_plain(float_keyword_option))


def float_update(w, g, lr):
    return w - lr * g


program("float", lambda lr: (_t(4, 3), _t(4, 3, seed=1), lr), {"floats": (0.1, 0.01, 0.05, 0.001, 0.1)})(
    _plain(float_update))


def float_rounding(x, a):
    return x * round(a, 1) + a // 1 + int(a)


program("float", _with_float(), {"floats": FLOATS})(_plain(float_rounding))


def float_and_rows(x, a):
    return (x * a).sum(0) / x.shape[0]


program("float", lambda item: (_t(item[0], 4), item[1]),
        {"both": ((2, 0.5), (3, 1.5), (4, 2.5), (5, 0.5), (6, 3.0))})(_plain(float_and_rows))


def float_default(x, a=0.5):
    return x * a


program("float", _with_float(), {"floats": FLOATS})(_plain(float_default))


def float_in_tuple(x, bounds):
    low, high = bounds
    return x.clamp(low, high)


program("float", lambda a: (_t(3, 4), (-a, a)), {"floats": FLOATS})(_plain(float_in_tuple))


def float_compared_to_size(x, a):
    return x * (a < x.shape[0])


program("float", lambda item: (_t(item[0], 2), item[1]),
        {"both": ((2, 1.5), (3, 2.5), (4, 5.5), (5, 4.5), (3, 0.5))})(_plain(float_compared_to_size))


# -- Python ints that vary ------------------------------------------------------------------------------------------

def int_step_slice(x, k):
    return x[::k] * 2


program("int", lambda k: (_t(12, 3), k), {"ints": INTS})(_plain(int_step_slice))


def int_index(x, i):
    return x[i] + x[:, i % x.shape[1]].sum()


program("int", lambda i: (_t(8, 3), i), {"ints": (0, 1, 2, -1, -3, 5)})(_plain(int_index))


def int_columns(x, n):
    return torch.zeros(x.shape[0], n) + x[:, :1]


program("int", lambda n: (_t(4, 3), n), {"ints": INTS})(_plain(int_columns))


def int_arange_only(n):
    return torch.arange(n) * 2 + n


program("int", lambda n: (n,), {"ints": INTS})(_plain(int_arange_only))


def int_topk(x, k):
    return x.topk(k, dim=1).values


program("int", lambda k: (_t(3, 8), k), {"ints": INTS})(_plain(int_topk))


def int_narrow(x, start, length):
    return x.narrow(0, start, length) * start


program("int", lambda item: (_t(10, 2), item[0], item[1]), {"pairs": ((0, 2), (1, 3), (2, 4), (3, 5), (1, 3))})(
    _plain(int_narrow))


def int_roll(x, k):
    return torch.roll(x, k, 0)


program("int", lambda k: (_t(6, 2), k), {"ints": (1, 2, 3, -1, 4)})(_plain(int_roll))


def int_in_tuple(x, dims):
    return x.reshape(dims).sum(-1)


program("int", lambda n: (_t(24), (n, 24 // n)), {"ints": (2, 3, 4, 6, 8, 3)})(_plain(int_in_tuple))


# -- broadcasting and matching sizes ----------------------------------------------------------------------------

def broadcast_to_one(x, y):
    return x + y


program("broadcast", lambda item: (_t(item[0], 3), _t(item[1], 3, seed=1)),
        {"one_mid": ((2, 2), (3, 3), (4, 1), (5, 5), (6, 1), (7, 7))})(_plain(broadcast_to_one))


def broadcast_zero(x, y):
    return (x * y).sum(0)


program("broadcast", lambda item: (_t(item[0], 3), _t(item[0], item[1], seed=1)),
        {"cols": ((2, 3), (3, 3), (2, 1), (4, 3), (3, 1))})(_plain(broadcast_zero))


def sizes_stop_matching(x, y):
    return x + y


program("broadcast", lambda item: (_t(item[0], 2), _t(item[1], 2, seed=1)),
        {"mismatch": ((2, 2), (3, 3), (4, 5), (5, 5), (3, 2), (6, 6))})(_plain(sizes_stop_matching))


def matmul_inner_match(x, w):
    return x @ w


program("broadcast", lambda item: (_t(3, item[0]), _t(item[1], 2, seed=1)),
        {"inner": ((2, 2), (3, 3), (4, 4), (4, 5), (5, 5))})(_plain(matmul_inner_match))


def where_broadcast(x, y):
    return torch.where(x > 0, x, y)


program("broadcast", lambda item: (_t(item[0], 3), _t(item[1], 3, seed=1)),
        {"one_mid": ((2, 2), (3, 1), (4, 4), (5, 1), (6, 6))})(_plain(where_broadcast))


# -- marks ------------------------------------------------------------------------------------------------------

def _marked_both(n):
    x = _t(n, n + 1)
    torch._dynamo.mark_dynamic(x, 1, min=3, max=8)
    torch._dynamo.mark_static(x, 0)
    return (x,)


def mark_cols_range_rows_static(x):
    return x.sum(1) * x.shape[1]


program("marks", _marked_both, {"inside": (2, 3, 4, 5, 6), "outside": (3, 4, 9, 5)})(
    _plain(mark_cols_range_rows_static))


def _maybe_marked_pair(n):
    x, y = _t(n, 3), _t(n, 3, seed=1)
    torch._dynamo.maybe_mark_dynamic(x, 0)
    return x, y


def maybe_marked_pair(x, y):
    return x * y + x.shape[0]


program("marks", _maybe_marked_pair, {"grow": GROW})(_plain(maybe_marked_pair))


# -- branches on sizes -------------------------------------------------------------------------------------------

def branch_three_way(x):
    if x.shape[0] < 3:
        return x * 2
    elif x.shape[0] < 6:
        return x - 1
    return x.sum(0, keepdim=True).expand_as(x)


program("branch", lambda n: (_t(n, 3),), {"grow": GROW, "up_down": UP_DOWN})(_plain(branch_three_way))


def branch_square(x):
    if x.shape[0] == x.shape[1]:
        return x @ x
    return x @ x.T


program("branch", lambda item: (_t(item[0], item[1]),), {"mixed": ((2, 2), (3, 3), (3, 4), (4, 4), (5, 2), (6, 6))})(
    _plain(branch_square))


# -- views, reshapes, splits ---------------------------------------------------------------------------------------

def view_minus_one(x):
    return x.view(-1, 4).sum(1), x.reshape(2, -1).shape


program("view", lambda n: (_t(n * 2, 4),), {"grow": GROW, "up_down": UP_DOWN})(_plain(view_minus_one))


def reshape_if_even(x):
    if x.shape[0] % 2 == 0:
        return x.view(2, -1)
    return x.view(-1)


program("view", lambda n: (_t(n, 3),), {"grow": GROW, "up_down": UP_DOWN})(_plain(reshape_if_even))


def unflatten_half(x):
    return x.unflatten(1, (2, x.shape[1] // 2)).sum(-1)


program("view", lambda n: (_t(3, n * 2),), {"grow": GROW, "up_down": UP_DOWN})(_plain(unflatten_half))


def chunk_by_size(x):
    return [c.sum() for c in x.chunk(max(x.shape[0] // 2, 1))]


program("view", lambda n: (_t(n, 2),), {"grow": GROW})(_plain(chunk_by_size))


def split_by_size(x):
    return [p.mean(0) for p in x.split(max(x.shape[0] // 2, 1))]


program("view", lambda n: (_t(n, 2),), {"grow": GROW, "up_down": UP_DOWN})(_plain(split_by_size))


def flatten_batch(x):
    return x.flatten(0, 1) @ torch.ones(x.shape[-1], 2)


program("view", lambda item: (_t(item[0], item[1], 3),), {"batch_seq": SEQ})(_plain(flatten_batch))


# -- factories from sizes ------------------------------------------------------------------------------------------

def arange_plus_zeros(x, n):
    return torch.arange(x.shape[0]).float() + torch.zeros(x.shape[0], n).sum(1)


program("factory", lambda item: (_t(item[0], 2), item[1]), {"both": ((2, 3), (3, 3), (4, 4), (5, 5), (3, 2))})(
    _plain(arange_plus_zeros))


def linspace_steps(x):
    return x * torch.linspace(0, 1, x.shape[-1])


program("factory", lambda n: (_t(2, n),), {"grow": GROW, "up_down": UP_DOWN})(_plain(linspace_steps))


def tril_of_size(x):
    return torch.tril(torch.ones(x.shape[0], x.shape[0])) @ x


program("factory", lambda n: (_t(n, 3),), {"grow": GROW, "up_down": UP_DOWN})(_plain(tril_of_size))


def one_hot_classes(x, labels):
    return x * F.one_hot(labels, num_classes=x.shape[1])


program("factory", lambda item: (_t(item[0], item[1]), torch.arange(item[0]) % item[1]),
        {"batch_seq": ((2, 3), (3, 4), (4, 5), (5, 6), (2, 3))})(_plain(one_hot_classes))


# -- shape-driven ops ------------------------------------------------------------------------------------------------

def pad_by_size(x):
    return F.pad(x, (0, x.shape[-1], 1, 0))


program("nn", lambda n: (_t(2, n),), {"grow": GROW, "up_down": UP_DOWN})(_plain(pad_by_size))


def interpolate_scale(x):
    return F.interpolate(x, scale_factor=2.0, mode="nearest")


program("nn", lambda n: (_t(1, 2, n),), {"grow": GROW, "up_down": UP_DOWN})(_plain(interpolate_scale))


def interpolate_to_double(x):
    return F.interpolate(x, size=(x.shape[-2] * 2, x.shape[-1] + 1), mode="bilinear", align_corners=False)


program("nn", lambda n: (_t(1, 1, n, n + 1),), {"grow": GROW})(_plain(interpolate_to_double))


def max_pool_ceil(x):
    return F.max_pool2d(x, 2, ceil_mode=True)


program("nn", lambda n: (_t(1, 2, n, n),), {"grow": GROW, "up_down": UP_DOWN})(_plain(max_pool_ceil))


def avg_pool_ceil(x):
    return F.avg_pool1d(x, 3, stride=2, ceil_mode=True)


program("nn", lambda n: (_t(2, 2, n + 2),), {"grow": GROW})(_plain(avg_pool_ceil))


def conv2d_fixed_weight(x, w):
    return F.conv2d(x, w, padding=1).relu().mean((2, 3))


program("nn", lambda n: (_t(1, 2, n + 3, n + 4), _t(3, 2, 3, 3, seed=1)), {"grow": GROW})(
    _plain(conv2d_fixed_weight))


@program("nn", lambda item: (_t(item[0], item[1], 4, grad=True),), {"batch_seq": SEQ}, grads=True)
@_seeded
def lstm_lengths():
    class Recurrent(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(4, 6, batch_first=True)

        def forward(self, x):
            out, (h, _) = self.lstm(x)
            return out.mean(1) + h[-1]
    return Recurrent()


@program("nn", lambda item: (_t(item[1], item[0], 3),), {"batch_seq": SEQ})
@_seeded
def gru_lengths():
    return torch.nn.GRU(3, 5)


def attention_padding_mask(q, lengths):
    keep = torch.arange(q.shape[1])[None, :] < lengths[:, None]
    scores = (q @ q.transpose(1, 2)).masked_fill(~keep[:, None, :], float("-inf"))
    return torch.softmax(scores, dim=-1) @ q


program("nn", lambda item: (_t(item[0], item[1], 4), torch.arange(item[0]) % item[1] + 1), {"batch_seq": SEQ})(
    _plain(attention_padding_mask))


def einsum_outer(x, y):
    return torch.einsum("bi,bj->bij", x, y).sum(0)


program("nn", lambda item: (_t(item[0], item[1]), _t(item[0], 3, seed=1)),
        {"batch_seq": ((1, 2), (2, 3), (3, 4), (4, 5), (2, 3))})(_plain(einsum_outer))


def layer_norm_last(x):
    return F.layer_norm(x, x.shape[-1:])


program("nn", lambda item: (_t(item[0], item[1]),), {"batch_seq": ((1, 4), (2, 5), (3, 6), (4, 7), (1, 4))})(
    _plain(layer_norm_last))


# -- sequences and loops with counts from sizes ------------------------------------------------------------------

def cat_first_rows(x):
    return torch.cat([x[i:i + 1] * (i + 1) for i in range(min(x.shape[0], 3))])


program("loop", lambda n: (_t(n, 3),), {"grow": GROW})(_plain(cat_first_rows))


def stack_scaled(x):
    return torch.stack([x, x * 2, x.flip(0)], dim=1)


program("loop", lambda n: (_t(n, 2),), {"grow": GROW, "up_down": UP_DOWN})(_plain(stack_scaled))


def loop_over_rows(x):
    total = x.new_zeros(x.shape[1])
    for i in range(x.shape[0]):
        total = total + x[i] * i
    return total


program("loop", lambda n: (_t(n, 3),), {"grow": (2, 3, 4, 3, 2)})(_plain(loop_over_rows))


# -- slicing and indexing ----------------------------------------------------------------------------------------

def slice_symbolic(x):
    return x[x.shape[0] // 4: x.shape[0] - 1], x[-2:], x[:, -1]


program("slice", lambda n: (_t(n, 3),), {"grow": GROW, "up_down": UP_DOWN})(_plain(slice_symbolic))


def new_of_shape(x):
    return x.new_zeros(x.shape) + x.new_ones(x.shape[0], 1) * x


program("slice", lambda n: (_t(n, 3),), {"grow": GROW, "up_down": UP_DOWN})(_plain(new_of_shape))


def expand_first_column(x):
    return x[:, :1].expand(*x.shape) + x[:1].expand(x.shape[0], -1)


program("slice", lambda item: (_t(item[0], item[1]),), {"batch_seq": ((2, 3), (3, 4), (4, 5), (5, 6), (2, 3))})(
    _plain(expand_first_column))


def repeat_and_tile(x):
    return x.repeat(2, 1).sum(0), torch.tile(x, (1, 2)).sum(1)


program("slice", lambda n: (_t(n, 3),), {"grow": GROW, "up_down": UP_DOWN})(_plain(repeat_and_tile))


def cumulative(x):
    return x.cumsum(0), x.cumprod(1), torch.cummax(x, 0).values


program("reduction", lambda n: (_t(n, 3),), {"grow": GROW, "up_down": UP_DOWN})(_plain(cumulative))


def topk_half(x):
    return x.topk(max(x.shape[1] // 2, 1), dim=1).values


program("reduction", lambda n: (_t(2, n),), {"grow": GROW, "up_down": UP_DOWN})(_plain(topk_half))


def sort_rows(x):
    values, order = torch.sort(x, dim=0)
    return values, order, torch.argsort(x, dim=1, descending=True)


program("reduction", lambda n: (_t(n, 3),), {"grow": GROW, "up_down": UP_DOWN})(_plain(sort_rows))


def gather_varying_index(x, index):
    return torch.gather(x, 1, index)


program("index", lambda item: (_t(item[0], 5), torch.arange(item[0] * item[1]).view(item[0], item[1]) % 5),
        {"batch_seq": ((2, 1), (3, 2), (4, 3), (5, 4), (2, 1))})(_plain(gather_varying_index))


def scatter_add_rows(x, index):
    return torch.zeros(4, x.shape[1]).scatter_add(0, index, x)


program("index", lambda n: (_t(n, 3), (torch.arange(n * 3).view(n, 3) % 4)), {"grow": GROW, "up_down": UP_DOWN})(
    _plain(scatter_add_rows))


def index_select_varying(x, index):
    return x.index_select(0, index) * index.shape[0]


program("index", lambda n: (_t(6, 3), torch.arange(n) % 6), {"grow": GROW, "up_down": UP_DOWN})(
    _plain(index_select_varying))


def index_put_varying(x, index):
    out = x.clone()
    out[index] = 0.0
    return out


program("index", lambda n: (_t(8, 2), torch.arange(n) % 8), {"grow": GROW})(_plain(index_put_varying))


# -- training, resumes, modules ---------------------------------------------------------------------------------

def _sgd_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def sgd_step(x, target):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), target)
        loss.backward()
        optimizer.step()
        return loss.detach(), model[0].weight.detach().clone()

    sgd_step.params = list(model.parameters())
    return sgd_step


program("training", lambda n: (_t(n, 5), _t(n, 2, seed=1)), {"grow": GROW, "up_down": UP_DOWN},
        name="sgd_step")(_sgd_step)


def print_then_symbolic(x):
    y = x * 2
    print(y.shape, len(y))
    return y.sum(0) * y.shape[0], y[: y.shape[0] // 2]


program("resume", lambda n: (_t(n, 3),), {"grow": GROW, "up_down": UP_DOWN})(_plain(print_then_symbolic))


def print_in_callee(x):
    def report(t):
        print("rows", t.shape[0])
        return t.shape[0]
    n = report(x)
    return x.new_ones(n, 2) * n


program("resume", lambda n: (_t(n, 3),), {"grow": GROW})(_plain(print_in_callee))


@program("module", lambda item: (_t(item[0], item[1], 6),), {"batch_seq": SEQ}, grads=True)
@_seeded
def nested_blocks():
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = torch.nn.LayerNorm(6)
            self.mlp = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.GELU(), torch.nn.Linear(12, 6))

        def forward(self, x):
            return x + self.mlp(self.norm(x))

    class Stack(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = torch.nn.ModuleList([Block() for _ in range(2)])

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return x.mean(1)
    return Stack()


def _keyword_model():
    torch.manual_seed(0)

    class Masked(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(4, 4)

        def forward(self, input, *, mask=None, scale=1.0):
            out = self.proj(input) * scale
            return out if mask is None else out * mask[..., None]

    model = Masked()

    def call_with_keywords(x, mask):
        return model(input=x, mask=mask, scale=0.5) + model(x)

    call_with_keywords.params = list(model.parameters())
    return call_with_keywords


program("module", lambda item: (_t(item[0], item[1], 4), (torch.arange(item[1]) % 2).float().expand(item[0], -1)),
        {"batch_seq": SEQ}, grads=True, name="keyword_tensors")(_keyword_model)


#: torch.compile's graph count (counting backend, eager) per "program/sweep/mode" for this module's programs,
#: measured with torch 2.14 by `PYTHONPATH=. python tools/sweep_diff.py --print-counts --only ...`
TORCH_COMPILE_GRAPHS: dict[str, int] = {
    'float_arith/floats/auto': 2, 'float_arith/floats/dynamic': 1, 'float_arith/floats/static': 5,
    'float_math/floats/auto': 6, 'float_math/floats/dynamic': 6, 'float_math/floats/static': 6,
    'float_factory/floats/auto': 2, 'float_factory/floats/dynamic': 1, 'float_factory/floats/static': 5,
    'float_branch/floats/auto': 3, 'float_branch/floats/dynamic': 2, 'float_branch/floats/static': 6,
    'float_callee/floats/auto': 2, 'float_callee/floats/dynamic': 1, 'float_callee/floats/static': 5,
    'float_in_list/floats/auto': 2, 'float_in_list/floats/dynamic': 1, 'float_in_list/floats/static': 5,
    'float_in_dict/floats/auto': 2, 'float_in_dict/floats/dynamic': 1, 'float_in_dict/floats/static': 5,
    'float_module_attribute/floats/auto': 2, 'float_module_attribute/floats/dynamic': 1, 'float_module_attribute/floats/static': 5,
    'float_with_int/both/auto': 2, 'float_with_int/both/dynamic': 1, 'float_with_int/both/static': 5,
    'float_to_size/floats/auto': 3, 'float_to_size/floats/dynamic': 2, 'float_to_size/floats/static': 5,
    'float_exponent/floats/auto': 2, 'float_exponent/floats/dynamic': 1, 'float_exponent/floats/static': 5,
    'float_keyword_option/floats/auto': 2, 'float_keyword_option/floats/dynamic': 1, 'float_keyword_option/floats/static': 5,
    'float_update/floats/auto': 2, 'float_update/floats/dynamic': 1, 'float_update/floats/static': 4,
    'float_rounding/floats/auto': 2, 'float_rounding/floats/dynamic': 1, 'float_rounding/floats/static': 5,
    'float_and_rows/both/auto': 2, 'float_and_rows/both/dynamic': 1, 'float_and_rows/both/static': 5,
    'float_default/floats/auto': 2, 'float_default/floats/dynamic': 1, 'float_default/floats/static': 5,
    'float_in_tuple/floats/auto': 2, 'float_in_tuple/floats/dynamic': 1, 'float_in_tuple/floats/static': 5,
    'float_compared_to_size/both/auto': 2, 'float_compared_to_size/both/dynamic': 2, 'float_compared_to_size/both/static': 5,
    'int_step_slice/ints/auto': 2, 'int_step_slice/ints/dynamic': 1, 'int_step_slice/ints/static': 5,
    'int_index/ints/auto': 5, 'int_index/ints/dynamic': 5, 'int_index/ints/static': 6,
    'int_columns/ints/auto': 2, 'int_columns/ints/dynamic': 1, 'int_columns/ints/static': 5,
    'int_arange_only/ints/auto': 2, 'int_arange_only/ints/dynamic': 1, 'int_arange_only/ints/static': 5,
    'int_topk/ints/auto': 2, 'int_topk/ints/dynamic': 1, 'int_topk/ints/static': 5,
    'int_narrow/pairs/auto': 2, 'int_narrow/pairs/dynamic': 1, 'int_narrow/pairs/static': 4,
    'int_roll/ints/auto': 2, 'int_roll/ints/dynamic': 1, 'int_roll/ints/static': 5,
    'int_in_tuple/ints/auto': 2, 'int_in_tuple/ints/dynamic': 1, 'int_in_tuple/ints/static': 5,
    'broadcast_to_one/one_mid/auto': 3, 'broadcast_to_one/one_mid/dynamic': 2, 'broadcast_to_one/one_mid/static': 6,
    'broadcast_zero/cols/auto': 3, 'broadcast_zero/cols/dynamic': 2, 'broadcast_zero/cols/static': 5,
    'sizes_stop_matching/mismatch/auto': 2, 'sizes_stop_matching/mismatch/dynamic': 2, 'sizes_stop_matching/mismatch/static': 4,
    'matmul_inner_match/inner/auto': 2, 'matmul_inner_match/inner/dynamic': 2, 'matmul_inner_match/inner/static': 4,
    'where_broadcast/one_mid/auto': 3, 'where_broadcast/one_mid/dynamic': 2, 'where_broadcast/one_mid/static': 5,
    'mark_cols_range_rows_static/inside/auto': 5, 'mark_cols_range_rows_static/inside/dynamic': 5, 'mark_cols_range_rows_static/inside/static': 5,
    'mark_cols_range_rows_static/outside/auto': 3, 'mark_cols_range_rows_static/outside/dynamic': 3, 'mark_cols_range_rows_static/outside/static': 3,
    'maybe_marked_pair/grow/auto': 2, 'maybe_marked_pair/grow/dynamic': 1, 'maybe_marked_pair/grow/static': 7,
    'branch_three_way/grow/auto': 3, 'branch_three_way/grow/dynamic': 3, 'branch_three_way/grow/static': 7,
    'branch_three_way/up_down/auto': 3, 'branch_three_way/up_down/dynamic': 3, 'branch_three_way/up_down/static': 4,
    'branch_square/mixed/auto': 3, 'branch_square/mixed/dynamic': 2, 'branch_square/mixed/static': 6,
    'view_minus_one/grow/auto': 2, 'view_minus_one/grow/dynamic': 2, 'view_minus_one/grow/static': 7,
    'view_minus_one/up_down/auto': 2, 'view_minus_one/up_down/dynamic': 2, 'view_minus_one/up_down/static': 4,
    'reshape_if_even/grow/auto': 3, 'reshape_if_even/grow/dynamic': 3, 'reshape_if_even/grow/static': 7,
    'reshape_if_even/up_down/auto': 2, 'reshape_if_even/up_down/dynamic': 2, 'reshape_if_even/up_down/static': 4,
    'unflatten_half/grow/auto': 2, 'unflatten_half/grow/dynamic': 1, 'unflatten_half/grow/static': 7,
    'unflatten_half/up_down/auto': 2, 'unflatten_half/up_down/dynamic': 1, 'unflatten_half/up_down/static': 4,
    'chunk_by_size/grow/auto': 5, 'chunk_by_size/grow/dynamic': 5, 'chunk_by_size/grow/static': 7,
    'split_by_size/grow/auto': 3, 'split_by_size/grow/dynamic': 3, 'split_by_size/grow/static': 7,
    'split_by_size/up_down/auto': 2, 'split_by_size/up_down/dynamic': 2, 'split_by_size/up_down/static': 4,
    'flatten_batch/batch_seq/auto': 3, 'flatten_batch/batch_seq/dynamic': 2, 'flatten_batch/batch_seq/static': 5,
    'arange_plus_zeros/both/auto': 3, 'arange_plus_zeros/both/dynamic': 2, 'arange_plus_zeros/both/static': 5,
    'linspace_steps/grow/auto': 7, 'linspace_steps/grow/dynamic': 7, 'linspace_steps/grow/static': 7,
    'linspace_steps/up_down/auto': 4, 'linspace_steps/up_down/dynamic': 4, 'linspace_steps/up_down/static': 4,
    'tril_of_size/grow/auto': 2, 'tril_of_size/grow/dynamic': 1, 'tril_of_size/grow/static': 7,
    'tril_of_size/up_down/auto': 2, 'tril_of_size/up_down/dynamic': 1, 'tril_of_size/up_down/static': 4,
    'one_hot_classes/batch_seq/auto': 4, 'one_hot_classes/batch_seq/dynamic': 4, 'one_hot_classes/batch_seq/static': 4,
    'pad_by_size/grow/auto': 2, 'pad_by_size/grow/dynamic': 2, 'pad_by_size/grow/static': 7,
    'pad_by_size/up_down/auto': 2, 'pad_by_size/up_down/dynamic': 2, 'pad_by_size/up_down/static': 4,
    'interpolate_scale/grow/auto': 2, 'interpolate_scale/grow/dynamic': 2, 'interpolate_scale/grow/static': 7,
    'interpolate_scale/up_down/auto': 2, 'interpolate_scale/up_down/dynamic': 2, 'interpolate_scale/up_down/static': 4,
    'interpolate_to_double/grow/auto': 2, 'interpolate_to_double/grow/dynamic': 1, 'interpolate_to_double/grow/static': 7,
    'max_pool_ceil/grow/auto': 2, 'max_pool_ceil/grow/dynamic': 2, 'max_pool_ceil/grow/static': 7,
    'max_pool_ceil/up_down/auto': 2, 'max_pool_ceil/up_down/dynamic': 2, 'max_pool_ceil/up_down/static': 4,
    'avg_pool_ceil/grow/auto': 2, 'avg_pool_ceil/grow/dynamic': 1, 'avg_pool_ceil/grow/static': 7,
    'conv2d_fixed_weight/grow/auto': 2, 'conv2d_fixed_weight/grow/dynamic': 1, 'conv2d_fixed_weight/grow/static': 7,
    'lstm_lengths/batch_seq/auto': 0, 'lstm_lengths/batch_seq/dynamic': 0, 'lstm_lengths/batch_seq/static': 0,
    'gru_lengths/batch_seq/auto': 0, 'gru_lengths/batch_seq/dynamic': 0, 'gru_lengths/batch_seq/static': 0,
    'attention_padding_mask/batch_seq/auto': 3, 'attention_padding_mask/batch_seq/dynamic': 3, 'attention_padding_mask/batch_seq/static': 5,
    'einsum_outer/batch_seq/auto': 2, 'einsum_outer/batch_seq/dynamic': 2, 'einsum_outer/batch_seq/static': 4,
    'layer_norm_last/batch_seq/auto': 2, 'layer_norm_last/batch_seq/dynamic': 2, 'layer_norm_last/batch_seq/static': 4,
    'cat_first_rows/grow/auto': 2, 'cat_first_rows/grow/dynamic': 2, 'cat_first_rows/grow/static': 7,
    'stack_scaled/grow/auto': 2, 'stack_scaled/grow/dynamic': 2, 'stack_scaled/grow/static': 7,
    'stack_scaled/up_down/auto': 2, 'stack_scaled/up_down/dynamic': 2, 'stack_scaled/up_down/static': 4,
    'loop_over_rows/grow/auto': 3, 'loop_over_rows/grow/dynamic': 3, 'loop_over_rows/grow/static': 3,
    'slice_symbolic/grow/auto': 2, 'slice_symbolic/grow/dynamic': 1, 'slice_symbolic/grow/static': 7,
    'slice_symbolic/up_down/auto': 2, 'slice_symbolic/up_down/dynamic': 1, 'slice_symbolic/up_down/static': 4,
    'new_of_shape/grow/auto': 2, 'new_of_shape/grow/dynamic': 1, 'new_of_shape/grow/static': 7,
    'new_of_shape/up_down/auto': 2, 'new_of_shape/up_down/dynamic': 1, 'new_of_shape/up_down/static': 4,
    'expand_first_column/batch_seq/auto': 2, 'expand_first_column/batch_seq/dynamic': 1, 'expand_first_column/batch_seq/static': 4,
    'repeat_and_tile/grow/auto': 2, 'repeat_and_tile/grow/dynamic': 1, 'repeat_and_tile/grow/static': 7,
    'repeat_and_tile/up_down/auto': 2, 'repeat_and_tile/up_down/dynamic': 1, 'repeat_and_tile/up_down/static': 4,
    'cumulative/grow/auto': 2, 'cumulative/grow/dynamic': 1, 'cumulative/grow/static': 7,
    'cumulative/up_down/auto': 2, 'cumulative/up_down/dynamic': 1, 'cumulative/up_down/static': 4,
    'topk_half/grow/auto': 2, 'topk_half/grow/dynamic': 2, 'topk_half/grow/static': 7,
    'topk_half/up_down/auto': 2, 'topk_half/up_down/dynamic': 2, 'topk_half/up_down/static': 4,
    'sort_rows/grow/auto': 2, 'sort_rows/grow/dynamic': 1, 'sort_rows/grow/static': 7,
    'sort_rows/up_down/auto': 2, 'sort_rows/up_down/dynamic': 1, 'sort_rows/up_down/static': 4,
    'gather_varying_index/batch_seq/auto': 2, 'gather_varying_index/batch_seq/dynamic': 2, 'gather_varying_index/batch_seq/static': 4,
    'scatter_add_rows/grow/auto': 2, 'scatter_add_rows/grow/dynamic': 1, 'scatter_add_rows/grow/static': 7,
    'scatter_add_rows/up_down/auto': 2, 'scatter_add_rows/up_down/dynamic': 1, 'scatter_add_rows/up_down/static': 4,
    'index_select_varying/grow/auto': 2, 'index_select_varying/grow/dynamic': 1, 'index_select_varying/grow/static': 7,
    'index_select_varying/up_down/auto': 2, 'index_select_varying/up_down/dynamic': 1, 'index_select_varying/up_down/static': 4,
    'index_put_varying/grow/auto': 2, 'index_put_varying/grow/dynamic': 2, 'index_put_varying/grow/static': 7,
    'sgd_step/grow/auto': 5, 'sgd_step/grow/dynamic': 5, 'sgd_step/grow/static': 10,
    'sgd_step/up_down/auto': 5, 'sgd_step/up_down/dynamic': 5, 'sgd_step/up_down/static': 7,
    'print_then_symbolic/grow/auto': 4, 'print_then_symbolic/grow/dynamic': 2, 'print_then_symbolic/grow/static': 14,
    'print_then_symbolic/up_down/auto': 4, 'print_then_symbolic/up_down/dynamic': 2, 'print_then_symbolic/up_down/static': 8,
    'print_in_callee/grow/auto': 3, 'print_in_callee/grow/dynamic': 3, 'print_in_callee/grow/static': 7,
    'nested_blocks/batch_seq/auto': 3, 'nested_blocks/batch_seq/dynamic': 2, 'nested_blocks/batch_seq/static': 5,
    'keyword_tensors/batch_seq/auto': 3, 'keyword_tensors/batch_seq/dynamic': 3, 'keyword_tensors/batch_seq/static': 5,
}
