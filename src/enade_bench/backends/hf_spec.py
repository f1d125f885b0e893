"""``model.type: causal_lm`` and ``seq2seq``: local ``transformers`` models (registry entries).

Importing this module imports no torch; :func:`create` does, after the checks.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from enade_bench.backends.base import METHODS
from enade_bench.backends.chat_render import local_prompt_form
from enade_bench.backends.factory import BackendSpec
from enade_bench.backends.hf_load import load_model_and_tokenizer, resolve_source
from enade_bench.backends.model_info import ModelInfo, local_counter, source_context_length
from enade_bench.backends.preload import check_device
from enade_bench.config import ModelConfig
from enade_bench.errors import UserError

if TYPE_CHECKING:
    from enade_bench.backends.hf_local import HFLocalBackend


def capabilities(cfg: ModelConfig) -> frozenset[str]:
    """Every method: a local model gives log-probabilities of any token."""
    return METHODS


def check(cfg: ModelConfig) -> None:
    """The weights can be found (file, folder, packaged model, hub) and the device exists."""
    resolve_source(cfg)
    check_device(cfg.device)
    if cfg.load_in_4bit:
        try:
            check_device("cuda")
        except UserError:
            raise UserError(
                "model.load_in_4bit: needs a CUDA GPU (bitsandbytes); none is available"
            ) from None


def create(cfg: ModelConfig) -> HFLocalBackend:
    """Load the model and its tokenizer (GGUF: converted once, then cached)."""
    from enade_bench.backends.hf_local import HFLocalBackend  # noqa: PLC0415 (imports torch)

    model, tokenizer, source = load_model_and_tokenizer(cfg, resolve_source(cfg))
    return HFLocalBackend(cfg, model, tokenizer, source)


def local_info(cfg: ModelConfig, max_model_len: int | None = None, setting: str = "") -> ModelInfo:
    """A local model's tokenizer and context length: ``max_model_len`` (named ``setting``) or the model's own
    (no weights read, no GGUF converted)."""
    source = resolve_source(cfg)
    counter = local_counter(cfg, source)
    length, where = (max_model_len, setting) if max_model_len else source_context_length(cfg, source)
    return ModelInfo(
        type=cfg.type,
        capabilities=METHODS,
        prompt_form=local_prompt_form(counter.instruct),
        counter=counter,
        context_length=length,
        context_source=where,
    )


CAUSAL_LM = BackendSpec(
    create=create,
    capabilities=capabilities,
    check=check,
    inspect=local_info,
    description="a decoder-only transformers model: hub id, folder, GGUF file or pypi: package",
)
SEQ2SEQ = replace(CAUSAL_LM, description="an encoder-decoder transformers model (T5 and the like)")
