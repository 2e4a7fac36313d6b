"""The corpus of `tools/construct_diff.py`: small programs, a few per construct that issue 15 names.

Each program is Python source executed into a fresh module per door (eager, jit.compile, register + enabled,
torch.compile) after `PRELUDE`. It defines `f`, the function under test; `inputs(i)`, the arguments of call i
(0, 1, 2; it may also change the world between calls, as the environment programs do); optionally `observe()`,
state compared after every call (globals, objects, parameters), and `probe_args()`, the arguments a returned
callable is called with. `torch_counts` is what torch.compile (eager backend, torch 2.14) measured: graphs after
the first call and graphs added by calls 2-3, None where torch.compile's results differ from eager's (no bar to
measure against); re-measure with `tools/construct_diff.py --record`.
Entry points: `Program`, `PROGRAMS`.
"""
from __future__ import annotations

import dataclasses
import textwrap

__all__ = ["PRELUDE", "PROGRAMS", "Program"]

PRELUDE = """\
import contextlib, dataclasses, operator, os
import torch
import torch.nn as nn
import torch.nn.functional as F

def rand(*shape, seed=0, grad=False):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).requires_grad_(grad)

torch.manual_seed(0)
"""


@dataclasses.dataclass(frozen=True)
class Program:
    """One corpus program: `name` is `<construct>-<what>`; `source` follows PRELUDE."""
    name: str
    torch_counts: tuple[int, int] | None
    body: str

    @property
    def source(self) -> str:
        return PRELUDE + textwrap.dedent(self.body)


PROGRAMS: list[Program] = []


def _program(name: str, torch_counts: tuple[int, int] | None, body: str) -> None:
    PROGRAMS.append(Program(name, torch_counts, body))


# ---- generators with `yield from`; module iterators inside forward ----

_program("gen-yield-from", (1, 0), """
def inner(x):
    yield x + 1
    yield x * 2
    return 3

def outer(x):
    k = yield from inner(x)
    yield x - k

def f(x):
    return sum(outer(x))

def inputs(i):
    return (rand(4, 3, seed=i),)
""")

_program("gen-parameters", (1, 0), """
net = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))

def f(x):
    y = net(x)
    reg = sum(p.pow(2).sum() for p in net.parameters())
    n = len(list(net.parameters()))
    return y.sum() + 0.01 * reg + n

def inputs(i):
    return (rand(3, 4, seed=i),)

def observe():
    return [p.grad for p in net.parameters()]
""")

_program("gen-children-named-modules", (1, 0), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
        self.c = nn.Linear(4, 2)

    def forward(self, x):
        for child in self.children():
            x = child(x)
        linears = [name for name, m in self.named_modules() if isinstance(m, nn.Linear)]
        return x, linears

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 4, seed=i),)
""")

_program("gen-buffers", (1, 0), """
net = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)).eval()

def f(x):
    total = x.new_zeros(())
    for name, b in net.named_buffers():
        if b.is_floating_point():
            total = total + b.sum()
    count = sum(1 for _ in net.buffers())
    return net(x) + total, count

def inputs(i):
    return (rand(3, 4, seed=i),)
""")

_program("gen-own-generator-method", (1, 0), """
class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def weights(self):
        for layer in self.layers:
            yield from layer.parameters()

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        norm = torch.stack([w.norm() for w in self.weights()]).sum()
        return x * norm

net = Blocks()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 4, seed=i),)
""")

# ---- torch.autograd.Function ----

_program("autograd-save-for-backward", (1, 0), """
class Exp2(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * 2          # not the true gradient: shows the user's backward ran

def f(x):
    return Exp2.apply(x * 0.5) + 1

def inputs(i):
    return (rand(3, 3, seed=i, grad=True),)
""")

_program("autograd-needs-input-grad", (1, 0), """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        gx = g * w if ctx.needs_input_grad[0] else None
        gw = g * x if ctx.needs_input_grad[1] else None
        return gx, gw

def f(x, w):
    return Mul.apply(x, w).sum(dim=0)

def inputs(i):
    return rand(2, 3, seed=i, grad=True), rand(2, 3, seed=10 + i)
""")

_program("autograd-non-tensor-args", (1, 0), """
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k, mode):
        ctx.k = k
        ctx.mode = mode
        return x * k if mode == "mul" else x + k

    @staticmethod
    def backward(ctx, g):
        return (g * ctx.k if ctx.mode == "mul" else g), None, None

def f(x):
    return Scale.apply(x, 3.0, "mul") + Scale.apply(x, 2, "add")

def inputs(i):
    return (rand(4, seed=i, grad=True),)
""")

_program("autograd-mark-non-differentiable", (1, 0), """
class SortDesc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, idx = torch.sort(x, descending=True)
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        return values, idx

    @staticmethod
    def backward(ctx, gv, gi):
        (idx,) = ctx.saved_tensors
        out = torch.zeros_like(gv)
        out.scatter_(0, idx, gv)
        return out

def f(x):
    v, i = SortDesc.apply(x)
    return v * 2, i

def inputs(i):
    return (rand(5, seed=i, grad=True),)
""")

_program("autograd-in-module", (1, 0), """
class Clamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(-1, 1)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g          # straight-through

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return Clamp.apply(self.fc(x) * 3)

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 4, seed=i, grad=True),)

def observe():
    return net.fc.weight.grad
""")

# ---- inference_mode, contextmanager exits on exception paths, nested with, try/except ----

_program("ctx-inference-mode", (1, 0), """
def f(x):
    with torch.inference_mode():
        y = x * 2
    return y + 1, torch.is_inference_mode_enabled()

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("ctx-contextmanager-swallows", (1, 2), """
LOG = []

@contextlib.contextmanager
def tag(name):
    LOG.append("enter " + name)
    try:
        yield
    except ValueError as e:
        LOG.append("caught " + str(e))
    finally:
        LOG.append("exit " + name)

def f(x):
    y = x + 1
    with tag("a"):
        y = y * 2
        raise ValueError("boom")
    return y * 3

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return list(LOG)
""")

_program("ctx-contextmanager-propagates", (0, 0), """
LOG = []

@contextlib.contextmanager
def tag(name):
    LOG.append("enter " + name)
    try:
        yield name
    finally:
        LOG.append("exit " + name)

def f(x):
    with tag("outer") as t:
        y = x.sin()
        if len(t) > 3:
            raise KeyError(t)
    return y

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return list(LOG)
""")

_program("ctx-nested-with", (1, 2), """
LOG = []

@contextlib.contextmanager
def step(n):
    LOG.append(n)
    yield n * 2
    LOG.append(-n)

def f(x):
    with torch.no_grad():
        with step(1) as a, step(2) as b:
            y = x * a
            with torch.enable_grad():
                z = y * b
        w = z + 1
    return w, y.requires_grad, z.requires_grad

def inputs(i):
    return (rand(3, seed=i, grad=True),)

def observe():
    return list(LOG)
""")

_program("ctx-try-except-tensor", (1, 0), """
def f(x):
    try:
        y = x.view(3, -1) + 1
    except RuntimeError:
        y = x.flatten() - 1
    try:
        z = y[0] / 2
    except IndexError:
        z = y
    finally:
        z = z * 2
    return z

def inputs(i):
    return (rand(2, 2, seed=i),)
""")

_program("ctx-exception-leaves-f", (0, 0), """
LOG = []

class Guard:
    def __enter__(self):
        LOG.append("in")
        return self

    def __exit__(self, kind, value, tb):
        LOG.append("out " + (kind.__name__ if kind else "-"))
        return False

def f(x):
    with Guard():
        y = x * 2
        if x.shape[0] == 3:
            raise RuntimeError(f"bad rows {x.shape[0]}")
    return y

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return list(LOG)
""")

# ---- str(), repr(), format(), f-strings ----

_program("str-fstring-print", (1, 0), """
def f(x):
    n = x.shape[0]
    scale = 2.5
    print(f"rows={n} scale={scale:.3f} shape={x.shape} dims={tuple(x.shape)!r} {n:>4d}|{scale:e}")
    return x * scale

def inputs(i):
    return (rand(3, 2, seed=i),)
""")

_program("str-dtype-device-size", (1, 0), """
def f(x):
    names = [str(x.dtype), repr(x.dtype), str(x.device), repr(x.device), str(x.size()), repr(x.shape)]
    key = "-".join(names)
    return x + len(key), key

def inputs(i):
    return (rand(2, 2, seed=i),)
""")

_program("str-format-builtins", None, """
def f(x):
    k = x.dim()
    parts = [format(3.14159, ".2f"), "{:>5}".format(k), "%d-%s" % (k, "a"), str(k), repr(1.5), str((1, 2.0)),
             format(k, "03d"), "{0}/{1!r}".format(k, "s"), str(None), str(True)]
    print(*parts, sep=",")
    return x.sum() + len(",".join(parts))

def inputs(i):
    return (rand(2, 3, seed=i),)
""")

_program("str-fstring-keys", (1, 0), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleDict({f"layer{i}": nn.Linear(3, 3) for i in range(3)})

    def forward(self, x):
        out = {}
        for i in range(3):
            x = self.blocks[f"layer{i}"](x)
            out[f"h{i}"] = x
        return out

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 3, seed=i),)
""")

# ---- operator.itemgetter / attrgetter / methodcaller ----

_program("operator-itemgetter", (3, 0), """
first_two = operator.itemgetter(0, 1)
last = operator.itemgetter(-1)

def f(x):
    a, b = first_two(x.unbind(0))
    return a + b + last([x, x * 2])

def inputs(i):
    return (rand(3, 2, seed=i),)
""")

_program("operator-attrgetter", (1, 0), """
net = nn.Sequential(nn.Linear(2, 2))
weights = operator.attrgetter("weight", "bias")

def f(x):
    w, b = weights(net[0])
    shape = operator.attrgetter("shape")(x)
    return x @ w.t() + b, shape

def inputs(i):
    return (rand(3, 2, seed=i),)
""")

_program("operator-methodcaller", (0, 0), """
summer = operator.methodcaller("sum", dim=1)
caller = operator.methodcaller("clamp", min=0.0)

def f(x):
    return summer(caller(x)), list(map(operator.methodcaller("upper"), ["a", "b"]))

def inputs(i):
    return (rand(3, 2, seed=i),)
""")

# ---- `in` on ModuleDict / ModuleList / ParameterDict ----

_program("in-moduledict", (1, 0), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"a": nn.Linear(2, 2), "b": nn.Linear(2, 3)})

    def forward(self, x, name):
        if name in self.heads:
            return self.heads[name](x)
        return x

net = Net()

def f(x):
    return net(x, "a"), net(x, "zz"), "b" in net.heads

def inputs(i):
    return (rand(1, 2, seed=i),)
""")

_program("in-modulelist", (1, 0), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
        self.skip = self.layers[1]
        self.other = nn.Linear(2, 2)

    def forward(self, x):
        for layer in self.layers:
            if layer is not self.skip:
                x = layer(x)
        return x, self.skip in self.layers, self.other in self.layers

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(1, 2, seed=i),)
""")

_program("in-parameterdict", (1, 0), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.p = nn.ParameterDict({"scale": nn.Parameter(torch.ones(2)), "shift": nn.Parameter(torch.zeros(2))})

    def forward(self, x):
        if "scale" in self.p:
            x = x * self.p["scale"]
        if "missing" in self.p:
            x = x * 100
        return x + self.p["shift"]

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, seed=i, grad=True),)

def observe():
    return [p.grad for p in net.parameters()]
""")

# ---- class attributes and `del obj.attr` on objects made before the call ----

_program("attrs-class-counter", (1, 2), """
class Counter:
    calls = 0
    history = ()

def f(x):
    Counter.calls += 1
    Counter.history = Counter.history + (Counter.calls,)
    return x * Counter.calls

def inputs(i):
    return (rand(2, seed=i),)

def observe():
    return Counter.calls, Counter.history
""")

_program("attrs-del-attr", (1, 2), """
class Box:
    pass

box = Box()

def inputs(i):
    box.cache = i + 1
    box.keep = "k"
    return (rand(2, seed=i),)

def f(x):
    y = x * box.cache
    del box.cache
    return y, hasattr(box, "cache"), box.keep

def observe():
    return sorted(vars(box))
""")

_program("attrs-module-attr-write", (1, 2), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.steps = 0
        self.last = None

    def forward(self, x):
        self.steps += 1
        y = self.fc(x)
        self.last = y.detach()
        return y

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(1, 2, seed=i),)

def observe():
    return net.steps, net.last
""")

_program("attrs-class-attr-set-del", (0, 0), """
class Config:
    mode = "a"

def f(x):
    Config.mode = "b"
    Config.extra = 3
    y = x + Config.extra
    del Config.extra
    return y, Config.mode, hasattr(Config, "extra")

def inputs(i):
    return (rand(2, seed=i),)

def observe():
    return Config.mode, "extra" in vars(Config)
""")

# ---- returning closures and lambdas made inside ----

_program("closure-lambda", (1, 0), """
def f(x):
    s = x.sum()
    return lambda y: y * s

def inputs(i):
    return (rand(3, seed=i),)

def probe_args():
    return (torch.arange(3.0),)
""")

_program("closure-nested-def", (1, 0), """
def f(x):
    scale = x.abs().max()
    offset = 2

    def apply(y):
        return y / scale + offset

    return apply(x), apply

def inputs(i):
    return (rand(3, seed=i),)

def probe_args():
    return (torch.ones(3),)
""")

_program("closure-nonlocal-counter", (1, 0), """
def f(x):
    count = 0

    def bump(y):
        nonlocal count
        count += 1
        return y + count

    x = bump(bump(x))
    return x, count, bump

def inputs(i):
    return (rand(3, seed=i),)

def probe_args():
    return (torch.zeros(3),)
