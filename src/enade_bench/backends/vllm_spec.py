"""``model.type: vllm``: the in-process vLLM engine (registry entry).

Importing this module imports neither vLLM nor torch; :func:`check` imports vLLM's
``EngineArgs`` to check ``model.vllm`` (vLLM not installed is an ``error:`` line).
"""

from __future__ import annotations

from enade_bench.backends.factory import BackendSpec
from enade_bench.backends.hf_load import resolve_source
from enade_bench.backends.hf_spec import capabilities, local_info  # every method, as causal_lm
from enade_bench.backends.model_info import ModelInfo
from enade_bench.backends.vllm_local import create_vllm_backend, engine_kwargs
from enade_bench.config import ModelConfig, VllmConfig


def check(cfg: ModelConfig) -> None:
    """The weights can be found and ``model.vllm`` is a valid engine setting for this vLLM."""

    engine_kwargs(cfg, resolve_source(cfg).location)


def inspect(cfg: ModelConfig) -> ModelInfo:
    """The tokenizer the engine is given, and ``model.vllm.max_model_len`` or the model's own."""
    return local_info(cfg, (cfg.vllm or VllmConfig()).max_model_len, "model.vllm.max_model_len")


SPEC = BackendSpec(
    create=create_vllm_backend,
    capabilities=capabilities,
    check=check,
    inspect=inspect,
    description="the same local models as causal_lm, run in-process by vLLM",
)
