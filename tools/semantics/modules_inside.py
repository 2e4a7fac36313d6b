"""nn.Modules constructed inside the compiled function; `in` on dicts keyed by tensors or torch.Size."""
import torch
import torch.nn as nn
from harness import probe, T, main

G = "modules"


@probe(G)
def softmax_module_inline(x):
    return nn.Softmax(dim=-1)(x * 2)


@probe(G)
def relu_module_inline(x):
    return nn.ReLU()(x) + nn.GELU()(x)


@probe(G)
def sequential_of_activations(x):
    return nn.Sequential(nn.ReLU(), nn.Tanh())(x)


@probe(G)
def dropout_eval_inline(x):
    d = nn.Dropout(0.5)
    d.eval()
    return d(x)


@probe(G)
def identity_flatten(x):
    return nn.Flatten()(nn.Identity()(x.unsqueeze(0)))


class _Scale(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s

    def forward(self, x):
        return x * self.s


@probe(G)
def user_module_inline(x):
    return _Scale(3.0)(x)


@probe(G)
def user_module_in_list(x):
    ms = nn.ModuleList([_Scale(2.0), _Scale(0.5)])
    for m in ms:
        x = m(x)
    return x


@probe(G)
def linear_constructed_inside(x):
    torch.manual_seed(0)
    lin = nn.Linear(3, 2)
    return lin(x)


@probe(G)
def layernorm_inside(x):
    return nn.LayerNorm(3)(x)


@probe(G)
def module_attr_setting_inside(x):
    m = _Scale(1.0)
    m.s = 4.0
    m.extra = 1
    return m(x) + m.extra


@probe(G, args=lambda: (T(), {}))
def size_as_dict_key(x, cache):
    if x.shape not in cache:
        cache[x.shape] = 1
    return x + cache[x.shape]


@probe(G)
def tensor_as_dict_key(x):
    d = {x: 1}
    return x + (1 if x in d else 0) + d[x]


_PARAM = nn.Parameter(torch.ones(2, 3))


@probe(G)
def param_as_dict_key(x):
    d = {"a": x, _PARAM: 3}
    return d["a"] + d[_PARAM] + (1 if _PARAM in d else 0)


@probe(G)
def tensor_in_list_identity(x):
    y = x + 1
    l = [x, y]
    return y * 2 if any(t is y for t in l) else y


@probe(G)
def tensor_key_not_in(x):
    y = x.clone()
    d = {x: 1}
    return x + (1 if y not in d else 0)


@probe(G)
def size_in_set(x):
    s = {torch.Size([2, 3]), torch.Size([4])}
    return x + (1 if x.shape in s else 0)


@probe(G)
def module_children_inside(x):
    m = nn.Sequential(nn.ReLU(), _Scale(2.0))
    return x + len(list(m.children())) + sum(1 for _ in m.modules())


@probe(G)
def functional_inside_module_call(x):
    m = nn.Sequential(nn.Identity())
    return torch.nn.functional.softmax(m(x), dim=-1)


if __name__ == "__main__":
    main(G)
