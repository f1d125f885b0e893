"""API backends: Anthropic, OpenAI, Maritaca, Google Gemini, NVIDIA NIM, OpenAI-compatible servers.

``create_api_backend(cfg)`` is what :func:`enade_bench.backends.factory.create_backend`
calls for ``model.type: api``.  See docs/providers.md for configs, keys, capabilities,
retries and the batch workflow.
"""

from __future__ import annotations

from enade_bench.backends.api.backend import ApiBackend, capabilities_for
from enade_bench.backends.api.keys import ENV_VARS, resolve_api_key
from enade_bench.backends.api.resilience import ApiUnavailableError
from enade_bench.config import ApiConfig


def create_api_backend(cfg: ApiConfig) -> ApiBackend:
    """Build the backend for an ``api`` block (reads the key, creates the SDK client).

    Raises
    ------
    UserError
        No key configured, or ``openai_compatible`` without a ``base_url``.
    """
    return ApiBackend(cfg, resolve_api_key(cfg))


__all__ = [
    "ENV_VARS",
    "ApiBackend",
    "ApiUnavailableError",
    "capabilities_for",
    "create_api_backend",
    "resolve_api_key",
]
