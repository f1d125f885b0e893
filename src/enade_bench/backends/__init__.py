"""Model backends by ``model.type``: local Hugging Face models (incl. GGUF), vLLM, APIs, plug-ins.

The public API: :func:`create_backend`, :func:`check_backend` (every check before
loading), :func:`check_capabilities`, :func:`inspect_model` (tokenizer and context
length without weights), and :class:`BackendSpec` for plug-in backends (entry-point
group ``enade_bench.backends``, see :mod:`.factory`).
"""

from enade_bench.backends.base import (
    Backend,
    ContinuationScore,
    FirstTokenBackend,
    Generation,
    GenerationBackend,
    GenerationParams,
    LogProbBackend,
)
from enade_bench.backends.factory import (
    BackendSpec,
    backend_options,
    check_backend,
    check_capabilities,
    create_backend,
    inspect_model,
)
from enade_bench.backends.model_info import ModelInfo, TokenCounter

__all__ = [
    "Backend",
    "BackendSpec",
    "ContinuationScore",
    "FirstTokenBackend",
    "Generation",
    "GenerationBackend",
    "GenerationParams",
    "LogProbBackend",
    "ModelInfo",
    "TokenCounter",
    "backend_options",
    "check_backend",
    "check_capabilities",
    "create_backend",
    "inspect_model",
]
