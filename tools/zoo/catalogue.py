"""Which models the zoo runs: one per timm family, the torchvision models that build with `weights=None`, and the
Hugging Face architectures `AutoModel` (and the causal-LM / sequence-classification heads) can build.

An entry is a name such as `timm/resnet18`, `tv/resnet18`, `hf/bert` or `hf/gpt2:causal_lm`: the library, the
model, and for Hugging Face the head. Listing needs the libraries' registries only (no model is built here); the
smallest model of each timm and torchvision family comes from `families.json`, made by `python -m
tools.zoo.catalogue --refresh` (it builds every model on the meta device and keeps the one with the fewest
parameters).
Entry points: `all_entries(libraries)`, `SMALL`, `select(...)`.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
import re

__all__ = ["Entry", "LIBRARIES", "SMALL", "all_entries", "select", "parse"]

LIBRARIES = ("timm", "tv", "hf")
_FAMILIES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "families.json")

#: Hugging Face heads the zoo builds besides the bare backbone, and the Auto class that builds each.
HF_HEADS = {"causal_lm": "AutoModelForCausalLM", "seq_cls": "AutoModelForSequenceClassification"}

#: Small and fast on 2 CPU cores, across the three libraries and the main kinds (CNN, transformer blocks,
#: encoder-decoder, mixture of experts, causal LM and classification heads): `--small`, and `make test`.
SMALL = (
    "timm/test_resnet", "timm/test_vit", "timm/test_efficientnet", "tv/mobilenet_v3_small", "tv/shufflenet_v2_x0_5",
    "hf/bert", "hf/gpt2:causal_lm", "hf/t5", "hf/mixtral", "hf/distilbert:seq_cls",
)

#: torchvision modules whose models the zoo runs, with the kind each one is (builders and inputs differ)
TV_KINDS = ("classification", "detection", "segmentation", "video", "optical_flow")

#: Hugging Face architectures people run most: listed first, so `--limit` keeps them
HF_FIRST = ("bert", "gpt2", "t5", "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "bart", "roberta",
            "distilbert", "vit", "whisper", "clip", "albert", "electra", "deberta-v2", "gpt_neox", "phi", "gemma",
            "opt", "bloom", "falcon", "mpnet", "xlm-roberta", "longformer", "led", "mobilevit", "swin", "convnext",
            "wav2vec2", "mt5", "pegasus", "marian", "gptj", "codegen", "qwen3", "qwen3_moe", "olmo", "granite",
            "dinov2", "segformer", "beit", "deit", "resnet", "mobilebert", "funnel", "squeezebert", "ernie")

#: timm families run first (the most used ones), so `--limit` keeps them
TIMM_FIRST = ("resnet", "efficientnet", "vision_transformer.vit", "convnext", "mobilenetv3", "regnet.regnety",
              "swin_transformer", "deit", "densenet", "vgg", "inception_v3", "beit", "maxxvit.maxvit", "mobilevit",
              "levit", "coat", "xcit", "dla", "dpn", "ghostnet", "hrnet", "rexnet", "nfnet", "byobnet.repvgg",
              "cait", "crossvit", "edgenext", "efficientformer", "fastvit", "metaformer.poolformer", "pvt_v2",
              "repvit", "tiny_vit", "eva", "mlp_mixer.mixer")


@dataclasses.dataclass(frozen=True)
class Entry:
    """One model of the zoo: `library` is timm, tv or hf; `model` the name its library knows it by; `head` a key of
    HF_HEADS (Hugging Face only; "" for the bare model); `kind` the torchvision kind or the timm family."""
    library: str
    model: str
    head: str = ""
    kind: str = ""

    @property
    def name(self) -> str:
        return f"{self.library}/{self.model}" + (f":{self.head}" if self.head else "")


def parse(name: str) -> Entry:
    """The entry a name such as `hf/gpt2:causal_lm` stands for (its kind looked up for torchvision)."""
    library, _, rest = name.partition("/")
    if library not in LIBRARIES or not rest:
        raise ValueError(f"zoo model names look like timm/NAME, tv/NAME or hf/TYPE[:HEAD], got {name!r}")
    model, _, head = rest.partition(":")
    if head and head not in HF_HEADS:
        raise ValueError(f"unknown head {head!r} in {name!r}; heads: {', '.join(HF_HEADS)}")
    kind = _tv_kind(model) if library == "tv" else ""
    return Entry(library, model, head, kind)


def _ordered(names, first) -> list:
    """names with those in `first` leading (in first's order), the rest sorted."""
    rank = {name: i for i, name in enumerate(first)}
    return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))