""")

# ---- logging and dispatch probes ----

_program("probe-log-api-usage", (1, 0), """
def f(x):
    torch._C._log_api_usage_once("construct.probe")
    return x.relu() + 1

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("probe-dispatch-stack", (1, 0), """
from torch.utils._python_dispatch import _len_torch_dispatch_stack

def f(x):
    if _len_torch_dispatch_stack() > 0:
        return x - 100
    return x * 2

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("probe-tracing-scripting", (1, 0), """
def f(x):
    y = x + 1
    if torch._C._get_tracing_state() is not None:
        y = y * 100
    if torch.jit.is_scripting():
        y = y * 100
    if torch.jit.is_tracing():
        y = y * 100
    return y

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("probe-is-compiling", (1, 0), """
def f(x):
    # both branches compute the same: the probe may say either, the result may not change
    if torch.compiler.is_compiling():
        y = x * 2
    else:
        y = x + x
    return y.sin()

def inputs(i):
    return (rand(3, seed=i),)
""")

# ---- a training step in one function ----

_program("train-sgd", (3, 1), """
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

def f(x, y):
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss.detach()

def inputs(i):
    return rand(6, 4, seed=i), rand(6, 1, seed=20 + i)

def observe():
    return [p for p in model.parameters()]
""")

_program("train-adam", (2, 0), """
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
opt = torch.optim.Adam(model.parameters(), lr=0.01)

def f(x, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()

def inputs(i):
    return rand(6, 4, seed=i), torch.arange(6) % 3

def observe():
    return [p for p in model.parameters()]
""")

_program("train-clip-grad", (4, 0), """
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.5)

def f(x, y):
    out = model(x)
    loss = ((out - y) ** 2).mean()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.detach(), norm

def inputs(i):
    return rand(6, 4, seed=i), rand(6, 1, seed=20 + i)

def observe():
    return [p for p in model.parameters()]
""")

_program("train-module-step", (3, 1), """
class Trainer:
    def __init__(self):
        self.model = nn.Linear(3, 2)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=0.05)
        self.loss_fn = nn.MSELoss()
        self.steps = 0

    def step(self, x, y):
        pred = self.model(x)
        loss = self.loss_fn(pred, y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        self.steps += 1
        return loss.detach()

trainer = Trainer()

def f(x, y):
    return trainer.step(x, y)

def inputs(i):
    return rand(4, 3, seed=i), rand(4, 2, seed=30 + i)

def observe():
    return trainer.steps, [p for p in trainer.model.parameters()]
""")

# ---- the environment: a constant with a guard ----

_program("env-get", (1, 1), """
def inputs(i):
    os.environ["JITCORE_CONSTRUCT_MODE"] = "double" if i < 2 else "half"
    return (rand(3, seed=i),)

def f(x):
    mode = os.environ.get("JITCORE_CONSTRUCT_MODE", "none")
    if mode == "double":
        return x * 2
    return x / 2
""")

_program("env-getenv-default", None, """
def inputs(i):
    if i == 2:
        os.environ["JITCORE_CONSTRUCT_SCALE"] = "3"
    else:
        os.environ.pop("JITCORE_CONSTRUCT_SCALE", None)
    return (rand(3, seed=i),)

def f(x):
    return x * int(os.getenv("JITCORE_CONSTRUCT_SCALE", "1"))
""")

_program("env-in-environ", None, """
def inputs(i):
    if i == 1:
        os.environ["JITCORE_CONSTRUCT_FLAG"] = "1"
    else:
        os.environ.pop("JITCORE_CONSTRUCT_FLAG", None)
    return (rand(3, seed=i),)

def f(x):
    if "JITCORE_CONSTRUCT_FLAG" in os.environ:
        return x + 1
    return x - 1
""")

_program("env-in-try-finally", (1, 0), """
def attention(q, k):
    try:
        impl = os.environ.get("JITCORE_CONSTRUCT_ATTN", "sdpa")
        if impl == "sdpa":
            return F.scaled_dot_product_attention(q, k, k)
        return torch.softmax(q @ k.transpose(-1, -2), -1) @ k
    finally:
        pass

def f(q, k):
    return attention(q, k) * 2

def inputs(i):
    return rand(1, 2, 4, 8, seed=i), rand(1, 2, 4, 8, seed=10 + i)
""")

# ---- objects made inside the call are not guarded by identity ----

_program("fresh-loss-module", (1, 0), """
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, labels):
        logits = self.fc(x)
        loss_fct = nn.CrossEntropyLoss()
        loss = loss_fct(logits.view(-1, 3), labels.view(-1))
        return loss, logits

head = Head()

def f(x, labels):
    return head(x, labels)

def inputs(i):
    return rand(5, 4, seed=i, grad=True), (torch.arange(5) + i) % 3
""")

_program("fresh-dataclass", (1, 0), """
@dataclasses.dataclass
class Out:
    value: torch.Tensor
    scale: float = 1.0
    tags: tuple = ()

def f(x):
    out = Out(x * 2, scale=0.5, tags=("a",))
    out.value = out.value * out.scale
    return out.value + len(out.tags), out

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("fresh-config-class", (1, 0), """
class Config:
    def __init__(self, hidden, act="relu"):
        self.hidden = hidden
        self.act = act

    def scale(self):
        return self.hidden ** -0.5

def build(x):
    return Config(x.shape[-1])

def f(x):
    cfg = build(x)
    y = x * cfg.scale()
    if cfg.act == "relu":
        y = torch.relu(y)
    return y

def inputs(i):
    return (rand(2, 4, seed=i),)
""")

_program("fresh-module-in-forward", (1, 0), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        act = nn.GELU()
        drop = nn.Dropout(0.0)
        return drop(act(self.fc(x)))

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 4, seed=i),)
""")

# ---- mixture-of-experts routing ----

_program("moe-topk-where-index-add", (0, 0), """
class MoE(nn.Module):
    def __init__(self, dim=8, experts=4, k=2):
        super().__init__()
        self.k = k
        self.gate = nn.Linear(dim, experts, bias=False)
        self.experts = nn.ModuleList([nn.Linear(dim, dim) for _ in range(experts)])

    def forward(self, x):
        logits = self.gate(x)
        weights, chosen = torch.topk(logits.softmax(-1), self.k, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            token, slot = torch.where(chosen == e)
            if token.numel() == 0:
                continue
            y = expert(x[token]) * weights[token, slot, None]
            out.index_add_(0, token, y)
        return out

moe = MoE()

def f(x):
    return moe(x)

def inputs(i):
    return (rand(6, 8, seed=i, grad=True),)

def observe():
    return [p.grad for p in moe.parameters()]
""")

_program("moe-one-hot-nonzero", (0, 0), """
class MoE(nn.Module):
    def __init__(self, dim=8, experts=3):
        super().__init__()
        self.experts_n = experts
        self.gate = nn.Linear(dim, experts, bias=False)
        self.experts = nn.ModuleList([nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, dim))
                                      for _ in range(experts)])

    def forward(self, x):
        probs = self.gate(x).softmax(-1)
        top_w, top_i = probs.topk(2, dim=-1)
        mask = F.one_hot(top_i, num_classes=self.experts_n).permute(2, 1, 0)
        out = x.new_zeros(x.shape)
        for e in range(self.experts_n):
            slot, token = torch.nonzero(mask[e], as_tuple=True)
            y = self.experts[e](x[token]) * top_w[token, slot].unsqueeze(-1)
            out.index_add_(0, token, y.to(x.dtype))
        return out

moe = MoE()

def f(x):
    return moe(x)

def inputs(i):
    return (rand(5, 8, seed=i),)
""")

_program("moe-dense-where-mask", (1, 0), """
class MoE(nn.Module):
    def __init__(self, dim=4, experts=3):
        super().__init__()
        self.gate = nn.Linear(dim, experts)
        self.experts = nn.ModuleList([nn.Linear(dim, dim) for _ in range(experts)])

    def forward(self, x):
        route = self.gate(x).argmax(-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            mask = (route == e).unsqueeze(-1)
            out = torch.where(mask, expert(x), out)
        return out

moe = MoE()

def f(x):
    return moe(x)

def inputs(i):
    return (rand(7, 4, seed=i, grad=True),)
""")

_program("moe-bincount-loop", (0, 0), """
class MoE(nn.Module):
    def __init__(self, dim=4, experts=3):
        super().__init__()
        self.n = experts
        self.gate = nn.Linear(dim, experts)
        self.experts = nn.ModuleList([nn.Linear(dim, dim) for _ in range(experts)])

    def forward(self, x):
        route = self.gate(x).argmax(-1)
        out = torch.zeros_like(x)
        for e in range(self.n):
            idx = (route == e).nonzero().squeeze(-1)
            out[idx] = self.experts[e](x[idx])
        return out

moe = MoE()

def f(x):
    return moe(x)

def inputs(i):
    return (rand(6, 4, seed=i),)
""")

# ---- harder variants, as libraries write them ----

_program("gen-next-parameters-dtype", (1, 0), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    @property
    def dtype(self):
        return next(self.parameters()).dtype

    def forward(self, x):
        x = x.to(self.dtype)
        device = next(iter(self.buffers()), x).device
        trainable = sum(p.numel() for p in self.parameters() if p.requires_grad)
        return self.fc(x).to(device) * trainable, any(p.requires_grad for p in self.parameters())

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 3, seed=i).double(),)
""")

_program("gen-send-and-return", (1, 0), """
def accumulate():
    total = 0
    while True:
        value = yield total
        if value is None:
            return total
        total = total + value

def f(x):
    acc = accumulate()
    next(acc)
    acc.send(x)
    out = acc.send(x * 2)
    try:
        acc.send(None)
    except StopIteration as stop:
        final = stop.value
    return out, final

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("gen-named-parameters-filter", (1, 0), """
net = nn.Sequential(nn.Linear(3, 3), nn.LayerNorm(3), nn.Linear(3, 2))
net[1].weight.requires_grad_(False)

def f(x):
    decay = [n for n, p in net.named_parameters() if p.ndim >= 2]
    frozen = [n for n, p in net.named_parameters(prefix="net") if not p.requires_grad]
    y = net(x)
    for name, module in net.named_children():
        if isinstance(module, nn.LayerNorm):
            y = y + module.bias.sum()
    return y, decay, frozen

def inputs(i):
    return (rand(2, 3, seed=i),)
""")

_program("gen-returned-generator", (1, 0), """
def pieces(x):
    for row in x:
        yield row * 2

def f(x):
    return list(pieces(x)), tuple(r.sum() for r in pieces(x))

def inputs(i):
    return (rand(3, 2, seed=i),)
""")

_program("autograd-setup-context", (1, 0), """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(x, k):
        return x * x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.save_for_backward(x)
        ctx.k = k

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g * ctx.k, None

def f(x):
    return Square.apply(x, 3).sum()

def inputs(i):
    return (rand(4, seed=i, grad=True),)
""")

_program("autograd-once-differentiable", (1, 0), """
from torch.autograd.function import once_differentiable

class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, s = ctx.saved_tensors
        return g * (s * (1 + x * (1 - s)))

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        for _ in range(2):
            x = Swish.apply(self.fc(x))
        return x

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 3, seed=i, grad=True),)

def observe():
    return net.fc.weight.grad
""")

_program("autograd-two-outputs-materialize", (1, 0), """
class Split(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, ga, gb):
        out = None
        if ga is not None:
            out = ga * 2
        if gb is not None:
            out = gb * 3 if out is None else out + gb * 3
        return out

def f(x):
    a, b = Split.apply(x)
    return a.sum() + 0 * b.detach().sum()

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

_program("ctx-suppress-exitstack", (1, 2), """
LOG = []

class Res:
    def __init__(self, n):
        self.n = n

    def __enter__(self):
        LOG.append(("open", self.n))
        return self

    def __exit__(self, *exc):
        LOG.append(("close", self.n, exc[0] is not None))

def f(x):
    with contextlib.suppress(ZeroDivisionError):
        y = x * 2
        k = 1 / 0
    with contextlib.ExitStack() as stack:
        a = stack.enter_context(Res(1))
        b = stack.enter_context(Res(2))
        z = y + a.n + b.n
    with contextlib.nullcontext(5) as five:
        z = z * five
    return z

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return list(LOG)
""")

_program("ctx-autocast-grad-modes", (1, 0), """
lin = nn.Linear(4, 4)

def f(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = lin(x)
    with torch.set_grad_enabled(False):
        z = y.float() * 2
    with torch.no_grad():
        w = lin(x)
    return y.dtype, z, w, z.requires_grad, torch.is_grad_enabled()

def inputs(i):
    return (rand(2, 4, seed=i),)
""")

_program("ctx-custom-exception-caught", (1, 2), """
class Skip(Exception):
    pass

LOG = []

def check(t, limit):
    if t.shape[0] > limit:
        raise Skip(f"too long: {t.shape[0]}")
    return t

def f(x):
    try:
        y = check(x, 2)
    except Skip as e:
        LOG.append(str(e))
        y = x[:2]
    try:
        raise ValueError("inner")
    except ValueError as e:
        try:
            raise KeyError("k") from e
        except KeyError as k:
            LOG.append((repr(k), type(k.__cause__).__name__))
    return y * 2

def inputs(i):
    return (rand(3, 2, seed=i),)

def observe():
    return list(LOG)
""")

_program("ctx-finally-on-raise", None, """
LOG = []

@contextlib.contextmanager
def timer(name):
    LOG.append("start " + name)
    try:
        yield
    except Exception as e:
        LOG.append("failed " + type(e).__name__)
        raise
    finally:
        LOG.append("stop " + name)

def g(x):
    with timer("g"):
        return x[10]

def f(x):
    y = x + 1
    try:
        with timer("f"):
            z = g(y)
    except IndexError as e:
        z = y.sum()
        LOG.append(str(e))
    return z

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return list(LOG)
""")

_program("str-more-formats", (1, 0), """
def f(x):
    n = x.numel()
    ratio = n / 7
    text = ["%.2f" % ratio, "{:,}".format(n * 1000), f"{n!s:>6}", f"{ratio:.1%}", str(x.shape), "{}".format(x.shape),
            " ".join(map(str, x.shape)), str([1, 2]), str({"a": 1}), f"{x.dtype}", f"{x.device}",
            str(torch.float16), "{:08.3f}".format(ratio), f"{'s':*^5}", hex(n), str(-0.0), repr(1e-20), str(2**70)]
    print(" | ".join(text))
    return x.sum() * len(text)

def inputs(i):
    return (rand(2, 3, seed=i),)
""")

_program("str-repr-of-objects", (1, 0), """
import collections
Point = collections.namedtuple("Point", "x y")

@dataclasses.dataclass
class Cfg:
    dim: int
    name: str = "m"

def f(x):
    p = Point(1, 2.5)
    c = Cfg(x.shape[0])
    print(repr(p), str(c), repr((1, "a", None)), repr([x.shape[0], 2.0]))
    return x + p.x

def inputs(i):
    return (rand(2, seed=i),)
""")

_program("operator-sorted-reduce", (1, 0), """
import functools

def f(x):
    pairs = [("b", x * 2), ("a", x + 1), ("c", x - 1)]
    ordered = sorted(pairs, key=operator.itemgetter(0))
    total = functools.reduce(operator.add, map(operator.itemgetter(1), ordered))
    nested = operator.attrgetter("real.shape")(x)
    pick = operator.itemgetter(slice(1, None))(x)
    return total, [k for k, _ in ordered], nested, operator.mul(pick, 2), operator.getitem(x, 0)

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("in-modules-dicts", (1, 0), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(2, 2)
        self.heads = nn.ModuleDict({"cls": nn.Linear(2, 3)})
        self.pl = nn.ParameterList([nn.Parameter(torch.ones(2))])

    def forward(self, x, task):
        y = self.enc(x)
        if "enc" in self._modules and "dec" not in dict(self.named_children()):
            y = y * 2
        if task in self.heads.keys():
            y = self.heads[task](y)
        if hasattr(self.heads, "reg"):
            y = y * 100
        return y, len(self.pl), "cls" in self.heads

net = Net()

def f(x):
    return net(x, "cls")

def inputs(i):
    return (rand(1, 2, seed=i),)
""")

_program("attrs-class-registry", (1, 2), """
class Registry:
    seen = []
    table = {}

class Layer(nn.Module):
    count = 0

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        type(self).count += 1
        Registry.seen.append(type(self).count)
        Registry.table["last"] = type(self).count
        return self.fc(x)

layer = Layer()

def f(x):
    return layer(x)

def inputs(i):
    return (rand(1, 2, seed=i),)

def observe():
    return Layer.count, list(Registry.seen), dict(Registry.table)
""")

_program("attrs-delattr-setattr-dynamic", (1, 2), """
class State:
    def __init__(self):
        self.a = 1
        self.b = 2

state = State()

def inputs(i):
    if not hasattr(state, "a"):
        state.a = 1
    return (rand(2, seed=i), "b" if i == 1 else "c")

def f(x, name):
    setattr(state, name, x.sum())
    delattr(state, "a")
    if hasattr(state, "c"):
        del state.c
    return x * state.b

def observe():
    return sorted(vars(state))
""")

_program("attrs-del-module-cache", (1, 0), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.cache = None

    def forward(self, x):
        y = self.fc(x)
        if self.cache is not None:
            y = y + self.cache
        self.cache = y.detach()
        return y

net = Net()

def f(x):
    out = net(x)
    del net.cache
    net.cache = None
    return out

def inputs(i):
    return (rand(1, 2, seed=i),)

def observe():
    return "cache" in vars(net), net.cache
""")

_program("closure-late-binding-partial", (1, 0), """
import functools

def scale(y, k, offset=0):
    return y * k + offset

def f(x):
    fns = [lambda y: y * i for i in range(3)]
    part = functools.partial(scale, k=x.sum(), offset=1)
    return [fn(x) for fn in fns], part(x)

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("closure-decorator-made-inside", (1, 2), """
LOG = []

def f(x):
    def logged(fn):
        def wrapper(*args):
            LOG.append(fn.__name__)
            return fn(*args)
        return wrapper

    @logged
    def double(t):
        return t * 2

    return double(x), double

def inputs(i):
    return (rand(3, seed=i),)

def probe_args():
    return (torch.ones(2),)

def observe():
    return list(LOG)
""")

_program("closure-captures-module", (0, 0), """
net = nn.Linear(3, 3)

def f(x):
    w = net.weight
    def head(y):
        return F.linear(y, w) + x.sum()
    return head

def inputs(i):
    return (rand(3, seed=i),)

def probe_args():
    return (torch.ones(3),)
""")

_program("probe-library-probes", (2, 0), """
import logging
import warnings
logger = logging.getLogger("construct.probe")

def f(x):
    y = x * 2
    if torch.fx._symbolic_trace.is_fx_tracing():
        y = y * 100
    if torch._dynamo.is_compiling() and False:
        y = y * 100
    if logger.isEnabledFor(logging.DEBUG):
        y = y * 100
    if torch.overrides.has_torch_function((x,)):
        y = y * 100
    if torch.are_deterministic_algorithms_enabled():
        y = y * 100
    if not torch.cuda.is_available():
        y = y + 1
    return y, torch.get_default_dtype(), torch.is_grad_enabled()

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("probe-warnings-logging", (0, 0), """
import logging
import warnings
logger = logging.getLogger("construct.warn")

def f(x):
    torch._C._log_api_usage_once("python.construct")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("deprecated thing")
    logger.debug("not shown %s", x.shape)
    return x.relu() + len(caught)

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("train-manual-sgd-accumulate", (0, 0), """
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))

def f(x, y):
    for chunk_x, chunk_y in zip(x.chunk(2), y.chunk(2)):
        loss = F.mse_loss(model(chunk_x), chunk_y) / 2
        loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.1 * p.grad
            p.grad = None
    return loss.detach()

def inputs(i):
    return rand(4, 3, seed=i), rand(4, 1, seed=20 + i)

def observe():
    return [p for p in model.parameters()]
""")

_program("train-scheduler-dropout", (4, 2), """
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=0.01)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)

def f(x, y):
    model.train()
    logits = model(x)
    loss = nn.CrossEntropyLoss()(logits, y)
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_value_(model.parameters(), 0.1)
    opt.step()
    sched.step()
    return loss.detach(), opt.param_groups[0]["lr"]

def inputs(i):
    return rand(5, 3, seed=i), torch.arange(5) % 2

def observe():
    return [p for p in model.parameters()]
""")

_program("env-subscript-setdefault", (1, 1), """
def inputs(i):
    os.environ["JITCORE_CONSTRUCT_LEVEL"] = str(i + 1)
    os.environ.pop("JITCORE_CONSTRUCT_NEW", None)
    return (rand(3, seed=i),)

