"""Build one zoo model and its inputs (random weights, no downloads), in eval mode on the requested device.

`build(entry, device)` returns a Built: the module, the call's args and kwargs. timm and torchvision models use
their registries with `pretrained=False` / `weights=None` and inputs of the size they expect; Hugging Face models
come from their config class with every size shrunk (2 layers, hidden size 64, 4 heads, small vocabulary;
sub-configs such as `text_config` shrunk alike) and inputs chosen from the model's forward signature.
"""
from __future__ import annotations

import dataclasses
import inspect

import torch

from tools.zoo.catalogue import HF_HEADS, Entry

__all__ = ["Built", "BuildError", "build", "shrink_config"]


class BuildError(Exception):
    """The model or its inputs could not be made, or eager PyTorch fails on them: not a compiler's problem."""


@dataclasses.dataclass
class Built:
    model: torch.nn.Module
    args: tuple
    kwargs: dict


def build(entry: Entry, device: torch.device) -> Built:
    makers = {"timm": _timm, "tv": _torchvision, "hf": _hf}
    torch.manual_seed(0)
    try:
        built = makers[entry.library](entry)
    except BuildError:
        raise
    except Exception as exc:  # a config or constructor that rejects the shrunk sizes, an optional dependency, ...
        raise BuildError(f"{type(exc).__name__}: {exc}") from exc
    built.model.eval().to(device)
    built.args = tuple(_to(a, device) for a in built.args)
    built.kwargs = {k: _to(v, device) for k, v in built.kwargs.items()}
    return built


def _to(value, device):
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, list):
        return [_to(v, device) for v in value]
    return value


# -- timm and torchvision -----------------------------------------------------------------------------------
def _timm(entry: Entry) -> Built:
    import timm  # lazy: the child imports only the library of its model
    model = timm.create_model(entry.model, pretrained=False)
    size = tuple(model.pretrained_cfg.get("input_size", (3, 224, 224)))
    return Built(model, (torch.randn(1, *size),), {})


#: torchvision inputs by kind: video clips as (batch, channels, frames, height, width)
_TV_VIDEO_FRAMES = {"mvit_v1_b": 16, "mvit_v2_s": 16, "s3d": 16}
_TV_IMAGE_SIZE = {"inception_v3": 299, "mvit_v1_b": 224, "mvit_v2_s": 224}


def _torchvision(entry: Entry) -> Built:
    import torchvision.models as tvm  # lazy: the child imports only the library of its model
    options: dict = {"weights": None}
    size = _TV_IMAGE_SIZE.get(entry.model, 224)
    if entry.kind == "detection":
        options["weights_backbone"] = None
        if "rcnn" in entry.model or "retinanet" in entry.model or "fcos" in entry.model:
            options.update(min_size=224, max_size=224)  # the 800-pixel default is minutes per call on a CPU
        model = tvm.get_model(entry.model, **options)
        return Built(model, ([torch.rand(3, size, size)],), {})
    if entry.kind == "segmentation":
        options["weights_backbone"] = None
    if entry.kind == "video":
        frames = _TV_VIDEO_FRAMES.get(entry.model, 8)
        size = _TV_IMAGE_SIZE.get(entry.model, 112)
        return Built(tvm.get_model(entry.model, **options), (torch.randn(1, 3, frames, size, size),), {})
    if entry.kind == "optical_flow":
        images = (torch.rand(1, 3, 128, 128), torch.rand(1, 3, 128, 128))
        return Built(tvm.get_model(entry.model, **options), images, {"num_flow_updates": 4})
    return Built(tvm.get_model(entry.model, **options), (torch.randn(1, 3, size, size),), {})


# -- Hugging Face -------------------------------------------------------------------------------------------
#: config attribute -> shrunk value (only attributes the config has are set)
_SIZES = {
    ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers",
     "num_encoder_layers", "num_decoder_layers"): 2,
    ("hidden_size", "d_model", "n_embd", "embed_dim", "dim", "hidden_dim_model"): 64,
    ("num_attention_heads", "n_head", "n_heads", "encoder_attention_heads", "decoder_attention_heads"): 4,
    ("num_key_value_heads", "num_kv_heads", "multi_query_group_num"): 2,
    ("intermediate_size", "d_ff", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "n_inner", "hidden_dim"): 128,
    ("head_dim", "d_kv", "attention_head_size", "qk_rope_head_dim", "v_head_dim"): 16,
    ("num_local_experts", "num_experts", "n_routed_experts"): 4,
    ("num_experts_per_tok", "moe_topk"): 2,
    ("moe_intermediate_size", "shared_expert_intermediate_size", "expert_intermediate_size"): 64,
    ("max_source_positions",): 64,
}
_LAYERS = next(iter(_SIZES))
_VOCAB = 1024