# -- timm and torchvision: one model per family ------------------------------------------------------------
def timm_family(model: str, module: str) -> str:
    """The family of a timm model: its module, and within a module holding several architectures (byobnet,
    vision_transformer, ...) the name's first word up to its first digit (resnet50d and resnet101 are resnets,
    seresnext26t a seresnext)."""
    word = re.sub(r"\d.*$", "", model.split("_")[0])
    return module if word in ("", module, re.sub(r"\d.*$", "", module.split("_")[0])) else f"{module}.{word}"


_TV_SIZE_WORD = re.compile(r"^(\d.*|x\d.*|[tsblhm]|tiny|small|base|large|huge|\d+[a-z]+|bn)$")


def tv_family(model: str) -> str:
    """The family of a torchvision classifier: its name without size words (resnet18 -> resnet,
    mobilenet_v3_small -> mobilenet_v3, regnet_y_400mf -> regnet_y, vit_b_16 -> vit)."""
    words = [w for w in model.split("_") if not _TV_SIZE_WORD.match(w)]
    last = len(words) - 1
    return "_".join(re.sub(r"\d+$", "", w) if i == last and not re.fullmatch(r"v\d+", w) else w
                    for i, w in enumerate(words)) or model


def _smallest(models, family_of, make) -> dict:
    """{family: the model with the fewest parameters}, each built on the meta device (no memory, no time).
    A family's models are built smallest-sounding name first and at most 12 of them (a catalogue refresh
    should take minutes, not an hour)."""
    import torch  # lazy: only a catalogue refresh builds models in the parent process
    best: dict = {}
    tried: dict = {}
    for model in sorted(models, key=_size_rank):
        family = family_of(model)
        tried[family] = tried.get(family, 0) + 1
        if tried[family] > 12:
            continue
        try:
            with torch.device("meta"):
                built = make(model)
        except Exception:  # a model its own registry cannot build: not a family member we can run
            continue
        params = sum(p.numel() for p in built.parameters())
        if family not in best or params < best[family][1]:
            best[family] = (model, params)
    return {family: model for family, (model, _) in sorted(best.items())}


_SIZE_WORDS = ("atto", "zepto", "femto", "pico", "nano", "xxs", "xxtiny", "xs", "tiny", "ti", "mini", "small",
               "s", "t", "b0", "m0", "lite0", "base")


def _size_rank(model: str):
    """Smaller-sounding names first: a size word, then the first number in the name (depth or width)."""
    words = re.split(r"[_\d]+", model) + model.split("_")
    word = min((_SIZE_WORDS.index(w) for w in words if w in _SIZE_WORDS), default=len(_SIZE_WORDS))
    number = next((int(n) for n in re.findall(r"\d+", model)), 0)
    return (word, number, model)