def f(x):
    level = int(os.environ["JITCORE_CONSTRUCT_LEVEL"])
    os.environ.setdefault("JITCORE_CONSTRUCT_NEW", "set")
    flag = os.environ.get("JITCORE_CONSTRUCT_NEW") == "set"
    return x * level, flag

def observe():
    return os.environ.get("JITCORE_CONSTRUCT_NEW")
""")

_program("env-bool-flag-in-module", (1, 1), """
def use_fast():
    return os.environ.get("JITCORE_CONSTRUCT_FAST", "0").lower() in ("1", "true", "yes")

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        y = self.fc(x)
        if use_fast():
            return torch.relu(y)
        return F.gelu(y)

net = Net()

def inputs(i):
    os.environ["JITCORE_CONSTRUCT_FAST"] = "true" if i == 2 else "0"
    return (rand(2, 3, seed=i),)

def f(x):
    return net(x)
""")

_program("fresh-namespace-namedtuple", (2, 0), """
import collections
import types
Pair = collections.namedtuple("Pair", ["a", "b"])

def f(x):
    ns = types.SimpleNamespace(scale=2.0, shift=x.mean())
    cfg = {"k": 3, "mode": "sum"}
    p = Pair(x * ns.scale, x + ns.shift)
    out = p.a + p.b if cfg["mode"] == "sum" else p.a
    return out * cfg["k"], p

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("fresh-dataclass-post-init", (2, 0), """
@dataclasses.dataclass
class Batch:
    x: torch.Tensor
    mask: torch.Tensor = None
    names: list = dataclasses.field(default_factory=list)

    def __post_init__(self):
        if self.mask is None:
            self.mask = torch.ones_like(self.x, dtype=torch.bool)

def f(x):
    b = Batch(x)
    b2 = dataclasses.replace(b, x=x * 2)
    b2.names.append("r")
    return torch.where(b2.mask, b2.x, 0), b2.names, dataclasses.asdict(b)["x"].sum()

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("fresh-loss-kwargs-per-call", (1, 0), """
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 5)

    def forward(self, x, labels):
        logits = self.fc(x)
        loss = nn.CrossEntropyLoss(ignore_index=-100, label_smoothing=0.1)(logits, labels)
        mse = nn.MSELoss(reduction="sum")(logits.softmax(-1), F.one_hot(labels.clamp(min=0), 5).float())
        return loss + mse

head = Head()

def f(x, labels):
    return head(x, labels)

def inputs(i):
    labels = torch.arange(4) % 5
    labels[i] = -100
    return rand(4, 4, seed=i, grad=True), labels

def observe():
    return head.fc.weight.grad
""")

_program("moe-mixtral-style", (4, 0), """
class Expert(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w1 = nn.Linear(d, 2 * d, bias=False)
        self.w2 = nn.Linear(2 * d, d, bias=False)
        self.w3 = nn.Linear(d, 2 * d, bias=False)

    def forward(self, h):
        return self.w2(F.silu(self.w1(h)) * self.w3(h))

class SparseMoe(nn.Module):
    def __init__(self, d=8, n=4, k=2):
        super().__init__()
        self.n, self.k = n, k
        self.gate = nn.Linear(d, n, bias=False)
        self.experts = nn.ModuleList([Expert(d) for _ in range(n)])

    def forward(self, hidden):
        b, s, d = hidden.shape
        hidden = hidden.view(-1, d)
        logits = self.gate(hidden)
        weights = F.softmax(logits, dim=1, dtype=torch.float)
        weights, selected = torch.topk(weights, self.k, dim=-1)
        weights /= weights.sum(dim=-1, keepdim=True)
        weights = weights.to(hidden.dtype)
        final = torch.zeros((b * s, d), dtype=hidden.dtype, device=hidden.device)
        expert_mask = F.one_hot(selected, num_classes=self.n).permute(2, 1, 0)
        expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
        for expert_idx in expert_hit:
            expert = self.experts[expert_idx]
            idx, top_x = torch.where(expert_mask[expert_idx].squeeze(0))
            current = hidden[None, top_x].reshape(-1, d)
            current = expert(current) * weights[top_x, idx, None]
            final.index_add_(0, top_x, current.to(hidden.dtype))
        return final.reshape(b, s, d), logits

moe = SparseMoe()

def f(x):
    return moe(x)

def inputs(i):
    return (rand(2, 3, 8, seed=i),)
""")

_program("moe-shared-expert-sigmoid", (2, 2), """
class Moe(nn.Module):
    def __init__(self, d=6, n=3):
        super().__init__()
        self.n = n
        self.gate = nn.Linear(d, n, bias=False)
        self.experts = nn.ModuleList([nn.Linear(d, d) for _ in range(n)])
        self.shared = nn.Linear(d, d)
        self.shared_gate = nn.Linear(d, 1, bias=False)

    def forward(self, h):
        probs = self.gate(h).softmax(-1)
        w, sel = probs.max(-1)
        out = torch.zeros_like(h)
        counts = torch.bincount(sel, minlength=self.n).tolist()
        order = torch.argsort(sel)
        chunks = h[order].split(counts)
        start = 0
        for e, chunk in enumerate(chunks):
            if chunk.shape[0] == 0:
                continue
            rows = order[start:start + chunk.shape[0]]
            out[rows] = self.experts[e](chunk) * w[rows, None]
            start += chunk.shape[0]
        shared = torch.sigmoid(self.shared_gate(h)) * self.shared(h)
        return out + shared

moe = Moe()

def f(x):
    return moe(x)

def inputs(i):
    return (rand(7, 6, seed=i),)
""")

# ---- more edges: early generator close, nested modes, property deleters, late-bound defaults ----

_program("gen-close-runs-finally", (1, 2), """
LOG = []

def rows(x):
    try:
        for r in x:
            LOG.append("yield")
            yield r
    finally:
        LOG.append("closed")

def f(x):
    out = []
    for r in rows(x):
        out.append(r * 2)
        if len(out) == 2:
            break
    return torch.stack(out)

def inputs(i):
    return (rand(4, 2, seed=i),)

def observe():
    return list(LOG)
""")

_program("autograd-mark-dirty", (1, 0), """
class AddOne(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 3

def f(a):
    x = a * 1
    y = AddOne.apply(x)
    return y * 2

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

_program("ctx-inference-mode-decorator", (2, 0), """
@torch.inference_mode()
def embed(x):
    return x * 3

def f(x):
    y = embed(x)
    with torch.inference_mode(False):
        z = x + 1
    return y.is_inference(), z.is_inference(), y + 0, z

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("ctx-exit-raises-other", None, """
LOG = []

@contextlib.contextmanager
def convert():
    try:
        yield
    except KeyError as e:
        LOG.append("convert")
        raise ValueError(f"converted {e}") from e

def f(x):
    try:
        with convert():
            y = x * 2
            {}["missing"]
    except ValueError as e:
        LOG.append(str(e))
        y = x - 1
    return y

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return list(LOG)
""")

_program("str-float-reprs", (1, 0), """
def f(x):
    n = x.shape[0]
    vals = [n / 3, float("inf"), 1e16, 0.1 + 0.2, -n / 7]
    text = [str(v) for v in vals] + [repr(v) for v in vals] + ["{:.3e}".format(n / 3), format(True), f"{n / 3!r}",
            f"{float('nan')}", "%r %s %5.1f" % (n, n / 2, n / 3), str(x.shape[0] // 2), ascii("é")]
    print(*text)
    return x * len(text)

def inputs(i):
    return (rand(4, seed=i),)
""")

_program("operator-methodcaller-dict", (1, 1), """
get_a = operator.methodcaller("get", "a", 0)
pop_b = operator.methodcaller("pop", "b", None)

def f(x, d):
    return x * get_a(d), pop_b(d), sorted(d)

def inputs(i):
    return rand(2, seed=i), {"a": i + 1, "b": 2, "c": 3}
""")

_program("attrs-property-deleter", (1, 2), """
class Holder:
    def __init__(self):
        self._v = 1
        self.log = []

    @property
    def v(self):
        return self._v

    @v.deleter
    def v(self):
        self.log.append("del")
        self._v = 0

holder = Holder()

def f(x):
    y = x * holder.v
    del holder.v
    holder.__class__.tag = "t"
    return y + holder.v, Holder.tag

def inputs(i):
    holder._v = i + 1
    return (rand(2, seed=i),)

def observe():
    return holder._v, list(holder.log)
""")

_program("closure-default-arg-binding", (1, 0), """
def f(x):
    fns = [lambda y, k=k: y * k for k in range(3)]
    total = sum(fn(x) for fn in fns)
    return total, fns[2]

def inputs(i):
    return (rand(3, seed=i),)

def probe_args():
    return (torch.ones(3),)
""")

_program("probe-more-state", (2, 0), """
from torch.utils._python_dispatch import is_in_torch_dispatch_mode

def f(x):
    y = x + 1
    if is_in_torch_dispatch_mode():
        y = y * 100
    if torch._C._is_any_autocast_enabled():
        y = y * 100
    if torch.backends.cudnn.enabled and torch.backends.mkldnn.is_available():
        y = y * 2
    return y, torch.get_num_threads() > 0

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("train-retain-graph-twice", (3, 2), """
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1, nesterov=True, momentum=0.5)

def f(x):
    model.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward(retain_graph=True)
    loss.backward()
    opt.step()
    return loss.detach(), model.weight.grad.clone()

def inputs(i):
    return (rand(4, 3, seed=i),)

def observe():
    return [p for p in model.parameters()]
""")

_program("env-set-inside", (1, 0), """
def inputs(i):
    os.environ.pop("JITCORE_CONSTRUCT_INSIDE", None)
    return (rand(3, seed=i),)

def f(x):
    before = os.environ.get("JITCORE_CONSTRUCT_INSIDE")
    os.environ["JITCORE_CONSTRUCT_INSIDE"] = "on"
    after = os.getenv("JITCORE_CONSTRUCT_INSIDE")
    return x + (1 if after == "on" else 0), before, after

def observe():
    return os.environ.get("JITCORE_CONSTRUCT_INSIDE")
""")

_program("fresh-slots-ordereddict", (1, 0), """
import collections

class Spec:
    __slots__ = ("dim", "act")

    def __init__(self, dim, act):
        self.dim = dim
        self.act = act

def f(x):
    spec = Spec(x.shape[-1], "tanh")
    table = collections.OrderedDict()
    table["b"] = x * 2
    table["a"] = getattr(torch, spec.act)(x)
    table.move_to_end("b")
    return list(table), table["a"] * spec.dim, table

def inputs(i):
    return (rand(2, 3, seed=i),)
""")

_program("moe-scatter-add-capacity", (1, 0), """
class MoE(nn.Module):
    def __init__(self, d=4, n=2):
        super().__init__()
        self.n = n
        self.gate = nn.Linear(d, n)
        self.w = nn.Parameter(torch.randn(n, d, d) * 0.1)

    def forward(self, x):
        probs = self.gate(x).softmax(-1)
        route = probs.argmax(-1)
        hot = F.one_hot(route, self.n).float()
        per_expert = torch.einsum("te,td->etd", hot, x)
        y = torch.einsum("etd,edk->etk", per_expert, self.w)
        out = y.sum(0) * probs.gather(1, route[:, None])
        load = torch.zeros(self.n).scatter_add_(0, route, torch.ones_like(route, dtype=torch.float))
        return out, load

moe = MoE()

def f(x):
    return moe(x)

def inputs(i):
    return (rand(6, 4, seed=i, grad=True),)

def observe():
    return moe.w.grad
""")

# ---- variants by another hand (session 10): loops around a break, resumed ----
# `if t.abs().sum() >= 0` is a branch on a tensor's value: a break for jitcore and torch.compile alike.

_program("loop-nested-break-inner", (0, 0), """
def f(x, ws):
    for w in ws:
        for k in range(2):
            x = x * w + k
            if x.abs().sum() >= 0:
                x = x.sin()
    return x

def inputs(i):
    return rand(3, seed=i), [rand(3, seed=10 + j) for j in range(3)]
""")

_program("loop-while-counter-break", (4, 0), """
def f(x):
    n = 0
    while True:
        x = x * 0.9 + 0.1
        if x.abs().sum() >= 0:
            n += 1
        if n >= 3:
            break
    return x, n

def inputs(i):
    return (rand(4, seed=i),)
""")

_program("loop-for-else", (1, 0), """
def find(xs, limit):
    for idx, t in enumerate(xs):
        t = t * 2
        if t.abs().sum() >= 0:
            t = t + 1
        if idx == limit:
            found = t
            break
    else:
        found = None
    return found

def f(x):
    xs = [x * k for k in range(4)]
    a = find(xs, 2)
    b = find(xs, 9)
    return a, b is None

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("loop-try-in-body", (0, 0), """
def f(x, keys):
    table = {"a": 1.0, "b": 2.0}
    for key in keys:
        try:
            x = x * table[key]
            if x.abs().sum() >= 0:
                x = x + 1
        except KeyError:
            x = x - 1
    return x

def inputs(i):
    return rand(3, seed=i), ["a", "zz", "b"]
""")

_program("loop-comprehension-branch", (2, 0), """
def g(t):
    if t.abs().sum() >= 0:
        return t.cos()
    return t

def f(x):
    parts = [g(t) * i for i, t in enumerate(x.unbind(0))]
    return torch.stack(parts).sum(0)

def inputs(i):
    return (rand(3, 4, seed=i),)
""")

_program("loop-next-before-loop", (0, 0), """
layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(4)])

def f(x):
    it = iter(layers)
    first = next(it)
    x = first(x)
    for layer in it:
        x = layer(x)
        if x.abs().sum() >= 0:
            x = torch.relu(x)
    return x

def inputs(i):
    return (rand(2, 4, seed=i),)
""")

_program("loop-enumerate-zip-start", (0, 0), """
def f(x, ws, bs):
    for i, (w, b) in enumerate(zip(ws, bs), start=1):
        x = x * w + b * i
        if x.abs().sum() >= 0:
            x = x.tanh()
    return x

def inputs(i):
    return rand(3, seed=i), [rand(3, seed=10 + j) for j in range(3)], (0.5, 1.5, -1.0)
""")

_program("loop-dict-items-mutated-after", (0, 0), """
state = {"a": 1.0, "b": 2.0, "c": 3.0}

def f(x):
    total = x
    for name, scale in state.items():
        total = total * scale
        if total.abs().sum() >= 0:
            total = total - 1
    state["seen"] = state.get("seen", 0) + 1
    return total, sorted(state)

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return dict(state)
""")

_program("loop-sequential-break-in-block", (2, 0), """
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        if y.abs().sum() >= 0:
            y = y.relu()
        return x + y

net = nn.Sequential(*[Block() for _ in range(5)])

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 4, seed=i, grad=True),)

def observe():
    return [p.grad for p in net.parameters()]
""")

_program("loop-moduledict-items-break", (0, 0), """
class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "box": nn.Linear(4, 4), "obj": nn.Linear(4, 1)})

    def forward(self, x):
        out = {}
        for name, head in self.heads.items():
            y = head(x)
            if y.abs().sum() >= 0:
                y = y.sigmoid()
            out[name] = y
        return out

net = Heads()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 4, seed=i),)
""")

_program("loop-reversed-modulelist", (0, 0), """
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.ups = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x, skips):
        for up, skip in zip(reversed(self.ups), reversed(skips)):
            x = up(x) + skip
            if x.abs().sum() >= 0:
                x = F.gelu(x)
        return x

net = Decoder()

def f(x, skips):
    return net(x, skips)

def inputs(i):
    return rand(2, 4, seed=i), [rand(2, 4, seed=20 + j) for j in range(3)]
""")

_program("loop-range-step-break-continue", (0, 0), """
def f(x):
    acc = []
    for k in range(10, 0, -3):
        if k == 4:
            continue
        y = x * k
        if y.abs().sum() >= 0:
            y = y.exp()
        acc.append(y)
        if len(acc) == 3:
            break
    return torch.stack(acc), k

def inputs(i):
    return (rand(2, seed=i),)
""")

# ---- variants: torch.autograd.Function ----

_program("autograd-called-twice-chain", (1, 0), """
class ScaledTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        y = torch.tanh(x) * scale
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        gx = g * (ctx.scale - y * y / ctx.scale) if ctx.needs_input_grad[0] else None
        return gx, None

def f(x, w):
    h = ScaledTanh.apply(x @ w, 2.0)
    return ScaledTanh.apply(h, 0.5).sum(-1)

def inputs(i):
    return rand(3, 4, seed=i, grad=True), rand(4, 4, seed=9, grad=True)
""")

_program("autograd-once-diff-mark-nondiff", (1, 0), """
from torch.autograd.function import once_differentiable

class TopOne(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim):
        values, idx = x.max(dim=dim, keepdim=True)
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        ctx.dim = dim
        ctx.shape = x.shape
        return values, idx

    @staticmethod
    @once_differentiable
    def backward(ctx, gv, gi):
        (idx,) = ctx.saved_tensors
        out = gv.new_zeros(ctx.shape)
        out.scatter_(ctx.dim, idx, gv)
        return out, None

def f(x):
    v, i = TopOne.apply(x, 1)
    v2, _ = TopOne.apply(x * 2, 0)
    return v.sum() + v2.sum(), i.squeeze(1), i.requires_grad