def shrink_config(config) -> None:
    """Shrink a transformers config in place (and its sub-configs): 2 layers, width 64, 4 heads, vocab 1024."""
    layers_before = next((getattr(config, a) for a in _LAYERS if isinstance(getattr(config, a, None), int)),
                         None)
    for names, value in _SIZES.items():
        for name in names:
            current = getattr(config, name, None)
            if isinstance(current, int) and not isinstance(current, bool) and current > value:
                setattr(config, name, value)
    vocab = getattr(config, "vocab_size", None)
    if isinstance(vocab, int) and vocab > _VOCAB:
        ids = [getattr(config, a, None) for a in ("pad_token_id", "bos_token_id", "eos_token_id",
                                                  "decoder_start_token_id", "sep_token_id", "cls_token_id")]
        ids = [i for i in ids if isinstance(i, int)]
        config.vocab_size = max([_VOCAB] + [i + 1 for i in ids])
    for name, value in list(vars(config).items()):
        if isinstance(value, list) and layers_before and len(value) == layers_before > 2:
            setattr(config, name, value[:2])  # per-layer settings (layer_types, ...) follow the layer count
        elif hasattr(value, "to_dict") and hasattr(value, "model_type") and value is not config:
            shrink_config(value)



def _hf(entry: Entry) -> Built:
    import transformers  # lazy: the child imports only the library of its model
    config = transformers.AutoConfig.for_model(entry.model)
    shrink_config(config)
    if entry.head == "seq_cls" and getattr(config, "pad_token_id", None) is None:
        config.pad_token_id = 0  # batch size 1 needs no padding, but the head insists on knowing the id
    auto = getattr(transformers, HF_HEADS[entry.head] if entry.head else "AutoModel")
    model = auto.from_config(config)
    model.eval()
    for kwargs in _hf_inputs(model, config):
        try:
            with torch.no_grad():
                model(**kwargs)
        except Exception as exc:  # these inputs do not fit; try the next set
            last = exc
            continue
        return Built(model, (), kwargs)
    raise BuildError(f"eager fails on every input tried: {type(last).__name__}: {last}")


def _sub(config, *names):
    """The first of these sub-configs the config has, else the config itself."""
    for name in names:
        sub = getattr(config, name, None)
        if sub is not None and hasattr(sub, "to_dict"):
            return sub
    return config


def _image(config) -> torch.Tensor:
    vision = _sub(config, "vision_config", "backbone_config")
    size = getattr(vision, "image_size", None) or getattr(config, "image_size", None) or 224
    size = tuple(size) if isinstance(size, (list, tuple)) else (size, size)
    channels = getattr(vision, "num_channels", 3)
    return torch.randn(1, channels, *size[-2:])


def _hf_inputs(model, config):
    """Sets of inputs to try, most likely first: the model's main input (with decoder ids for encoder-decoders),
    then text and image together for models that need both."""
    params = inspect.signature(model.forward).parameters
    text = _sub(config, "text_config", "decoder")
    vocab = min(getattr(text, "vocab_size", None) or _VOCAB, _VOCAB)
    ids = torch.randint(3, max(vocab, 4), (1, 16))
    decoder = {"decoder_input_ids": ids[:, :8].clone()} if "decoder_input_ids" in params else {}
    main = getattr(model, "main_input_name", "input_ids")
    if main == "pixel_values":
        yield {"pixel_values": _image(config)}
    elif main == "input_values":
        yield {"input_values": torch.randn(1, 16000), **decoder}
    elif main == "input_features":
        mels = getattr(config, "num_mel_bins", None) or getattr(config, "feature_size", 80)
        yield {"input_features": torch.randn(1, mels, 2 * getattr(config, "max_source_positions", 64)), **decoder}
    yield {"input_ids": ids, **decoder}
    if "pixel_values" in params:
        yield {"input_ids": ids, "pixel_values": _image(config), **decoder}
