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