def inputs(i):
    return (rand(3, 5, seed=i, grad=True),)
""")

_program("autograd-in-layer-loop", (1, 0), """
class SiluFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return g * (s * (1 + x * (1 - s)))

class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = SiluFn.apply(layer(x))
        return x

net = Mlp()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 4, seed=i, grad=True),)

def observe():
    return [p.grad for p in net.parameters()]
""")

_program("autograd-helper-in-forward", (1, 0), """
def _norm(x, eps):
    return x / (x.norm(dim=-1, keepdim=True) + eps)

class Normalize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, eps=1e-6):
        y = _norm(x, eps)
        ctx.save_for_backward(x, y)
        ctx.eps = eps
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        n = x.norm(dim=-1, keepdim=True) + ctx.eps
        return (g - y * (g * y).sum(-1, keepdim=True)) / n, None

def f(x):
    return Normalize.apply(x) * 3, Normalize.apply(x + 1, 1e-3)

def inputs(i):
    return (rand(2, 3, seed=i, grad=True),)
""")

# ---- variants: generators ----

_program("gen-send-close-finally", (1, 2), """
LOG = []

def accumulator(x):
    total = x * 0
    try:
        while True:
            v = yield total
            total = total + v
    finally:
        LOG.append("closed")

def f(x):
    acc = accumulator(x)
    next(acc)
    acc.send(x)
    out = acc.send(x * 2)
    acc.close()
    return out

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return list(LOG)
""")

_program("gen-yield-from-tree", (1, 0), """
def leaves(tree):
    if isinstance(tree, (list, tuple)):
        for item in tree:
            yield from leaves(item)
    else:
        yield tree

def f(x):
    tree = [x, (x * 2, [x + 1, x - 1]), [[x.sin()]]]
    flat = list(leaves(tree))
    return torch.stack(flat).sum(0), len(flat)

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("gen-modules-filter-types", (1, 0), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.ReLU(), nn.Linear(4, 2), nn.Dropout(0.1))

    def forward(self, x):
        rates = [m.p for m in self.modules() if isinstance(m, nn.Dropout)]
        names = [n for n, m in self.named_modules() if isinstance(m, (nn.Linear, nn.ReLU))]
        first = next(iter(self.buffers()), None)
        dtype = next(self.parameters()).dtype
        trainable = any(p.requires_grad for p in self.parameters())
        return self.body(x).to(dtype), rates, names, first is None, trainable

net = Net().eval()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 4, seed=i),)
""")

_program("gen-params-in-loss", (1, 0), """
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

def f(x):
    out = net(x)
    l2 = sum((p ** 2).sum() for n, p in net.named_parameters() if "weight" in n)
    l1 = sum(p.abs().sum() for p in net.parameters() if p.ndim == 1)
    return out.sum() + 1e-3 * l2 + 1e-4 * l1

def inputs(i):
    return (rand(3, 4, seed=i),)

def observe():
    return [p.grad for p in net.parameters()]
""")

# ---- variants: context managers ----

_program("ctx-cm-converts-exception", (1, 2), """
LOG = []

@contextlib.contextmanager
def converting():
    try:
        yield
    except ValueError as e:
        LOG.append("convert")
        raise RuntimeError("wrapped: " + str(e)) from e

def f(x):
    y = x * 2
    try:
        with converting():
            y = y + 1
            if x.shape[0] == 3:
                raise ValueError("three")
    except RuntimeError as e:
        LOG.append(str(e))
        y = y - 1
    return y

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return list(LOG)
""")

_program("ctx-exitstack-callback", (1, 2), """
LOG = []

@contextlib.contextmanager
def scope(name):
    LOG.append("enter " + name)
    yield name.upper()
    LOG.append("exit " + name)

def f(x):
    with contextlib.ExitStack() as stack:
        names = [stack.enter_context(scope(n)) for n in ("a", "b")]
        stack.callback(LOG.append, "callback")
        y = x * len(names)
    return y, names

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return list(LOG)
""")

_program("ctx-suppress-nullcontext", (1, 0), """
def f(x, use_nograd):
    table = {"a": 2.0}
    scale = 1.0
    with contextlib.suppress(KeyError):
        scale = table["missing"]
    with contextlib.suppress(KeyError, IndexError):
        scale = scale * table["a"]
    cm = torch.no_grad() if use_nograd else contextlib.nullcontext()
    with cm:
        y = x * scale
    return y, y.requires_grad

def inputs(i):
    return rand(3, seed=i, grad=True), False
""")

_program("ctx-grad-modes-nested", (1, 0), """
def f(x, flag):
    with torch.set_grad_enabled(flag):
        a = x * 2
        with torch.no_grad():
            b = x * 3
            with torch.enable_grad():
                c = x * 4
            d = x * 5
        with torch.set_grad_enabled(not flag):
            e = x * 6
    return a + c, (a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad, e.requires_grad)

def inputs(i):
    return rand(3, seed=i, grad=True), True
""")

_program("ctx-autocast-cpu-bf16", (1, 0), """
lin = nn.Linear(4, 4)

def f(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = lin(x)
        z = y @ y.t()
        dtype_in = y.dtype
    return z.float(), dtype_in, (x + 1).dtype

def inputs(i):
    return (rand(3, 4, seed=i),)
""")

_program("ctx-class-exit-swallows", (1, 2), """
LOG = []

class Ignore:
    def __init__(self, kind):
        self.kind = kind

    def __enter__(self):
        LOG.append("enter")
        return self

    def __exit__(self, kind, value, tb):
        LOG.append("exit " + (kind.__name__ if kind else "none"))
        return kind is not None and issubclass(kind, self.kind)

def f(x):
    y = x + 1
    with Ignore(ZeroDivisionError):
        y = y * 2
        k = 1 / 0
        y = y * 100
    with Ignore(ZeroDivisionError):
        y = y - 1
    return y

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return list(LOG)
""")

# ---- variants: a training step in one function ----

_program("train-sgd-nesterov-set-to-none", (3, 1), """
model = nn.Sequential(nn.Linear(4, 6), nn.GELU(), nn.Linear(6, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)

def f(x, y):
    opt.zero_grad(set_to_none=True)
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    return loss.detach(), logits.argmax(-1)

def inputs(i):
    return rand(5, 4, seed=i), torch.arange(5) % 2

def observe():
    return [p for p in model.parameters()]
""")

_program("train-adamw-clip-scheduler", (4, 2), """
model = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 1))
opt = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.01)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)

def f(x, y):
    pred = model(x)
    loss = F.smooth_l1_loss(pred, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
    sched.step()
    opt.zero_grad()
    return loss.detach(), opt.param_groups[0]["lr"]

def inputs(i):
    return rand(4, 3, seed=i), rand(4, 1, seed=40 + i)

def observe():
    return [p for p in model.parameters()]
""")

_program("train-two-models-one-loss", (4, 0), """
enc = nn.Linear(4, 3)
head = nn.Linear(3, 2)
opt = torch.optim.Adam(list(enc.parameters()) + list(head.parameters()), lr=0.01)

def f(x, y):
    z = enc(x)
    out = head(torch.relu(z))
    loss = F.mse_loss(out, y) + 0.01 * z.pow(2).mean()
    loss.backward()
    for p in enc.parameters():
        p.grad.mul_(0.5)
    opt.step()
    opt.zero_grad()
    return loss.detach()

def inputs(i):
    return rand(4, 4, seed=i), rand(4, 2, seed=50 + i)

def observe():
    return [p for p in enc.parameters()] + [p for p in head.parameters()]
""")

# ---- variants: str / repr / format ----

_program("str-fstring-conversions", (1, 0), """
class Cfg:
    def __init__(self, d):
        self.d = d

    def __repr__(self):
        return f"Cfg(d={self.d!r})"

def f(x):
    cfg = Cfg(x.shape[-1])
    name = "attn"
    n = 1234567
    v = 3.14159
    text = f"{name!r:>8}|{cfg}|{cfg!s}|{v:08.3f}|{n:,}|{name:^10}|{n:#x}|{v:.1%}|{True!s}"
    print(text)
    return x * len(text), text

def inputs(i):
    return (rand(2, 3, seed=i),)
""")

_program("str-percent-and-format-method", (1, 0), """
def f(x):
    rows, cols = x.shape
    a = "%s x %d = %.2f" % ("shape", rows, cols * 1.5)
    b = "{0}-{1}-{0}".format(rows, cols)
    c = "{name}:{val:>5}".format(name="k", val=cols)
    d = ", ".join(repr(s) for s in ("a", 1, None, 2.5))
    e = str([rows, (cols, "z")]) + repr({"k": rows})
    print(a, b, c, d, e, sep=" | ")
    return x + len(a + b + c + d + e)

def inputs(i):
    return (rand(2, 3, seed=i),)
""")

# ---- variants: functools ----

_program("func-partial-kwargs", (1, 0), """
import functools

def scaled(x, scale=1.0, shift=0.0):
    return x * scale + shift

act = functools.partial(F.gelu, approximate="tanh")

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.post = functools.partial(scaled, scale=2.0)

    def forward(self, x):
        inner = functools.partial(scaled, shift=x.shape[0])
        return self.post(act(self.fc(x)), shift=1.0) + inner(x)

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 3, seed=i),)
""")

_program("func-wraps-decorator", (1, 2), """
import functools

CALLS = []

def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        CALLS.append(wrapper.__name__)
        return fn(*args, **kwargs)
    return wrapper

@traced
def attention(q, k, scale=None):
    scale = scale or q.shape[-1] ** -0.5
    return (q @ k.transpose(-1, -2) * scale).softmax(-1)

def f(q, k):
    return attention(q, k), attention(q, k, scale=0.1), attention.__name__, attention.__wrapped__ is not None

def inputs(i):
    return rand(2, 3, 4, seed=i), rand(2, 3, 4, seed=10 + i)

def observe():
    return list(CALLS)
""")

_program("func-lru-cache-helper", (1, 0), """
import functools

@functools.lru_cache(maxsize=None)
def rotary_dims(n, base):
    return tuple(base ** (-2 * k / n) for k in range(n // 2))

def f(x):
    freqs = torch.tensor(rotary_dims(x.shape[-1], 10000.0))
    angles = x[..., : x.shape[-1] // 2] * freqs
    return torch.cat([angles.sin(), angles.cos()], -1)

def inputs(i):
    return (rand(2, 4, seed=i),)
""")

# ---- variants: objects made inside ----

_program("fresh-frozen-dataclass-factory", (1, 0), """
@dataclasses.dataclass(frozen=True)
class Out:
    logits: torch.Tensor
    aux: list = dataclasses.field(default_factory=list)
    tag: str = "out"

def f(x):
    out = Out(x.softmax(-1), [x.mean()])
    try:
        out.tag = "changed"
    except dataclasses.FrozenInstanceError:
        pass
    out2 = dataclasses.replace(out, tag="second")
    return out2, out.aux[0] * 2

def inputs(i):
    return (rand(2, 3, seed=i, grad=True),)
""")

_program("fresh-namedtuple-output", (1, 0), """
from typing import NamedTuple, Optional

class Output(NamedTuple):
    hidden: torch.Tensor
    pooled: torch.Tensor
    attn: Optional[torch.Tensor] = None

def f(x):
    out = Output(x * 2, x.mean(0))
    out = out._replace(attn=x.softmax(-1))
    hidden, pooled, attn = out
    return out, hidden.sum() + pooled.sum(), out._fields, out.attn.shape

def inputs(i):
    return (rand(3, 4, seed=i, grad=True),)
""")

# ---- variants: module attributes, hooks, super() chains, __call__ ----

_program("attrs-getattr-fstring-layers", (1, 0), """
class Net(nn.Module):
    def __init__(self, n=3):
        super().__init__()
        self.n = n
        for i in range(n):
            setattr(self, f"layer{i}", nn.Linear(4, 4))

    def forward(self, x):
        for i in range(self.n):
            x = getattr(self, f"layer{i}")(x).relu()
        return x, hasattr(self, "layer9")

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 4, seed=i),)
""")

_program("attrs-setattr-self-in-forward", (1, 2), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        self.last_shape = tuple(x.shape)
        setattr(self, "last_mode", "train" if self.training else "eval")
        return self.fc(x) * self.calls

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 3, seed=i),)

def observe():
    return net.calls, net.last_shape, net.last_mode
""")

_program("attrs-register-buffer-in-forward", (1, 1), """
class Cache(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        if not hasattr(self, "running"):
            self.register_buffer("running", torch.zeros(3))
        self.running.mul_(0.5).add_(x.detach().mean(0))
        return self.fc(x) + self.running

net = Cache()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 3, seed=i),)

def observe():
    return dict(net.named_buffers())
""")

_program("mod-training-branch-toggle", (1, 1), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.0)

    def forward(self, x):
        y = self.drop(self.fc(x))
        if self.training:
            return y * 2
        return y - 1

net = Net()

def inputs(i):
    net.train(i != 1)
    return (rand(2, 4, seed=i),)

def f(x):
    return net(x)
""")

_program("mod-super-chain", (1, 0), """
class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x)

class Mid(Base):
    def forward(self, x):
        return super().forward(x).relu() + 1

class Leaf(Mid):
    def __init__(self):
        super().__init__()
        self.scale = 3.0

    def forward(self, x):
        return super(Leaf, self).forward(x) * self.scale

net = Leaf()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 3, seed=i, grad=True),)
""")

_program("mod-call-override", (1, 2), """
class Wrapped(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.count = 0

    def __call__(self, x, *args, **kwargs):
        self.count += 1
        return super().__call__(x * 2, *args, **kwargs)

    def forward(self, x, bias=0.0):
        return self.fc(x) + bias

net = Wrapped()

def f(x):
    return net(x) + net(x, bias=1.0)

def inputs(i):
    return (rand(2, 3, seed=i),)

def observe():
    return net.count
""")

_program("mod-hooks-pre-and-forward", (1, 2), """
LOG = []
net = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2))

def pre(module, args):
    LOG.append(("pre", type(module).__name__))
    return (args[0] * 2,)

def post(module, args, out):
    LOG.append(("post", tuple(out.shape)))
    return out + 1

net[0].register_forward_pre_hook(pre)
net[2].register_forward_hook(post)

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 3, seed=i),)

def observe():
    return list(LOG)
""")

_program("isinstance-typing-abc", (1, 0), """
import collections.abc, numbers, typing

def describe(v):
    if isinstance(v, torch.Tensor):
        return "tensor"
    if isinstance(v, collections.abc.Mapping):
        return "mapping"
    if isinstance(v, (str, bytes)):
        return "text"
    if isinstance(v, collections.abc.Sequence):
        return "sequence"
    if isinstance(v, numbers.Number):
        return "number"
    if isinstance(v, typing.Iterable):
        return "iterable"
    return "other"

def f(x):
    kinds = [describe(v) for v in (x, {"a": 1}, "s", [1], (2,), 3.5, True, {1, 2}, None)]
    return x * len(kinds), kinds, isinstance(x.shape, collections.abc.Sequence)

def inputs(i):
    return (rand(2, seed=i),)
""")

_program("probe-warn-and-log-in-forward", (1, 0), """
import logging, warnings

logger = logging.getLogger("construct.variant")
logger.setLevel(logging.WARNING)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        if x.shape[0] < 4:
            warnings.warn("small batch", UserWarning)
        logger.debug("shape %s", x.shape)
        if logger.isEnabledFor(logging.INFO):
            x = x * 100
        return self.fc(x)

net = Net()

def f(x):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = net(x)
    return y, [str(w.message) for w in caught]

def inputs(i):
    return (rand(2, 3, seed=i),)
""")

# ---- variants: `in`, closures, environment, experts ----

_program("in-containers-dynamic-keys", (1, 0), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleDict({f"b{i}": nn.Linear(3, 3) for i in (0, 2)})
        self.extra = nn.ParameterDict({"gain": nn.Parameter(torch.ones(3))})
        self.seq = nn.ModuleList([nn.Tanh()])

    def forward(self, x):
        for i in range(3):
            if f"b{i}" in self.blocks:
                x = self.blocks[f"b{i}"](x)
        if "gain" in self.extra and "bias" not in self.extra:
            x = x * self.extra["gain"]
        present = self.seq[0] in self.seq
        return x, present, len(self.blocks), list(self.blocks.keys())

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 3, seed=i),)
""")

_program("closure-returns-tensor-capture", (1, 0), """
def make(x, k):
    scale = x.mean()
    def apply(y):
        return y * scale + k
    return apply, lambda y: apply(y) - scale

def f(x):
    g, h = make(x, 2)
    return g, h

def probe_args():
    return (torch.ones(3),)

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("env-getenv-int-layers", (1, 0), """
os.environ["JITCORE_CONSTRUCT_DEPTH"] = "3"
layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(5)])

def f(x):
    depth = int(os.getenv("JITCORE_CONSTRUCT_DEPTH", "1"))
    debug = os.environ.get("JITCORE_CONSTRUCT_DEBUG", "0") == "1"
    for layer in layers[:depth]:
        x = layer(x).relu()
    if debug or "JITCORE_CONSTRUCT_NOPE" in os.environ:
        x = x * 0
    return x