def refresh_families(path: str = _FAMILIES_FILE) -> dict:
    """Write {"timm": {family: smallest model}, "tv": {...}} to `path` (a few minutes: every model is built)."""
    import timm  # lazy: only a catalogue refresh needs the libraries in the parent process
    import torchvision.models as tvm  # lazy: as above
    from timm.models._registry import _model_to_module  # lazy: as above

    families = {
        # test_* models are toy configurations of their family: --small runs them, the families run real ones
        "timm": _smallest([m for m in timm.list_models() if not m.startswith("test_")],
                          lambda m: timm_family(m, _model_to_module[m]),
                          lambda m: timm.create_model(m, pretrained=False)),
        "tv": _smallest(_tv_classifiers(), tv_family, lambda m: tvm.get_model(m, weights=None)),
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(families, handle, indent=1, sort_keys=True)
        handle.write("\n")
    return families


def _families(library: str) -> dict:
    with open(_FAMILIES_FILE, encoding="utf-8") as handle:
        return json.load(handle)[library]


def timm_entries() -> list:
    families = _families("timm")
    return [Entry("timm", families[family], kind=family) for family in _ordered(families, TIMM_FIRST)]


def _tv_kind(model: str) -> str:
    import torchvision.models as tvm  # lazy: only torchvision entries need it
    for kind in TV_KINDS[1:]:
        if model in tvm.list_models(module=getattr(tvm, kind)):
            return kind
    return "classification"


def _tv_classifiers() -> list:
    import torchvision.models as tvm  # lazy: only torchvision entries need it
    others = {m for kind in TV_KINDS[1:] for m in tvm.list_models(module=getattr(tvm, kind))}
    return [m for m in tvm.list_models(module=tvm) if m not in others and not m.startswith("quantized_")]


def tv_entries() -> list:
    """One classifier per family (the smallest), then every detection, segmentation, video and flow model."""
    import torchvision.models as tvm  # lazy: only torchvision entries need it
    families = _families("tv")
    entries = [Entry("tv", families[family], kind="classification") for family in sorted(families)]
    for kind in TV_KINDS[1:]:
        entries += [Entry("tv", model, kind=kind) for model in tvm.list_models(module=getattr(tvm, kind))]
    return entries


# -- Hugging Face -------------------------------------------------------------------------------------------
def hf_entries() -> list:
    from transformers.models.auto import modeling_auto  # lazy: only Hugging Face entries need it
    bare = modeling_auto.MODEL_MAPPING_NAMES
    heads = {"causal_lm": modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
             "seq_cls": modeling_auto.MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES}
    entries = [Entry("hf", model_type) for model_type in _ordered(bare, HF_FIRST)]
    for head, mapping in heads.items():
        entries += [Entry("hf", model_type, head) for model_type in _ordered(mapping, HF_FIRST)]
    return entries


# -- selection ----------------------------------------------------------------------------------------------
def all_entries(libraries=LIBRARIES) -> list:
    """Every entry of these libraries, interleaved (timm, tv, hf, timm, ...) so that a prefix covers all three."""
    makers = {"timm": timm_entries, "tv": tv_entries, "hf": hf_entries}
    lists = [makers[library]() for library in libraries]
    merged = []
    for row in range(max((len(lst) for lst in lists), default=0)):
        merged += [lst[row] for lst in lists if row < len(lst)]
    return merged


def select(*, small: bool = False, only=None, libraries=LIBRARIES, limit=None, skip: int = 0) -> list:
    """The entries a run asked for: `--small`, or `--only` patterns (exact names or globs), within `libraries`;
    then `skip` entries dropped and at most `limit` kept (to run the zoo in chunks)."""
    if only:
        known = {entry.name: entry for entry in all_entries(libraries)}
        chosen = []
        for pattern in only:
            matches = [e for n, e in known.items() if fnmatch.fnmatchcase(n, pattern)]
            if not matches and not any(c in pattern for c in "*?["):
                matches = [parse(pattern)]  # a name outside the catalogue (another timm variant, say)
            if not matches:
                raise ValueError(f"--only {pattern!r} matches no model of the zoo")
            chosen += [e for e in matches if e not in chosen]
    elif small:
        chosen = [parse(name) for name in SMALL if name.split("/")[0] in libraries]
    else:
        chosen = all_entries(libraries)
    chosen = chosen[skip:]
    return chosen if limit is None else chosen[:limit]


if __name__ == "__main__":
    import sys
    if sys.argv[1:] == ["--refresh"]:
        written = refresh_families()
        print(f"{len(written['timm'])} timm and {len(written['tv'])} torchvision families in {_FAMILIES_FILE}")
    else:
        for entry in all_entries():
            print(entry.name)
