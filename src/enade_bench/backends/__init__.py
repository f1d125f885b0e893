"""Model backends: local Hugging Face models (incl. GGUF) and API providers."""

from enade_bench.backends.base import (
    Backend,
    ContinuationScore,
    FirstTokenBackend,
    Generation,
    GenerationBackend,
    GenerationParams,
    LogProbBackend,
)
from enade_bench.backends.factory import create_backend

__all__ = [
    "Backend",
    "ContinuationScore",
    "FirstTokenBackend",
    "Generation",
    "GenerationBackend",
    "GenerationParams",
    "LogProbBackend",
    "create_backend",
]
