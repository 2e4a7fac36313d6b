"""Dynamic shapes: graphs and compile time over size sweeps, jitcore against torch.compile in one process.

    PYTHONPATH=. python tools/bench_dynamic.py [--backend eager]

Rows (issue 14's sweeps): a 2-layer MLP over batch 2..9, hand-written causal attention over (batch, length),
`nn.Sequential` of Linear/LayerNorm/GELU over batch 2, 3, 5, 8, 13, 21, a pointwise function with `dynamic=True`
over batch 3, 5, 7, 9, a training step (forward, loss, backward) over batch sizes, and, when the zoo extra is
installed (`pip install -e '.[zoo]'`), Hugging Face BERT and GPT-2 (2-layer configs) over (batch, length) with
lengths 16-128, and a torchvision ResNet-18 over image sizes 32-64. Columns: graphs each compiler made over the
sweep, the sweep's total wall time (every call, so every compile; Inductor's on-disk caches off unless
`--keep-caches`), and the steady time per call at the last shape (5 alternating rounds of 20 calls, the best
round's median), for each. Every call is checked against eager. `--repeat N` runs each row's sweeps N times,
fresh compilers each time, alternating which compiler goes first, and reports the median sweep of each (a full
garbage collection before every sweep, so that neither pays for the other's garbage).

Run: `.venv/bin/python tools/bench_dynamic.py [--backend eager] [--device cpu] [--only bert,gpt2] [--threads 1]`;
on a GPU machine `--backend inductor --device cuda`.
"""
from __future__ import annotations

import argparse
import gc
import importlib
import math
import statistics
import time

import torch
import torch.nn.functional as F

import jitcore as jit


class _Counter:
    """A backend wrapper that counts graphs and hands each to the named backend."""

    def __init__(self, name: str):
        self.name = name
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        if self.name == "eager":
            return gm.forward
        from jitcore import backends  # lazy: only the non-eager backends need the registry
        return backends.lookup(self.name)(gm, example_inputs)


def _mlp_case(device):
    w1, b1, w2 = (torch.randn(32, 64, device=device), torch.randn(64, device=device),
                  torch.randn(64, 8, device=device))

    def mlp(x):
        return torch.relu(x @ w1 + b1) @ w2

    return mlp, [(torch.randn(b, 32, device=device),) for b in range(2, 10)], None


def _attention_case(device):
    def attention(q, k, v):
        t = q.shape[1]
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=q.device), diagonal=1)
        return torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1) @ v

    shapes = [(1, 16), (1, 17), (2, 31), (2, 64), (3, 100), (4, 128), (1, 5)]
    return attention, [tuple(torch.randn(b, t, 16, device=device) for _ in range(3)) for b, t in shapes], None


def _sequential_case(device):
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.LayerNorm(64), torch.nn.GELU(),
                                torch.nn.Linear(64, 8)).to(device)
    return model, [(torch.randn(b, 32, device=device),) for b in (2, 3, 5, 8, 13, 21)], None


def _pointwise_case(device):
    def pointwise(x):
        return torch.sin(x) * 2 + torch.cos(x)

    return pointwise, [(torch.randn(b, 64, device=device),) for b in (3, 5, 7, 9)], True


def _training_case(device):
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1)).to(device)

    def step(x, y):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        return loss

    return step, [(torch.randn(b, 16, device=device), torch.randn(b, 1, device=device)) for b in (2, 3, 5, 8, 13)], None


#: (batch, length) pairs of the language-model rows: lengths 16-128, batch 1-4
TEXT_SHAPES = [(1, 16), (1, 17), (2, 31), (2, 64), (3, 100), (4, 128), (1, 128), (4, 16)]


def _text_case(model, device):
    model = model.to(device).eval()

    @torch.no_grad()
    def encode(ids):
        return model(input_ids=ids).last_hidden_state

    generator = torch.Generator().manual_seed(0)
    calls = [(torch.randint(0, 1000, (b, t), generator=generator).to(device),) for b, t in TEXT_SHAPES]
    return encode, calls, None


def _bert_case(device):
    import transformers  # lazy: an optional extra (the zoo's)
    config = transformers.BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=128, max_position_embeddings=256)
    torch.manual_seed(0)
    return _text_case(transformers.BertModel(config), device)


def _gpt2_case(device):
    import transformers  # lazy: an optional extra (the zoo's)
    config = transformers.GPT2Config(vocab_size=1000, n_embd=64, n_layer=2, n_head=2, n_positions=256)
    torch.manual_seed(0)
    return _text_case(transformers.GPT2Model(config), device)


