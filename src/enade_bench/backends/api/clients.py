"""The providers' official SDK clients, configured once (our retries replace theirs)."""

from __future__ import annotations

from typing import Any

from enade_bench.backends.api.wire import DEFAULT_BASE_URLS, OPENAI_FAMILY
from enade_bench.config import ApiConfig
from enade_bench.errors import UserError


def base_url_for(cfg: ApiConfig) -> str | None:
    """``model.api.base_url`` or the provider's default (None: the SDK's own default)."""
    if cfg.base_url:
        return cfg.base_url
    if cfg.provider == "openai_compatible":
        raise UserError(
            "model.api.base_url: provider 'openai_compatible' needs the server's URL, "
            "e.g. http://127.0.0.1:8000/v1"
        )
    return DEFAULT_BASE_URLS.get(cfg.provider)


def make_sdk_client(cfg: ApiConfig, key: str) -> Any:
    """An ``openai.OpenAI``, ``anthropic.Anthropic`` or ``google.genai.Client``.

    The SDKs' own retries are switched off: :mod:`.resilience` retries instead,
    so that the request budget and ``Retry-After`` handling are the same everywhere.
    """
    base_url = base_url_for(cfg)
    if cfg.provider in OPENAI_FAMILY:
        import openai  # noqa: PLC0415 (optional or heavy dependency, imported at use)

        return openai.OpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=cfg.timeout_s)
    if cfg.provider == "anthropic":
        import anthropic  # noqa: PLC0415 (optional or heavy dependency, imported at use)

        return anthropic.Anthropic(api_key=key, base_url=base_url, max_retries=0, timeout=cfg.timeout_s)
    if cfg.provider == "google":
        from google import genai  # noqa: PLC0415 (optional or heavy dependency, imported at use)
        from google.genai import types  # noqa: PLC0415 (optional or heavy dependency, imported at use)

        options = types.HttpOptions(
            base_url=base_url,
            timeout=int(cfg.timeout_s * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        return genai.Client(api_key=key, http_options=options)
    raise UserError(f"model.api.provider: unknown provider '{cfg.provider}'")  # pragma: no cover