def inputs(i):
    return (rand(2, 3, seed=i),)
""")

_program("moe-where-tuple-index-add", (0, 0), """
class Moe(nn.Module):
    def __init__(self, d=4, n=3, k=2):
        super().__init__()
        self.k = k
        self.router = nn.Linear(d, n, bias=False)
        self.experts = nn.ModuleList([nn.Sequential(nn.Linear(d, d), nn.SiLU()) for _ in range(n)])

    def forward(self, x):
        weights, chosen = torch.topk(self.router(x).softmax(-1), self.k, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            token, slot = torch.where(chosen == e)
            if token.numel() == 0:
                continue
            y = expert(x[token]) * weights[token, slot, None]
            out.index_add_(0, token, y)
        return out

moe = Moe()

def f(x):
    return moe(x)

def inputs(i):
    return (rand(6, 4, seed=i, grad=True),)

def observe():
    return [p.grad for p in moe.parameters()]
""")

# ---- variants (session 10), second batch: what libraries do around forward ----

_program("ctx-contextmanager-as-decorator", (1, 2), """
LOG = []

@contextlib.contextmanager
def section(name):
    LOG.append("+" + name)
    try:
        yield
    finally:
        LOG.append("-" + name)

@section("helper")
def helper(x):
    return x.cos() * 2

@torch.no_grad()
def frozen(x):
    return x * 3

def f(x):
    return helper(x) + frozen(x), frozen(x).requires_grad

def inputs(i):
    return (rand(3, seed=i, grad=True),)

def observe():
    return list(LOG)
""")

_program("ctx-redirect-stdout", (0, 0), """
import io

def f(x):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print("inside", x.shape[0])
    print("outside")
    return x + len(buf.getvalue()), buf.getvalue()

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("exc-custom-raised-caught", (0, 0), """
class ShapeError(ValueError):
    def __init__(self, expected, got):
        super().__init__(f"expected {expected}, got {got}")
        self.expected = expected

def check(x, n):
    if x.shape[-1] != n:
        raise ShapeError(n, x.shape[-1])
    return x

def f(x):
    try:
        y = check(x, 5)
    except ShapeError as e:
        y = x * e.expected
        msg = str(e)
    else:
        msg = "ok"
    finally:
        y = y + 1
    return y, msg

def inputs(i):
    return (rand(2, 3, seed=i),)
""")

_program("exc-assert-shapes", (1, 0), """
def attend(q, k):
    assert q.dim() == 3, f"q must be 3-d, got {q.dim()}"
    torch._assert(q.shape[-1] == k.shape[-1], "head dims differ")
    return (q @ k.transpose(1, 2)).softmax(-1)

def f(q, k):
    out = attend(q, k)
    try:
        attend(q[0], k)
    except AssertionError as e:
        return out, str(e)
    return out, None

def inputs(i):
    return rand(2, 3, 4, seed=i), rand(2, 5, 4, seed=10 + i)
""")

_program("enum-mode-branch", (1, 0), """
import enum

class Mode(enum.Enum):
    SUM = "sum"
    MEAN = "mean"

class Pool(nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.mode = Mode(mode)

    def forward(self, x):
        if self.mode is Mode.SUM:
            return x.sum(1)
        elif self.mode == Mode.MEAN:
            return x.mean(1)
        raise ValueError(self.mode)

a, b = Pool("sum"), Pool("mean")

def f(x):
    return a(x) + b(x), a.mode.value, str(b.mode), b.mode.name

def inputs(i):
    return (rand(2, 3, seed=i),)
""")

_program("mod-getattr-fallback", (1, 0), """
class Config:
    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __getattr__(self, name):
        if name.startswith("use_"):
            return False
        raise AttributeError(name)

cfg = Config(hidden=3, dropout=0.0, use_bias=True)

class Net(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.fc = nn.Linear(cfg.hidden, cfg.hidden, bias=cfg.use_bias)

    def forward(self, x):
        y = self.fc(x)
        if self.cfg.use_gate:
            y = y.sigmoid()
        if getattr(self.cfg, "scale", None) is not None:
            y = y * self.cfg.scale
        return y

net = Net(cfg)

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 3, seed=i),)
""")

_program("mod-mixin-mro-super", (1, 0), """
class InitMixin:
    def extra(self, x):
        return x * 0.5

class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x)

    def extra(self, x):
        return x + 100

class Model(InitMixin, Base):
    def forward(self, x):
        return self.extra(super().forward(x)) + type(self).__mro__.index(Base)

net = Model()

def f(x):
    return net(x), type(net).__name__, [c.__name__ for c in type(net).__mro__[:3]]

def inputs(i):
    return (rand(2, 3, seed=i, grad=True),)
""")

_program("mod-cached-property-config", (1, 1), """
import functools

class Spec:
    def __init__(self, heads, dim):
        self.heads = heads
        self.dim = dim

    @functools.cached_property
    def head_dim(self):
        return self.dim // self.heads

spec = Spec(2, 4)

def f(x):
    b = x.shape[0]
    y = x.view(b, spec.heads, spec.head_dim)
    return y.softmax(-1), "head_dim" in vars(spec)

def inputs(i):
    return (rand(3, 4, seed=i),)

def observe():
    return sorted(vars(spec))
""")

_program("operator-getters-on-modules", (0, 0), """
net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
shape_of = operator.attrgetter("weight.shape", "bias.shape")
first_two = operator.itemgetter(slice(0, 2))
flatten = operator.methodcaller("reshape", -1)

def f(x):
    shapes = [shape_of(m) for m in net if isinstance(m, nn.Linear)]
    head = nn.Sequential(*first_two(list(net)))
    y = flatten(head(x))
    by_name = sorted(net.named_parameters(), key=operator.itemgetter(0))
    return y, shapes, [n for n, _ in by_name]

def inputs(i):
    return (rand(2, 3, seed=i),)
""")

_program("func-reduce-math-sizes", (1, 0), """
import functools, math

def f(x, ys):
    total = functools.reduce(operator.add, ys, x)
    scale = 1 / math.sqrt(x.shape[-1])
    n = math.prod(x.shape)
    return total * scale + n, math.ceil(n / 4), max(x.shape), divmod(n, 5)

def inputs(i):
    return rand(2, 4, seed=i), [rand(2, 4, seed=10 + j) for j in range(3)]
""")

_program("closure-list-of-lambdas-returned", (0, 0), """
def f(x):
    acts = {"relu": torch.relu, "tanh": torch.tanh}
    fns = [lambda y, a=a: acts[a](y) * x.mean() for a in sorted(acts)]
    def compose(y):
        for fn in fns:
            y = fn(y)
        return y
    return compose

def probe_args():
    return (torch.linspace(-1, 1, 5),)

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("global-counter-nonlocal", (1, 2), """
STEP = 0

def make():
    calls = 0
    def bump(x):
        nonlocal calls
        calls += 1
        return x * calls
    return bump

bump = make()

def f(x):
    global STEP
    STEP += 1
    return bump(x) + STEP

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return STEP, bump.__closure__[0].cell_contents
""")

_program("probe-feature-checks", (1, 0), """
def f(q, k, v):
    sdpa = getattr(F, "scaled_dot_product_attention", None)
    if sdpa is not None and hasattr(torch, "compile"):
        out = sdpa(q, k, v, is_causal=True)
    else:
        out = q
    flags = (torch.is_grad_enabled(), q.requires_grad, torch.are_deterministic_algorithms_enabled(),
             torch.get_default_dtype())
    return out, flags

def inputs(i):
    return rand(1, 2, 3, 4, seed=i), rand(1, 2, 3, 4, seed=10 + i), rand(1, 2, 3, 4, seed=20 + i)
""")

_program("train-grad-accumulation", (2, 4), """
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
counter = [0]

def f(x, y):
    loss = F.mse_loss(model(x), y) / 2
    loss.backward()
    counter[0] += 1
    if counter[0] % 2 == 0:
        torch.nn.utils.clip_grad_value_(model.parameters(), 0.5)
        opt.step()
        opt.zero_grad()
    return loss.detach()

def inputs(i):
    return rand(4, 3, seed=i), rand(4, 1, seed=60 + i)

def observe():
    return [p for p in model.parameters()], [p.grad for p in model.parameters()], counter[0]
""")

_program("train-autograd-grad-penalty", (3, 0), """
disc = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))

def f(x):
    x = x.detach().requires_grad_(True)
    score = disc(x).sum()
    (grad,) = torch.autograd.grad(score, x, create_graph=True)
    penalty = ((grad.norm(dim=1) - 1) ** 2).mean()
    return score + penalty

def inputs(i):
    return (rand(4, 3, seed=i),)

def observe():
    return [p.grad for p in disc.parameters()]
""")

_program("train-lambda-lr-param-groups", (3, 2), """
model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
opt = torch.optim.Adam([
    {"params": model[0].parameters(), "lr": 0.01},
    {"params": model[2].parameters()},
], lr=0.001)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1.0 / (step + 1))

def f(x, y):
    opt.zero_grad()
    loss = F.l1_loss(model(x), y)
    loss.backward()
    opt.step()
    sched.step()
    return loss.detach(), [g["lr"] for g in opt.param_groups]

def inputs(i):
    return rand(4, 3, seed=i), rand(4, 1, seed=70 + i)

def observe():
    return [p for p in model.parameters()]
""")

_program("fresh-dataclass-asdict-fields", (2, 0), """
@dataclasses.dataclass
class Stats:
    mean: torch.Tensor
    std: torch.Tensor
    n: int = 0

def f(x):
    s = Stats(x.mean(0), x.std(0), x.shape[0])
    names = [fl.name for fl in dataclasses.fields(s)]
    d = dataclasses.asdict(s)
    s.n += 1
    return d["mean"] + d["std"], names, s.n, dataclasses.astuple(s)[2]

def inputs(i):
    return (rand(3, 2, seed=i),)
""")

_program("loop-chunked-range-stride", (0, 0), """
def f(x, chunk):
    outs = []
    for start in range(0, x.shape[0], chunk):
        piece = x[start:start + chunk]
        if piece.abs().sum() >= 0:
            piece = piece.softmax(-1)
        outs.append(piece)
    return torch.cat(outs)

def inputs(i):
    return rand(7, 3, seed=i), 3