def _cnn_case(device):
    import torchvision  # lazy: an optional extra (the zoo's)
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).to(device).eval()

    @torch.no_grad()
    def classify(images):
        return model(images)

    return classify, [(torch.randn(2, 3, size, size, device=device),) for size in (32, 40, 48, 56, 64)], None


CASES = {"mlp batch 2..9": _mlp_case, "causal attention": _attention_case, "Sequential": _sequential_case,
         "pointwise dynamic=True": _pointwise_case, "training step": _training_case,
         "bert (batch, length)": _bert_case, "gpt2 (batch, length)": _gpt2_case, "resnet18 images 32..64": _cnn_case}


def _sweep(compiled, fn, calls, tolerance) -> float:
    gc.collect()
    started = time.perf_counter()
    for args in calls:
        got, want = compiled(*args), fn(*args)
        torch.testing.assert_close(got, want, rtol=tolerance, atol=tolerance)
    return time.perf_counter() - started


def _time_calls(compiled, args, device, count=20) -> float:
    """Median µs per call of `count` calls at one shape."""
    times = []
    for _ in range(count):
        if device == "cuda":
            torch.cuda.synchronize()
        started = time.perf_counter()
        compiled(*args)
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def _steady(compiled_pair, args, device, rounds=5) -> tuple:
    """Steady µs per call at one shape, after the sweeps compiled everything, for (torch.compile, jitcore): rounds
    of 20 calls each, alternating, and the best round's median of each, so that load drifting on a shared
    machine shifts both alike."""
    best = [math.inf, math.inf]
    for _ in range(rounds):
        for index, compiled in enumerate(compiled_pair):
            best[index] = min(best[index], _time_calls(compiled, args, device))
    return tuple(best)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--only", default="", help="comma-separated words; rows whose name holds one of them")
    parser.add_argument("--threads", type=int, default=0,
                        help="torch.set_num_threads (CPU); 1 keeps steady times comparable on a shared machine")
    parser.add_argument("--repeat", type=int, default=1,
                        help="sweeps per compiler and row, alternating which goes first; the median is reported")
    parser.add_argument("--keep-caches", action="store_true",
                        help="let Inductor use its on-disk caches (by default both compile from scratch)")
    options = parser.parse_args()
    if options.threads:
        torch.set_num_threads(options.threads)
    if not options.keep_caches:
        # both compile from scratch: a graph Inductor compiled in an earlier run (by either) would otherwise
        # come from its on-disk caches, and the sweep times would compare cache hits with compiles
        importlib.import_module("torch._inductor.config").force_disable_caches = True  # lazy: seconds to import
    tolerance = 1e-4 if options.backend == "eager" else 2e-3
    rows = []
    for name, make in CASES.items():
        if options.only and not any(word in name for word in options.only.split(",")):
            continue
        try:
            fn, calls, dynamic = make(options.device)
        except ImportError as missing:
            print(f"skipped {name}: {missing.name} is not installed (pip install -e '.[zoo]')")
            continue
        times = {"torch": [], "jit": []}
        for round_ in range(options.repeat):
            for who in (("torch", "jit") if round_ % 2 == 0 else ("jit", "torch")):
                counter = _Counter(options.backend)
                if who == "torch":
                    torch._dynamo.reset()
                    torch_compiled = torch.compile(fn, backend=counter, dynamic=dynamic)
                    times[who].append(_sweep(torch_compiled, fn, calls, tolerance))
                    torch_graphs = counter.graphs
                else:
                    jit_compiled = jit.compile(fn, backend=counter, dynamic=dynamic)
                    times[who].append(_sweep(jit_compiled, fn, calls, tolerance))
                    jit_graphs = counter.graphs
        torch_time, jit_time = statistics.median(times["torch"]), statistics.median(times["jit"])
        torch_steady, jit_steady = _steady((torch_compiled, jit_compiled), calls[-1], options.device)
        rows.append((name, len(calls), jit_graphs, torch_graphs, jit_time, torch_time, jit_steady, torch_steady))
    print(f"backend={options.backend} device={options.device} threads={torch.get_num_threads()} "
          f"torch={torch.__version__}")
    print("| program | calls | jitcore graphs | torch.compile graphs | jitcore sweep s | torch.compile sweep s "
          "| sweep ratio | jitcore steady µs | torch.compile steady µs | steady ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, n, jg, tg, jt, tt, js, ts in rows:
        print(f"| {name} | {n} | {jg} | {tg} | {jt:.2f} | {tt:.2f} | {jt / tt:.2f} | {js:.0f} | {ts:.0f} "
              f"| {js / ts:.2f} |")


if __name__ == "__main__":
    main()