""")

_program("loop-zip-dict-values-modules", (0, 0), """
class Fuse(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.ModuleDict({"rgb": nn.Linear(3, 2), "depth": nn.Linear(1, 2)})

    def forward(self, feats):
        total = 0
        for (name, proj), key in zip(self.proj.items(), sorted(feats)):
            y = proj(feats[name])
            if y.abs().sum() >= 0:
                y = y * 2
            total = total + y
        return total

net = Fuse()

def f(rgb, depth):
    return net({"rgb": rgb, "depth": depth})

def inputs(i):
    return rand(2, 3, seed=i), rand(2, 1, seed=10 + i)
""")

_program("moe-argsort-split-counts", (2, 2), """
class Moe(nn.Module):
    def __init__(self, d=4, n=3):
        super().__init__()
        self.n = n
        self.router = nn.Linear(d, n)
        self.experts = nn.ModuleList([nn.Linear(d, d) for _ in range(n)])

    def forward(self, x):
        route = self.router(x).argmax(-1)
        order = torch.argsort(route)
        counts = torch.bincount(route, minlength=self.n).tolist()
        pieces = x[order].split(counts)
        outs = [expert(p) for expert, p in zip(self.experts, pieces)]
        y = torch.empty_like(x)
        y[order] = torch.cat(outs)
        return y

moe = Moe()

def f(x):
    return moe(x)

def inputs(i):
    return (rand(6, 4, seed=i, grad=True),)

def observe():
    return [p.grad for p in moe.parameters()]
""")

# ---- variants (session 10), third batch: effects and exceptions around a break ----

_program("break-print-order-effects", (1, 2), """
LOG = []

def f(x):
    print("start", x.shape[0])
    LOG.append("a")
    y = x * 2
    if y.abs().sum() >= 0:
        print("branch")
        LOG.append("b")
    LOG.append(len(LOG))
    print("end", len(LOG))
    return y

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return list(LOG)
""")

_program("break-inside-with-region", (0, 0), """
LOG = []

@contextlib.contextmanager
def region(tag):
    LOG.append("in " + tag)
    try:
        yield
    finally:
        LOG.append("out " + tag)

def f(x):
    with region("r"):
        y = x.cos()
        if y.abs().sum() >= 0:
            y = y + 1
        LOG.append("after branch")
    with torch.no_grad():
        z = y * 2
        if z.abs().sum() >= 0:
            z = z - 1
    return z, z.requires_grad

def inputs(i):
    return (rand(3, seed=i, grad=True),)

def observe():
    return list(LOG)
""")

_program("break-raise-after-break", (1, 1), """
LOG = []

def f(x):
    y = x * 3
    if y.abs().sum() >= 0:
        LOG.append("branched")
    if x.shape[0] == 3:
        raise ValueError(f"rows: {x.shape[0]} after {len(LOG)}")
    return y

def inputs(i):
    return (rand(3 if i == 1 else 2, seed=i),)

def observe():
    return list(LOG)
""")

_program("break-try-finally-loop", (0, 0), """
LOG = []

def f(x):
    for k in range(3):
        try:
            x = x * 2
            if x.abs().sum() >= 0:
                x = x / 3
            if k == 1:
                continue
            LOG.append(k)
        finally:
            LOG.append("f%d" % k)
    return x

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return list(LOG)
""")

_program("break-generator-across", (0, 0), """
def gen(x):
    for k in range(3):
        y = x * k
        if y.abs().sum() >= 0:
            y = y + 1
        yield y

def f(x):
    g = gen(x)
    a = next(g)
    b = [t.sum() for t in g]
    return a, b

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("break-list-mutation-both-sides", (2, 0), """
def f(x, acc):
    acc.append(x.sum())
    y = x * 2
    if y.abs().sum() >= 0:
        acc.append(y.mean())
    acc[0] = acc[0] * 10
    acc.pop(1)
    acc.insert(0, "head")
    return y, len(acc)

shared = []

def inputs(i):
    shared.clear()
    shared.extend([1, 2])
    return rand(3, seed=i), shared

def observe():
    return list(shared)
""")

_program("break-dict-state-module", (2, 2), """
class Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.stats = {}

    def forward(self, x):
        y = self.fc(x)
        self.stats["pre"] = y.detach().mean()
        if y.abs().sum() >= 0:
            y = y.relu()
        self.stats["post"] = y.detach().mean()
        self.stats.setdefault("calls", 0)
        self.stats["calls"] += 1
        return y

net = Tracker()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 3, seed=i),)

def observe():
    return dict(net.stats)
""")

_program("break-nested-calls-kwargs", (7, 0), """
def inner(x, *, scale, shift=0.0):
    y = x * scale
    if y.abs().sum() >= 0:
        y = y + shift
    return y

def middle(x, **kw):
    return inner(x, **kw).sin() + inner(x, scale=2.0)

def f(x):
    return middle(x, scale=3.0, shift=1.0) * 2

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

_program("break-item-in-python", (3, 2), """
def f(x):
    n = int(x.abs().sum().item() * 10) % 4
    out = x
    for _ in range(n):
        out = out * 2
    thr = float(x.max())
    return out, n, out > thr

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("break-exception-in-loop-handler", (1, 0), """
LOG = []

def risky(t, k):
    if k == 1:
        raise KeyError(k)
    return t * (k + 1)

def f(x):
    out = []
    for k in range(3):
        try:
            y = risky(x, k)
            if y.abs().sum() >= 0:
                y = y.exp()
        except KeyError as e:
            LOG.append(repr(e))
            continue
        out.append(y)
    return torch.stack(out)

def inputs(i):
    return (rand(2, seed=i),)

def observe():
    return list(LOG)
""")

_program("break-returned-closure-after", (2, 0), """
def f(x):
    scale = x.mean()
    if scale.abs() >= 0:
        scale = scale + 1
    offsets = [1, 2]
    def apply(y):
        return y * scale + sum(offsets)
    offsets.append(3)
    return apply

def probe_args():
    return (torch.ones(2),)

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("break-module-attr-write-after", (2, 2), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.last = None
        self.hist = []

    def forward(self, x):
        y = self.fc(x)
        if y.abs().sum() >= 0:
            y = y * 2
        self.last = y.detach()
        self.hist.append(tuple(y.shape))
        del self.hist[:-2]
        return y

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 3, seed=i),)

def observe():
    return net.last, list(net.hist)
""")

# ---- variants (session 10), fourth batch ----

_program("str-print-tensor-and-item", None, """
def f(x):
    loss = (x ** 2).mean()
    print(f"loss {loss.item():.4f} max={x.max().item():.3f}")
    print("tensor:", x.round(decimals=2))
    print(f"{x.shape} {x.dtype} {x.device} {x.requires_grad}")
    return loss * 2

def inputs(i):
    return (rand(2, 2, seed=i),)
""")

_program("autograd-mark-dirty-inplace", (1, 0), """
class ScaleInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, s):
        x.mul_(s)
        ctx.mark_dirty(x)
        ctx.s = s
        return x

    @staticmethod
    def backward(ctx, g):
        return g * ctx.s, None

def f(x):
    buf = x.clone()
    out = ScaleInplace.apply(buf, 3.0)
    out2 = ScaleInplace.apply(out, 0.5)
    return out2 + x, out2 is buf

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

_program("autograd-materialize-false", (1, 0), """
class Split2(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, ga, gb):
        out = torch.zeros_like(ga if ga is not None else gb)
        if ga is not None:
            out = out + ga * 2
        if gb is not None:
            out = out + gb * 3
        return out

def f(x):
    a, b = Split2.apply(x)
    return a.sum() * 1.5

def inputs(i):
    return (rand(4, seed=i, grad=True),)
""")

_program("gen-throw-caught", (1, 0), """
def worker(x):
    total = x
    while True:
        try:
            v = yield total
            total = total + v
        except ValueError:
            total = total * 0
            yield total

def f(x):
    g = worker(x)
    next(g)
    g.send(x)
    reset = g.throw(ValueError("reset"))
    next(g)
    after = g.send(x * 5)
    g.close()
    return reset, after

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("ctx-abstract-cm-subclass", (1, 2), """
LOG = []

class Timer(contextlib.AbstractContextManager):
    def __init__(self, name):
        self.name = name

    def __exit__(self, *exc):
        LOG.append((self.name, exc[0] is None))
        return None

class Scoped(contextlib.ContextDecorator):
    def __enter__(self):
        LOG.append("scoped in")
        return self

    def __exit__(self, *exc):
        LOG.append("scoped out")
        return False

@Scoped()
def body(x):
    return x.tanh()

def f(x):
    with Timer("t") as t:
        y = body(x) * 2
    return y, t.name

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return list(LOG)
""")

_program("train-eval-toggle-in-step", (3, 0), """
model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)

def f(x, y):
    model.train()
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        val = F.mse_loss(model(x), y)
    return loss.detach(), val

def inputs(i):
    return rand(5, 3, seed=i), rand(5, 1, seed=80 + i)

def observe():
    return [p for p in model.parameters()] + [b for b in model.buffers()]
""")

_program("in-sequential-and-parameterlist", None, """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU()
        self.seq = nn.Sequential(nn.Linear(3, 3), self.act)
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(3) * k) for k in (1.0, 2.0)])

    def forward(self, x):
        y = self.seq(x)
        if self.act in self.seq:
            y = y + 1
        for s in self.scales:
            y = y * s
        return y, len(self.scales), self.scales[-1] in list(self.scales)

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 3, seed=i, grad=True),)
""")

_program("attrs-class-attr-counter-instances", (1, 2), """
class Layer(nn.Module):
    created = 0
    registry = {}

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        type(self).created += 1
        Layer.registry[len(Layer.registry)] = x.shape[0]
        return self.fc(x) * Layer.created

layer = Layer()

def f(x):
    y = layer(x)
    if hasattr(Layer, "tmp"):
        del Layer.tmp
    Layer.tmp = 1
    return y

def inputs(i):
    return (rand(2, 2, seed=i),)

def observe():
    return Layer.created, dict(Layer.registry), Layer.tmp
""")

_program("moe-topk-scatter-gates", (0, 0), """
class Router(nn.Module):
    def __init__(self, d=4, n=4, k=2):
        super().__init__()
        self.k = k
        self.n = n
        self.gate = nn.Linear(d, n, bias=False)
        self.experts = nn.ModuleList([nn.Linear(d, d) for _ in range(n)])

    def forward(self, x):
        logits = self.gate(x)
        top, idx = logits.topk(self.k, dim=-1)
        gates = torch.zeros_like(logits).scatter(-1, idx, top.softmax(-1))
        out = torch.zeros_like(x)
        for e in range(self.n):
            mask = gates[:, e] > 0
            if not mask.any():
                continue
            rows = mask.nonzero(as_tuple=True)[0]
            out[rows] += gates[rows, e, None] * self.experts[e](x[rows])
        aux = (gates.mean(0) * F.one_hot(idx[:, 0], self.n).float().mean(0)).sum() * self.n
        return out, aux

moe = Router()

def f(x):
    return moe(x)

def inputs(i):
    return (rand(6, 4, seed=i, grad=True),)

def observe():
    return [p.grad for p in moe.parameters()]
""")

_program("env-in-environ-branch-module", (1, 0), """
os.environ.pop("JITCORE_CONSTRUCT_FAST", None)

class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(4, 12)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, -1)
        if "JITCORE_CONSTRUCT_FAST" in os.environ or os.getenv("JITCORE_CONSTRUCT_SDPA") == "1":
            return F.scaled_dot_product_attention(q, k, v)
        w = (q @ k.transpose(-1, -2) / 2.0).softmax(-1)
        return w @ v

net = Attn()

def f(x):
    return net(x)

def inputs(i):
    return (rand(1, 3, 4, seed=i),)
""")


# ---- TorchFunctionModes entered inside the function (session 10) ----

_program("mode-rewrites-add", (1, 0), """
from torch.overrides import TorchFunctionMode

class AddBecomesSub(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.add or func is torch.add:
            func = torch.sub
        return func(*args, **(kwargs or {}))

def f(x):
    with AddBecomesSub():
        y = x + 1
        z = torch.add(y, x).relu()
    return z * 2

def inputs(i):
    return (rand(3, 4, seed=i),)
""")

# torch.compile counts 5 calls where eager counts 4 (its count differs from eager's): no bar to measure against
_program("mode-counts-calls", None, """
from torch.overrides import TorchFunctionMode

class Count(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))

counter = Count()

def f(x):
    with counter:
        y = (x * 2).sin()[0] + x.shape[1]
    return y

def inputs(i):
    return (rand(3, 4, seed=i),)

def observe():
    return counter.calls
""")

_program("mode-nested-fall-through", (1, 0), """
from torch.overrides import TorchFunctionMode

class Scale(TorchFunctionMode):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        return out * self.k if func is torch.Tensor.mul else out

def f(x):
    with Scale(2):
        with Scale(3):
            y = x * x
        z = y * 1
    return y, z + 1

def inputs(i):
    return (rand(4, seed=i),)
""")

_program("mode-getitem-to-index-vmap", (1, 0), """
from torch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex

def f(pad):
    def both(b, q, kv):
        return (kv <= q) & pad[b, kv]
    g = both
    for dims in [(None, None, 0), (None, 0, None), (0, None, None)]:
        g = torch.vmap(g, in_dims=dims)
    with TransformGetItemToIndex():
        return g(torch.arange(2), torch.arange(4), torch.arange(4))

def inputs(i):
    return (torch.rand(2, 4, generator=torch.Generator().manual_seed(i)) > 0.3,)
""")


# ---- session 10: module conversions inside forward, repeated layers reached through wrappers ----

_program("moe-router-module-to-noop", (1, 1), """
class Router(nn.Module):
    def __init__(self, d=4, n=3):
        super().__init__()
        self.classifier = nn.Linear(d, n, bias=False)
        self.dtype = torch.float32

    def forward(self, x):
        x = x.to(self.dtype)
        self.classifier = self.classifier.to(self.dtype)
        probs = self.classifier(x).softmax(-1)
        return probs.max(-1).values

router = Router()

def f(x):
    return router(x)

def inputs(i):
    return (rand(5, 4, seed=i, grad=True),)

def observe():
    return router.classifier.weight.grad
""")

_program("moe-wrapped-layers-break-inside", (2, 0), """
import functools

def passthrough(func):
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapped

class Layer(nn.Module):
    def __init__(self, d=4):
        super().__init__()
        self.gate = nn.Linear(d, 2)
        self.proj = nn.Linear(d, d)

    @passthrough
    def forward(self, x):
        h = self.gate(x).softmax(-1)
        print("routed")
        return self.proj(x) * h[:, :1]

class Model(nn.Module):
    def __init__(self, n=3):
        super().__init__()
        self.layers = nn.ModuleList([Layer() for _ in range(n)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

model = Model()

def f(x):
    return model(x)

def inputs(i):
    return (rand(6, 4, seed=i, grad=True),)

def observe():
    return model.layers[1].proj.weight.grad
""")

# ---- session 11: resume functions after a break inside with / try / closures / generators ----

_program("resume-user-cm-state", (0, 0), """
class Timer:
    depth = 0

    def __init__(self, name, log):
        self.name, self.log = name, log

    def __enter__(self):
        Timer.depth += 1
        self.log.append(f"enter {self.name} {Timer.depth}")
        return self

    def __exit__(self, kind, value, tb):
        self.log.append(f"exit {self.name} {kind is None}")
        Timer.depth -= 1
        return False

LOG = []

def f(x):
    with Timer("outer", LOG) as t:
        y = x.relu()
        if y.sum() > 0.5:
            y = y * 2
        LOG.append(t.name)
    return y + Timer.depth

def inputs(i):
    return (rand(4, seed=i),)

def observe():
    return list(LOG), Timer.depth
""")

_program("resume-autocast-break", (2, 1), """
def f(x, w):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ w
        if y.float().mean() > 0:
            y = y + 1
        z = y @ w
    return z.float(), z.dtype, y.dtype

def inputs(i):
    return rand(3, 3, seed=i, grad=True), rand(3, 3, seed=9)
""")

_program("resume-enable-grad-in-no-grad", (2, 1), """
def f(x):
    with torch.no_grad():
        a = x * 2
        with torch.enable_grad():
            b = x * 3
            if b.sum() > 0:
                b = b + 1
            c = b.exp()
        d = c * 2
    return a.requires_grad, c.requires_grad, d.requires_grad, c, torch.is_grad_enabled()

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

_program("resume-try-except-else-finally", (0, 0), """
LOG = []

def f(x, k):
    try:
        y = x.sin()
        if y.sum() > 0:
            y = y * 2
        if k == 1:
            raise ValueError(f"bad k={k} for {tuple(x.shape)}")
    except ValueError as e:
        LOG.append(str(e))
        y = x.new_zeros(x.shape)
    else:
        LOG.append("else")
        y = y + 1
    finally:
        LOG.append("finally")
    return y

def inputs(i):
    return rand(3, seed=i), i

def observe():
    return list(LOG)
""")

_program("resume-nested-closure-nonlocal", (5, 3), """
def f(x):
    total = 0
    seen = []

    def visit(t):
        nonlocal total
        total += 1
        if t.sum() > 0:
            seen.append("pos")
        else:
            seen.append("neg")
        return t * total

    a = visit(x)
    b = visit(a - 1)
    return a + b, total, list(seen)

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("resume-break-in-gen-consumed-sum", (0, 0), """
def scaled(xs):
    for t in xs:
        if t.mean() > 0:
            yield t * 2
        else:
            yield t

def f(x):
    rows = list(x.unbind(0))
    return sum(scaled(rows)), sum(t.sum() for t in scaled(rows))

def inputs(i):
    return (rand(3, 4, seed=i),)
""")

_program("resume-two-cms-one-line", (0, 0), """
LOG = []

@contextlib.contextmanager
def tag(name):
    LOG.append("+" + name)
    yield name.upper()
    LOG.append("-" + name)

def f(x):
    with tag("a") as a, torch.no_grad():
        y = x * 2
        if y.sum() > 0:
            y = y - 1
        LOG.append(a)
    return y, y.requires_grad

def inputs(i):
    return (rand(3, seed=i, grad=True),)

def observe():
    return list(LOG)
""")

_program("resume-params-after-break", (2, 1), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 2)

    def forward(self, x):
        h = self.a(x)
        if h.mean() > 0:
            h = h.relu()
        n = sum(p.numel() for p in self.parameters())
        names = [k for k, _ in self.named_children()]
        return self.b(h) * 0 + n, names

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 4, seed=i, grad=True),)

def observe():
    return net.a.weight.grad
""")

_program("resume-break-in-helper-in-with", (5, 1), """
def helper(t):
    if t.sum() > 0:
        return t * 2
    return -t

def f(x):
    with torch.no_grad():
        a = helper(x)
    b = helper(x + 1)
    return a, b, a.requires_grad, b.requires_grad

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

# ---- session 11: generators ----

_program("gen-expr-any-all-min-max", (0, 0), """
def f(x):
    rows = x.unbind(0)
    big = any(r.sum() > 10 for r in rows)
    pos = all(r.abs().sum() >= 0 for r in rows)
    lo = min(r.size(0) for r in rows)
    hi = max((r.numel(), i) for i, r in enumerate(rows))
    order = sorted((k for k in range(len(rows))), reverse=True)
    return x * lo, big, pos, hi, order

def inputs(i):
    return (rand(3, 2, seed=i),)
""")

_program("gen-send-accumulator", (1, 0), """
def averager():
    total, count = None, 0
    avg = None
    while True:
        value = yield avg
        total = value if total is None else total + value
        count += 1
        avg = total / count

def f(x):
    g = averager()
    next(g)
    outs = [g.send(x * k) for k in range(1, 4)]
    return outs[-1], len(outs)

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

_program("gen-stopiteration-value", (1, 0), """
def steps(x, n):
    for k in range(n):
        x = x * 0.5
        yield k
    return x

def f(x):
    g = steps(x, 3)
    seen = []
    while True:
        try:
            seen.append(next(g))
        except StopIteration as stop:
            return stop.value, seen

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

_program("gen-yield-from-mixed", (1, 0), """
def items(x):
    yield from range(2)
    yield from [x, x + 1]
    yield from (t * 2 for t in x.unbind(0))

def f(x):
    out = list(items(x))
    return out[2] + out[3], out[0] + out[1], len(out), out[-1]

def inputs(i):
    return (rand(3, seed=i),)
""")

_program("gen-named-children-in-forward", (1, 0), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.act = nn.GELU()
        self.dec = nn.Linear(4, 3)

    def stages(self):
        for name, child in self.named_children():
            if not isinstance(child, nn.GELU):
                yield name, child

    def forward(self, x):
        used = []
        for name, child in self.stages():
            x = child(x)
            used.append(name)
        return x, used

net = Net()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 4, seed=i, grad=True),)
""")

_program("gen-sorted-key-lambda", (1, 0), """
def f(x):
    parts = list(x.split(1, dim=0))
    ranked = sorted(range(len(parts)), key=lambda k: -k)
    stacked = torch.cat([parts[k] for k in ranked])
    longest = max(["ab", "abcd", "abc"], key=len)
    return stacked, ranked, longest

def inputs(i):
    return (rand(3, 2, seed=i),)
""")

# ---- session 11: torch.autograd.Function ----

_program("autograd-straight-through-round", (1, 0), """
class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, g):
        return g

class Quant(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(4.0))

    def forward(self, x):
        return RoundSTE.apply(x * self.scale) / self.scale

q = Quant()

def f(x):
    return q(x)

def inputs(i):
    return (rand(5, seed=i, grad=True),)

def observe():
    return q.scale.grad
""")

_program("autograd-grad-reversal-ctx-attr", (1, 1), """
class Reverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        ctx.lam = lam
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g.neg() * ctx.lam, None

def f(x, lam):
    h = x.tanh()
    return Reverse.apply(h, lam) * 3

def inputs(i):
    return rand(4, seed=i, grad=True), 0.5 * (i + 1)
""")

_program("autograd-argmax-nondiff-output", (1, 0), """
class MaxWithIndex(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, idx = x.max(dim=-1)
        ctx.save_for_backward(idx)
        ctx.shape = x.shape
        ctx.mark_non_differentiable(idx)
        return values, idx

    @staticmethod
    def backward(ctx, gv, gi):
        (idx,) = ctx.saved_tensors
        out = gv.new_zeros(ctx.shape)
        out.scatter_(-1, idx.unsqueeze(-1), gv.unsqueeze(-1))
        return out

def f(x):
    v, i = MaxWithIndex.apply(x * 2)
    return v, i, i.requires_grad

def inputs(i):
    return (rand(3, 4, seed=i, grad=True),)
""")

_program("autograd-needs-grad-param-and-buffer", (1, 1), """
class Affine(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        return x * w + b

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        gx = g * w if ctx.needs_input_grad[0] else None
        gw = (g * x).sum(0) if ctx.needs_input_grad[1] else None
        gb = g.sum(0) if ctx.needs_input_grad[2] else None
        return gx, gw, gb

class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3) * 0.5)
        self.register_buffer("b", torch.arange(3.0))

    def forward(self, x):
        return Affine.apply(x, self.w, self.b)

layer = Layer()

def f(x):
    return layer(x)

def inputs(i):
    return (rand(2, 3, seed=i, grad=(i != 1)),)

def observe():
    return layer.w.grad
""")

_program("autograd-once-diff-clamp-mask", (1, 0), """
from torch.autograd.function import once_differentiable

class Clip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        mask = (x >= lo) & (x <= hi)
        ctx.save_for_backward(mask)
        return x.clamp(lo, hi)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (mask,) = ctx.saved_tensors
        return g * mask, None, None

def f(x):
    return Clip.apply(x * 3, -1.0, 1.0).sum(0)

def inputs(i):
    return (rand(4, 2, seed=i, grad=True),)
""")

_program("autograd-function-under-no-grad", (1, 0), """
class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2

def f(x):
    with torch.no_grad():
        a = Double.apply(x)
    b = Double.apply(x)
    return a, b, a.requires_grad, b.requires_grad

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

_program("autograd-function-two-inputs-one-none-grad", (1, 0), """
class Lerp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, t):
        ctx.t = t
        return a + (b - a) * t

    @staticmethod
    def backward(ctx, g):
        return g * (1 - ctx.t), g * ctx.t, None

def f(a, b):
    outs = [Lerp.apply(a, b, t) for t in (0.25, 0.75)]
    return torch.stack(outs).sum(0)

def inputs(i):
    return rand(3, seed=i, grad=True), rand(3, seed=i + 5, grad=True)
""")

# ---- session 11: grad modes ----

_program("grad-set-enabled-call", (1, 0), """
def f(x):
    prev = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    a = x * 2
    torch.set_grad_enabled(prev)
    b = x * 3
    return a, b, a.requires_grad, b.requires_grad

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

_program("grad-set-enabled-flag-cm", (1, 1), """
def f(x, train):
    with torch.set_grad_enabled(train):
        y = (x * 2).sin()
    return y, y.requires_grad

def inputs(i):
    return rand(3, seed=i, grad=True), i != 1
""")

_program("grad-inference-mode-flag", None, """
def f(x, fast):
    with torch.inference_mode(mode=fast):
        y = x * 2 + 1
        inf = y.is_inference()
    return y.sum().item() if fast else y, inf

def inputs(i):
    return rand(3, seed=i), i == 1
""")

_program("grad-no-grad-decorated-helper", (1, 0), """
@torch.no_grad()
def stats(t):
    return t.mean(), t.std()

def f(x):
    m, s = stats(x)
    y = (x - m) / s
    return y, m.requires_grad, y.requires_grad

def inputs(i):
    return (rand(5, seed=i, grad=True),)
""")

_program("grad-is-enabled-branch", (1, 0), """
def f(x):
    if torch.is_grad_enabled():
        y = x * 2
    else:
        y = x * 3
    with torch.no_grad():
        z = x * 2 if torch.is_grad_enabled() else x * 5
    return y, z

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

# ---- session 11: str / repr / format ----

_program("str-conversions-of-values", (1, 5), """
def f(x):
    n, r = x.shape
    parts = [str(n), repr(1.5), str((n, r)), str(x.shape), repr(x.shape), str(x.dtype), repr(x.device),
             str(x.device), str(None), str(True), repr("q"), str([n, 2.0])]
    return x * n, " | ".join(parts)

def inputs(i):
    return (rand(2 + i, 3, seed=i),)
""")

_program("str-percent-formats", (1, 0), """
def f(x):
    n = x.shape[0]
    s = "%d rows, %5.2f scale, %s, %r, %x, %-4s|" % (n, 0.125 * n, x.dtype, "a", 255, "ab")
    t = "%(n)03d/%(m)s" % {"n": n, "m": "max"}
    return x + n, s, t

def inputs(i):
    return (rand(3 + i, seed=i),)
""")

_program("str-config-string-methods", (1, 0), """
SPEC = "linear:4, relu ,linear:2"

def build(spec):
    layers = []
    for part in spec.split(","):
        part = part.strip()
        if part.startswith("linear"):
            _, _, width = part.partition(":")
            layers.append(("fc", int(width)))
        elif part.replace("re", "").upper() == "LU":
            layers.append(("act", 0))
    return layers

def f(x):
    plan = build(SPEC)
    key = "-".join(name for name, _ in plan)
    for name, w in plan:
        if name == "fc":
            x = x[..., :w] * 2
        else:
            x = x.relu()
    return x, key, key.endswith("fc"), key.count("fc"), "act" in key

def inputs(i):
    return (rand(2, 6, seed=i),)
""")

_program("str-fstring-specs", None, """
def f(x):
    n = x.shape[0]
    width = 6
    lr = 3e-4
    a = f"{n:>{width}}|{n:<4}|{n:^5}|{n:+d}|{n:08b}|{lr:.1e}|{lr:g}|{0.5:%}|{n=}|{width!r:>3}"
    b = f"{'x' * n}{{literal}}{n * 1.5:.3f}"
    return x.sum() * n, a, b

def inputs(i):
    return (rand(3 + i, seed=i),)
""")

_program("str-format-method-kwargs", (1, 1), """
CFG = {"name": "enc", "dim": 4, "drop": 0.1}

def f(x):
    title = "{name}[{dim}] p={drop:.2f}".format(**CFG)
    pos = "{0}-{1}-{0}".format(x.shape[0], CFG["dim"])
    attr = "{t.shape[0]} {t.dtype}".format(t=x)
    return x * CFG["dim"], title, pos, attr

def inputs(i):
    return (rand(2 + i, seed=i),)
""")

_program("str-dtype-name-mapping", (1, 0), """
def f(x):
    short = str(x.dtype).replace("torch.", "")
    bits = torch.finfo(x.dtype).bits
    kind = "float" if x.dtype.is_floating_point else "int"
    size = "x".join(str(s) for s in x.size())
    return x.to(torch.float64), f"{short}/{bits}/{kind}/{size}", x.device.type

def inputs(i):
    return (rand(2, 3, seed=i),)
""")

# ---- session 11: operator, functools, itertools ----

_program("operator-itemgetter-multi", (1, 0), """
import operator

def f(x):
    out = {"logits": x * 2, "aux": x.sum(), "mask": x > 0}
    logits, aux = operator.itemgetter("logits", "aux")(out)
    second = operator.itemgetter(1)(list(x.unbind(0)))
    sl = operator.itemgetter(slice(0, 2))(x)
    return logits + aux, second, sl

def inputs(i):
    return (rand(3, 2, seed=i, grad=True),)
""")

_program("operator-attrgetter-dotted", (1, 0), """
import operator

net = nn.Sequential()
net.add_module("fc", nn.Linear(3, 3))
net.add_module("head", nn.Linear(3, 1))

def f(x):
    w, b = operator.attrgetter("fc.weight", "head.bias")(net)
    shape = operator.attrgetter("shape")(x)
    return net(x) + b, (w * 2).sum(), shape

def inputs(i):
    return (rand(2, 3, seed=i, grad=True),)
""")

_program("operator-methodcaller-tensor", (1, 0), """
import operator

def f(x):
    flat = operator.methodcaller("reshape", -1)(x)
    summed = operator.methodcaller("sum", dim=0, keepdim=True)(x)
    mapped = list(map(operator.methodcaller("upper"), ["a", "bc"]))
    return flat, summed, mapped, operator.mul(x, 2) - operator.neg(x)

def inputs(i):
    return (rand(2, 3, seed=i, grad=True),)
""")

_program("func-partial-module-and-fn", None, """
import functools

act = functools.partial(F.gelu, approximate="tanh")
norm = functools.partial(F.layer_norm, normalized_shape=(4,))

def scale(x, k, *, bias=0.0):
    return x * k + bias

def f(x):
    s = functools.partial(scale, k=2.0)
    t = functools.partial(s, bias=1.0)
    return act(norm(x)), t(x), s.keywords["k"], len(t.keywords)

def inputs(i):
    return (rand(2, 4, seed=i, grad=True),)
""")

_program("func-reduce-tensors", (1, 0), """
import functools, operator

def f(x):
    parts = list(x.unbind(0))
    total = functools.reduce(torch.add, parts)
    prod_shape = functools.reduce(operator.mul, x.shape, 1)
    chain = functools.reduce(lambda acc, t: acc * 0.5 + t, parts, torch.zeros_like(parts[0]))
    return total, prod_shape, chain

def inputs(i):
    return (rand(3, 4, seed=i, grad=True),)
""")

_program("itertools-chain-params", (1, 0), """
import itertools

enc = nn.Linear(3, 3)
dec = nn.Linear(3, 2)

def f(x):
    params = list(itertools.chain(enc.parameters(), dec.parameters()))
    l2 = sum(p.pow(2).sum() for p in params)
    flat = list(itertools.chain.from_iterable([[1, 2], [3]]))
    return dec(enc(x)).sum() + 0.01 * l2, len(params), flat

def inputs(i):
    return (rand(2, 3, seed=i),)

def observe():
    return enc.weight.grad, dec.bias.grad
""")

_program("itertools-product-grid", (1, 0), """
import itertools

def f(x):
    h, w = x.shape
    cells = [x[i, j] * (i + 1) for i, j in itertools.product(range(h), range(w)) if (i + j) % 2 == 0]
    pairs = list(itertools.product("ab", repeat=2))
    return torch.stack(cells), pairs

def inputs(i):
    return (rand(2, 3, seed=i, grad=True),)
""")

_program("itertools-accumulate-islice", (1, 0), """
import itertools, operator

def f(x):
    parts = list(x.unbind(0))
    running = list(itertools.accumulate(parts))
    prods = list(itertools.accumulate([1, 2, 3, 4], operator.mul))
    first = list(itertools.islice((t * 2 for t in parts), 2))
    skip = list(itertools.islice(range(10), 1, 7, 2))
    return torch.stack(running), prods, torch.stack(first), skip

def inputs(i):
    return (rand(4, 2, seed=i, grad=True),)
""")

_program("itertools-pairwise-layers", (1, 0), """
import itertools

SIZES = [4, 6, 3, 2]

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(SIZES))

    def forward(self, x):
        for (a, b), layer in zip(itertools.pairwise(SIZES), self.layers):
            assert x.shape[-1] == a, f"expected {a}"
            x = layer(x).relu() if b != SIZES[-1] else layer(x)
        return x

net = MLP()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 4, seed=i, grad=True),)

def observe():
    return net.layers[0].weight.grad
""")

_program("itertools-zip-longest-fill", (1, 0), """
import itertools

def f(x):
    heads = list(x.unbind(0))
    scales = [1.0, 2.0]
    out = [h * (s if s is not None else -1.0) for h, s in itertools.zip_longest(heads, scales)]
    tags = list(itertools.zip_longest("ab", "xyz", fillvalue="-"))
    return torch.stack(out), tags

def inputs(i):
    return (rand(3, 2, seed=i, grad=True),)
""")

_program("itertools-groupby-cycle-repeat", (1, 0), """
import itertools

def f(x):
    kinds = ["a", "a", "b", "a"]
    groups = [(k, len(list(g))) for k, g in itertools.groupby(kinds)]
    signs = list(itertools.islice(itertools.cycle([1.0, -1.0]), x.shape[0]))
    ones = list(itertools.repeat(2, 3))
    return x * torch.tensor(signs), groups, ones

def inputs(i):
    return (rand(4, seed=i, grad=True),)
""")

# ---- session 11: collections ----

_program("coll-namedtuple-replace-asdict", (1, 0), """
import collections

Out = collections.namedtuple("Out", ["logits", "loss", "extra"], defaults=[None])

def f(x):
    o = Out(x * 2, x.sum())
    o2 = o._replace(loss=o.loss * 3)
    d = o2._asdict()
    return o2, list(d), Out._fields, o2.extra is None, len(o2)

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

_program("coll-ordereddict-ops", (1, 0), """
import collections

def f(x):
    d = collections.OrderedDict()
    d["a"] = x
    d["b"] = x * 2
    d["c"] = x * 3
    d.move_to_end("a")
    k, v = d.popitem(last=False)
    d["d"] = v + 1
    return list(d.keys()), k, sum(d.values())

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

_program("coll-defaultdict-grouping", (1, 0), """
import collections

def f(x):
    groups = collections.defaultdict(list)
    for i, row in enumerate(x.unbind(0)):
        groups["even" if i % 2 == 0 else "odd"].append(row)
    counts = collections.defaultdict(int)
    for name in ["q", "k", "q"]:
        counts[name] += 1
    return {k: torch.stack(v).sum(0) for k, v in groups.items()}, dict(counts), "z" in groups

def inputs(i):
    return (rand(5, 2, seed=i, grad=True),)
""")

_program("coll-deque-window", (1, 0), """
import collections

def f(x):
    window = collections.deque(maxlen=3)
    for row in x.unbind(0):
        window.append(row * 2)
    window.appendleft(x[0])
    window.rotate(1)
    last = window.pop()
    return torch.stack(list(window)), last, len(window), window.maxlen

def inputs(i):
    return (rand(5, 2, seed=i, grad=True),)
""")

_program("coll-counter-tokens", (0, 0), """
import collections

def f(x, words):
    c = collections.Counter(words.split())
    c.update(["the"])
    top = c.most_common(2)
    scale = c["the"] + c["missing"]
    return x * scale, top, sorted(c.elements())[:3], sum(c.values())

def inputs(i):
    return rand(3, seed=i), "the cat the dog" + (" the" * i)
""")

_program("coll-chainmap-config", (1, 0), """
import collections

DEFAULTS = {"scale": 2.0, "shift": 0.0, "act": "relu"}

def f(x, overrides):
    cfg = collections.ChainMap(overrides, DEFAULTS)
    y = x * cfg["scale"] + cfg["shift"]
    y = y.relu() if cfg["act"] == "relu" else y.tanh()
    return y, dict(cfg), len(cfg)

def inputs(i):
    return rand(3, seed=i, grad=True), {"shift": 1.0} if i == 0 else {"shift": 1.0}
""")

# ---- session 11: dataclasses, enums, NamedTuple, class machinery ----

_program("dc-frozen-replace", (1, 0), """
@dataclasses.dataclass(frozen=True)
class Cfg:
    dim: int = 4
    scale: float = 1.0
    tags: tuple = ()

BASE = Cfg(scale=2.0)

def f(x):
    cfg = dataclasses.replace(BASE, dim=x.shape[-1], tags=("a",))
    try:
        cfg.dim = 9
    except dataclasses.FrozenInstanceError as e:
        err = type(e).__name__
    return x * cfg.scale, cfg, err, cfg == BASE, hash(cfg) == hash(dataclasses.replace(cfg))

def inputs(i):
    return (rand(2, 3, seed=i, grad=True),)
""")

_program("dc-field-defaults-astuple", (1, 2), """
@dataclasses.dataclass
class Stats:
    count: int = 0
    names: list = dataclasses.field(default_factory=list)
    weight: float = dataclasses.field(default=0.5, repr=False)

def f(x):
    s = Stats()
    for k in range(x.shape[0]):
        s.count += 1
        s.names.append(f"r{k}")
    t = dataclasses.astuple(s)
    return x * s.weight, t, repr(s), [fl.name for fl in dataclasses.fields(s)]

def inputs(i):
    return (rand(2 + i, seed=i, grad=True),)
""")

_program("dc-ordered-compare-sort", (1, 0), """
@dataclasses.dataclass(order=True)
class Item:
    priority: int
    name: str = dataclasses.field(compare=False)

def f(x):
    items = [Item(3, "c"), Item(1, "a"), Item(2, "b")]
    items.sort()
    best = min(items)
    return x * best.priority, [it.name for it in items], Item(1, "z") == best

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

_program("enum-members-iteration", (1, 1), """
import enum

class Act(enum.Enum):
    RELU = "relu"
    TANH = "tanh"

class Level(enum.IntEnum):
    LOW = 1
    HIGH = 3

def f(x, name):
    act = Act(name)
    y = x.relu() if act is Act.RELU else x.tanh()
    names = [m.name for m in Act]
    return y * Level.HIGH, act.value, names, Level.LOW + 1, Act["TANH"] in Act, str(act)

def inputs(i):
    return rand(3, seed=i, grad=True), "relu" if i != 1 else "tanh"
""")

_program("enum-flag-combination", (1, 2), """
import enum

class Opt(enum.Flag):
    NONE = 0
    NORM = enum.auto()
    SCALE = enum.auto()

def f(x, opts):
    if Opt.NORM in opts:
        x = x / x.norm()
    if opts & Opt.SCALE:
        x = x * 2
    return x, bool(opts), (opts | Opt.NORM).value

def inputs(i):
    return rand(3, seed=i, grad=True), [Opt.NORM | Opt.SCALE, Opt.SCALE, Opt.NONE][i]
""")

_program("typing-namedtuple-methods", (1, 0), """
from typing import NamedTuple, Optional

class Batch(NamedTuple):
    x: torch.Tensor
    mask: Optional[torch.Tensor] = None
    scale: float = 1.0

    def masked(self):
        return self.x if self.mask is None else self.x * self.mask

def f(x):
    b = Batch(x, x > 0, 2.0)
    c = b._replace(mask=None)
    x1, _, s = b
    return b.masked() * s, c.masked(), isinstance(b, tuple), x1 is x, Batch._field_defaults["scale"]

def inputs(i):
    return (rand(4, seed=i, grad=True),)
""")

_program("cls-property-static-classmethod", (1, 2), """
class Block(nn.Module):
    registry = []

    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self._scale = 2.0

    @property
    def scale(self):
        return self._scale

    @scale.setter
    def scale(self, v):
        self._scale = float(v)

    @staticmethod
    def act(t):
        return t.clamp(min=0)

    @classmethod
    def note(cls, msg):
        cls.registry.append(msg)
        return len(cls.registry)

    def forward(self, x):
        n = self.note(f"fwd{x.shape[0]}")
        self.scale = self.scale + 1
        return self.act(self.fc(x)) * self.scale, n

blk = Block(3)

def f(x):
    return blk(x)

def inputs(i):
    return (rand(2, 3, seed=i, grad=True),)

def observe():
    return list(Block.registry), blk.scale
""")

_program("cls-slots-object", (1, 0), """
class Pair:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b

    def total(self):
        return self.a + self.b

def f(x):
    p = Pair(x, x * 2)
    p.b = p.b + 1
    try:
        p.c = 1
    except AttributeError:
        blocked = True
    has = hasattr(p, "a")
    del p.a
    return p.b, p.total() if hasattr(p, "a") else p.b * 2, blocked, has, hasattr(p, "a")

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

_program("cls-descriptor-get-set", (1, 1), """
class Clamped:
    def __set_name__(self, owner, name):
        self.name = "_" + name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return getattr(obj, self.name, 0.0)

    def __set__(self, obj, value):
        setattr(obj, self.name, min(max(value, 0.0), 1.0))

class Drop:
    p = Clamped()

    def __init__(self, p):
        self.p = p

d = Drop(0.3)

def f(x):
    d.p = d.p + 0.5
    return x * d.p, d.p, type(Drop.p).__name__

def inputs(i):
    return (rand(3, seed=i, grad=True),)

def observe():
    return d.p
""")

_program("cls-super-kwargs-chain", (1, 0), """
class Base(nn.Module):
    def __init__(self, d, **kw):
        super().__init__(**kw)
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return self.fc(x)

class Scaled(Base):
    def __init__(self, d, scale=2.0, **kw):
        super().__init__(d, **kw)
        self.scale = scale

    def forward(self, x):
        return super().forward(x) * self.scale

class Residual(Scaled):
    def forward(self, x):
        out = super(Residual, self).forward(x)
        return out + x, type(self).__mro__[1].__name__

net = Residual(3, scale=0.5)

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 3, seed=i, grad=True),)

def observe():
    return net.fc.weight.grad
""")

_program("isinstance-tuple-and-abc", (1, 2), """
import abc, collections.abc, numbers

class Scorer(abc.ABC):
    @abc.abstractmethod
    def score(self, t): ...

class L2(Scorer):
    def score(self, t):
        return t.pow(2).sum()

class Plain:
    def score(self, t):
        return t.sum()

Scorer.register(Plain)

def f(x, extra):
    total = x.new_zeros(())
    for s in (L2(), Plain()):
        if isinstance(s, Scorer):
            total = total + s.score(x)
    kinds = [isinstance(extra, (int, float)), isinstance(extra, numbers.Real),
             isinstance(extra, collections.abc.Sequence), isinstance(x, (list, torch.Tensor)),
             issubclass(Plain, Scorer), isinstance(extra, bool)]
    return total, kinds

def inputs(i):
    return rand(3, seed=i, grad=True), [1, 2.5, (1,)][i]
""")

_program("cls-dunder-ops-object", (1, 0), """
class Vec:
    def __init__(self, t):
        self.t = t

    def __add__(self, other):
        return Vec(self.t + (other.t if isinstance(other, Vec) else other))

    __radd__ = __add__

    def __mul__(self, k):
        return Vec(self.t * k)

    def __len__(self):
        return self.t.shape[0]

    def __getitem__(self, i):
        return self.t[i]

    def __bool__(self):
        return len(self) > 0

    def __eq__(self, other):
        return isinstance(other, Vec) and len(self) == len(other)

def f(x):
    v = Vec(x) * 2 + 1
    w = sum([Vec(x), Vec(x)], Vec(x * 0))
    return v.t, w.t, len(v), v[0], bool(v), v == w

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

# ---- session 11: mutation replayed ----

_program("mut-class-attr-via-classmethod", (1, 0), """
class Counter:
    calls = 0
    names = []

    @classmethod
    def hit(cls, name):
        cls.calls += 1
        cls.names = cls.names + [name]

def f(x):
    Counter.hit("f")
    if hasattr(Counter, "extra"):
        del Counter.extra
    else:
        Counter.extra = x.shape[0]
    return x * Counter.calls

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return Counter.calls, list(Counter.names), getattr(Counter, "extra", None)
""")

_program("mut-global-tensor-rebind", (1, 1), """
EMA = None
STEPS = 0

def f(x):
    global EMA, STEPS
    STEPS += 1
    m = x.mean(0)
    EMA = m if EMA is None else 0.9 * EMA + 0.1 * m
    return x - EMA, STEPS

def inputs(i):
    return (rand(3, 2, seed=i),)

def observe():
    return EMA, STEPS
""")

_program("mut-list-dict-in-place", (1, 3), """
def f(x, items, cfg):
    items.append(x.shape[0])
    items.sort(reverse=True)
    first = items.pop(0)
    items.extend([7, 8])
    items.reverse()
    del items[0]
    cfg.update(seen=cfg.get("seen", 0) + 1)
    cfg.setdefault("first", first)
    gone = cfg.pop("drop", None)
    cfg["last"] = items[-1]
    return x * first, gone

ITEMS, CFG = [], {}

def inputs(i):
    ITEMS[:] = [3, 1, 2]
    if i == 0:
        CFG["drop"] = "x"
    return rand(2 + i, seed=i), ITEMS, CFG

def observe():
    return list(ITEMS), dict(CFG)
""")

_program("mut-running-stats-buffer", (1, 0), """
class RunNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.register_buffer("mean", torch.zeros(d))
        self.register_buffer("count", torch.zeros((), dtype=torch.long))
        self.momentum = 0.1

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.mean.mul_(1 - self.momentum).add_(x.mean(0), alpha=self.momentum)
                self.count += 1
        return x - self.mean

norm = RunNorm(3)

def f(x):
    return norm(x)

def inputs(i):
    return (rand(4, 3, seed=i, grad=True),)

def observe():
    return norm.mean, norm.count
""")

_program("mut-batchnorm-train-stats", (1, 0), """
net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU())

def f(x):
    y = net(x)
    return y, net[1].num_batches_tracked.item()

def inputs(i):
    return (rand(5, 3, seed=i, grad=True),)

def observe():
    return net[1].running_mean, net[1].running_var, net[0].weight.grad
""")

_program("mut-register-buffer-lazy-init", (1, 1), """
class Lazy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.ready = False

    def forward(self, x):
        if not self.ready:
            self.register_buffer("scale", x.detach().abs().mean(0) + 1)
            self.ready = True
        return self.fc(x) / self.scale

net = Lazy()

def f(x):
    return net(x)

def inputs(i):
    return (rand(2, 3, seed=i),)

def observe():
    return dict(net.named_buffers()), net.ready
""")

_program("mut-manual-seed-random-ops", (1, 0), """
def f(x):
    torch.manual_seed(1234)
    a = torch.rand(3)
    b = torch.randn_like(x)
    keep = torch.bernoulli(torch.full_like(x, 0.5))
    return x * keep + a.sum() + b

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

_program("mut-dropout-seeded-train", (1, 0), """
net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))

def f(x, seed):
    torch.manual_seed(seed)
    return net(x)

def inputs(i):
    return rand(3, 4, seed=i, grad=True), 10 + i
""")

_program("mut-setattr-delattr-module", (1, 1), """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        setattr(self, "cached", x.detach() * 2)
        y = self.fc(x) + getattr(self, "bias_extra", 0.0)
        if hasattr(self, "old"):
            delattr(self, "old")
        self.old = y.shape[0]
        return y

net = Net()
net.bias_extra = 1.5

def f(x):
    return net(x)

def inputs(i):
    return (rand(2 + i, 3, seed=i, grad=True),)

def observe():
    return net.cached, net.old, "cached" in vars(net)
""")

_program("mut-nonlocal-counter-factory", (1, 2), """
def make_counter():
    count = 0
    def bump(k=1):
        nonlocal count
        count += k
        return count
    return bump

BUMP = make_counter()

def f(x):
    a = BUMP()
    b = BUMP(2)
    return x * a + b, BUMP.__closure__[0].cell_contents

def inputs(i):
    return (rand(3, seed=i),)

def observe():
    return BUMP.__closure__[0].cell_contents
""")

_program("mut-set-ops-state", (1, 2), """
SEEN = set()

def f(x, name):
    new = name not in SEEN
    SEEN.add(name)
    SEEN.discard("tmp")
    common = sorted(SEEN & {"a", "b"})
    return x * (2 if new else 1), new, common, len(SEEN | {"z"})

def inputs(i):
    if i == 0:
        SEEN.add("tmp")
    return rand(3, seed=i), ["a", "b", "a"][i]

def observe():
    return sorted(SEEN)
""")

# ---- session 11: exceptions ----

_program("exc-valueerror-size-message", (1, 0), """
def check(x, w):
    if x.shape[-1] != w.shape[0]:
        raise ValueError(f"expected last dim {w.shape[0]}, got {x.shape[-1]} (shape {tuple(x.shape)})")
    return x @ w

def f(x, w):
    return check(x * 2, w)

def inputs(i):
    return rand(2, 3 if i != 1 else 4, seed=i), rand(3, 2, seed=7)
""")

_program("exc-assert-shape-message", (1, 0), """
def f(x):
    assert x.dim() == 2, f"want 2-D, got {x.dim()}-D"
    assert x.shape[0] <= 3, "too many rows: %d" % x.shape[0]
    return x.sum(0)

def inputs(i):
    return (rand(*[(2, 3), (4, 3), (3,)][i], seed=i),)
""")

_program("exc-user-exception-attrs-caught", (1, 1), """
class ShapeError(Exception):
    def __init__(self, msg, got):
        super().__init__(msg)
        self.got = got

def step(t):
    if t.shape[0] % 2:
        raise ShapeError("odd rows", t.shape[0])
    return t * 2

def f(x):
    try:
        return step(x), None
    except ShapeError as e:
        return x.neg(), (str(e), e.got, e.args)

def inputs(i):
    return (rand(2 + i, seed=i),)
""")

_program("exc-raise-from-cause", (1, 0), """
class ConfigError(Exception):
    pass

TABLE = {"relu": torch.relu, "tanh": torch.tanh}

def lookup(name):
    try:
        return TABLE[name]
    except KeyError as e:
        raise ConfigError(f"unknown activation {name!r}") from e

def f(x, name):
    try:
        return lookup(name)(x)
    except ConfigError as e:
        return x, type(e.__cause__).__name__, str(e), e.__suppress_context__

def inputs(i):
    return rand(3, seed=i), ["relu", "gelu", "tanh"][i]
""")

_program("exc-raise-from-escapes", (1, 0), """
class Bad(RuntimeError):
    pass

def f(x):
    y = x * 2
    try:
        {}["missing"]
    except KeyError as e:
        if x.shape[0] > 2:
            raise Bad(f"rows {x.shape[0]}") from None
        y = y + 1
    return y

def inputs(i):
    return (rand(2 + i, seed=i),)
""")

_program("exc-exit-raises-during-exception", (1, 2), """
LOG = []

class Guard:
    def __enter__(self):
        LOG.append("enter")
        return self

    def __exit__(self, kind, value, tb):
        LOG.append(f"exit {kind.__name__ if kind else None}")
        if kind is ZeroDivisionError:
            raise RuntimeError("cleanup failed")
        return kind is KeyError

def f(x, k):
    try:
        with Guard():
            y = x * 2
            if k == 1:
                1 / 0
            if k == 2:
                raise KeyError("k")
            y = y + 1
    except RuntimeError as e:
        LOG.append(f"{e} ctx={type(e.__context__).__name__}")
        y = x
    return y

def inputs(i):
    return rand(3, seed=i), i

def observe():
    return list(LOG)
""")

_program("exc-finally-return-overrides", (1, 2), """
def g(x):
    try:
        return x * 2
    finally:
        if x.shape[0] == 3:
            return x * 5

def h(x):
    try:
        raise ValueError("lost")
    finally:
        return x - 1

def f(x):
    return g(x), h(x)

def inputs(i):
    return (rand(2 + i, seed=i, grad=True),)
""")

_program("exc-next-default-and-stopiter", (1, 2), """
def f(x):
    it = iter(x.unbind(0))
    a = next(it)
    b = next(it, None)
    c = next(it, None)
    try:
        next(it)
        done = False
    except StopIteration:
        done = True
    return a, b is None, c is None, done

def inputs(i):
    return (rand(1 + i, 2, seed=i, grad=True),)
""")

_program("exc-exception-group-style-messages", (1, 0), """
def validate(t, name):
    problems = []
    if t.dim() != 2:
        problems.append(f"{name}: dim {t.dim()}")
    if t.shape[-1] % 2:
        problems.append(f"{name}: odd width {t.shape[-1]}")
    return problems

def f(x):
    problems = validate(x, "x")
    if problems:
        raise TypeError("; ".join(problems))
    return x.view(x.shape[0], -1, 2).sum(-1)

def inputs(i):
    return (rand(*[(2, 4), (3, 3), (5,)][i], seed=i),)
""")

# ---- session 11: returning closures, lambdas, generators, objects made inside ----

_program("ret-lambda-over-tensor", (1, 0), """
def f(x):
    m = x.mean()
    s = x.std()
    norm = lambda t: (t - m) / s
    return norm, m

def probe_args():
    return (torch.arange(3.0),)

def inputs(i):
    return (rand(4, seed=i),)
""")

_program("ret-object-made-inside", (1, 0), """
@dataclasses.dataclass
class Result:
    value: torch.Tensor
    label: str
    extras: dict

def f(x):
    r = Result(x * 2, f"n={x.shape[0]}", {"max": x.max()})
    r.extras["min"] = x.min()
    return r

def inputs(i):
    return (rand(3, seed=i, grad=True),)
""")

_program("ret-closure-over-module-state", (1, 0), """
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        feats = x.relu()
        def project(scale):
            return self.fc(feats) * scale
        return project

head = Head()

def f(x):
    project = head(x)
    return project(2.0), project

def probe_args():
    return (3.0,)

def inputs(i):
    return (rand(2, 3, seed=i, grad=True),)
""")

_program("ret-generator-consumed-by-caller", (1, 0), """
def f(x):
    def rows():
        for r in x.unbind(0):
            yield r * 2
    g = rows()
    first = next(g)
    return first, list(g)

def inputs(i):
    return (rand(3, 2, seed=i, grad=True),)
""")

# ---- session 11: training steps in one function ----

_program("train-rmsprop-multistep", (4, 1), """
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.9)
sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 2], gamma=0.5)

def f(x, y):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    return loss.detach(), norm, sched.get_last_lr()

def inputs(i):
    return rand(6, 4, seed=i), rand(6, 1, seed=10 + i)

def observe():
    return [p.detach() for p in model.parameters()]
""")

_program("train-adagrad-clip-value-cosine", (3, 1), """
torch.manual_seed(0)
model = nn.Linear(3, 2)
opt = torch.optim.Adagrad(model.parameters(), lr=0.1, weight_decay=0.01)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)

def f(x, target):
    logits = model(x)
    loss = F.cross_entropy(logits, target)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_value_(model.parameters(), 0.05)
    opt.step()
    sched.step()
    return loss.item(), opt.param_groups[0]["lr"]

def inputs(i):
    return rand(5, 3, seed=i), torch.tensor([0, 1, 1, 0, 1])

def observe():
    return model.weight.detach(), model.bias.detach()
""")

_program("train-ema-of-params", (3, 0), """
torch.manual_seed(0)
model = nn.Linear(3, 3)
ema = [p.detach().clone() for p in model.parameters()]
opt = torch.optim.SGD(model.parameters(), lr=0.1)

def f(x):
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    with torch.no_grad():
        for e, p in zip(ema, model.parameters()):
            e.mul_(0.9).add_(p, alpha=0.1)
    return loss.detach()

def inputs(i):
    return (rand(4, 3, seed=i),)

def observe():
    return ema, [p.detach() for p in model.parameters()]
""")

_program("train-batchnorm-step-params-vector", (3, 1), """
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.5, weight_decay=1e-3)

def f(x, y):
    model.train()
    opt.zero_grad()
    out = model(x)
    loss = F.smooth_l1_loss(out, y)
    loss.backward()
    opt.step()
    vec = nn.utils.parameters_to_vector(model.parameters())
    return loss.detach(), vec.detach().norm()

def inputs(i):
    return rand(6, 3, seed=i), rand(6, 1, seed=20 + i)

def observe():
    return model[1].running_mean, [p.detach() for p in model.parameters()]
""")

_program("train-step-returns-metrics-dict", (3, 2), """
torch.manual_seed(0)
model = nn.Linear(4, 3)
opt = torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.8, 0.99))
history = []

def f(x, target):
    model.train()
    logits = model(x)
    loss = F.cross_entropy(logits, target, label_smoothing=0.1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    acc = (logits.argmax(-1) == target).float().mean()
    metrics = {"loss": loss.detach(), "acc": acc, "step": len(history) + 1}
    history.append(metrics["step"])
    return metrics

def inputs(i):
    return rand(5, 4, seed=i), torch.tensor([0, 2, 1, 1, 0])

def observe():
    return list(history), model.weight.detach()
""")

_program("train-two-optimizers-gan-style", (5, 0), """
torch.manual_seed(0)
gen = nn.Linear(2, 3)
disc = nn.Linear(3, 1)
opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)

def f(z, real):
    fake = gen(z)
    d_loss = F.softplus(-disc(real)).mean() + F.softplus(disc(fake.detach())).mean()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = F.softplus(-disc(fake)).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    return d_loss.detach(), g_loss.detach()

def inputs(i):
    return rand(4, 2, seed=i), rand(4, 3, seed=30 + i)

def observe():
    return gen.weight.detach(), disc.weight.detach()
""")
