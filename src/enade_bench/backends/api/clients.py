"""The providers' official SDK clients, configured once (our retries replace theirs).

``model.api.base_url`` is read here: ``${VAR}`` is expanded from the environment, a URL
with user-info (``http://user:pw@host/v1``) is refused (HTTP clients would send it as
``Authorization: Basic`` instead of the provider's key), and its query parameters
(``?api-version=…``) are passed to the SDK as ``default_query``, so they reach every
request instead of being glued into the path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from enade_bench.backends.api.keys import ENV_VARS, expand_env
from enade_bench.backends.api.wire import DEFAULT_BASE_URLS, OPENAI_FAMILY
from enade_bench.config import ApiConfig
from enade_bench.errors import UserError
from enade_bench.masking import mask_url


@dataclass(frozen=True)
class Endpoint:
    """Where requests go: the URL without its query, and the query sent with every request."""

    url: str | None
    query: dict[str, str] = field(default_factory=dict)


def base_url_for(cfg: ApiConfig) -> str | None:
    """``model.api.base_url`` (``${VAR}`` expanded, checked) or the provider's default.

    ``None``: the SDK's own default.

    Raises
    ------
    UserError
        ``openai_compatible`` without a URL, an unset ``${VAR}``, user-info in the URL,
        or query parameters for ``google`` (whose SDK cannot send them).
    """
    if not cfg.base_url:
        if cfg.provider == "openai_compatible":
            raise UserError(
                "model.api.base_url: provider 'openai_compatible' needs the server's URL, "
                "e.g. http://127.0.0.1:8000/v1"
            )
        return DEFAULT_BASE_URLS.get(cfg.provider)
    url = expand_env(cfg.base_url, "model.api.base_url")
    parts = urlsplit(url)
    if "@" in parts.netloc:
        raise UserError(
            f"model.api.base_url: '{mask_url(url)}' holds a user name or password, which would be sent "
            "as HTTP Basic auth instead of the provider's key; remove it from the URL and put the key "
            f"in model.api.api_key (e.g. api_key: ${{MY_KEY}}) or the environment variable "
            f"{ENV_VARS[cfg.provider]}"
        )
    if parts.query and cfg.provider == "google":
        raise UserError(
            f"model.api.base_url: '{mask_url(url)}' has query parameters, which the Gemini SDK cannot "
            f"send; remove them (the key goes in model.api.api_key or {ENV_VARS['google']})"
        )
    return url


def endpoint_for(cfg: ApiConfig) -> Endpoint:
    """:func:`base_url_for` split into the URL the SDK is given and its ``default_query``."""
    url = base_url_for(cfg)
    if url is None:
        return Endpoint(None)
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    return Endpoint(urlunsplit(parts._replace(query="", fragment="")), query)


def make_sdk_client(cfg: ApiConfig, key: str) -> Any:
    """An ``openai.OpenAI``, ``anthropic.Anthropic`` or ``google.genai.Client``.

    The SDKs' own retries are switched off: :mod:`.resilience` retries instead,
    so that the request budget and ``Retry-After`` handling are the same everywhere.
    """
    endpoint = endpoint_for(cfg)
    query = endpoint.query or None
    if cfg.provider in OPENAI_FAMILY:
        import openai  # noqa: PLC0415 (optional or heavy dependency, imported at use)

        return openai.OpenAI(
            api_key=key, base_url=endpoint.url, default_query=query, max_retries=0, timeout=cfg.timeout_s
        )
    if cfg.provider == "anthropic":
        import anthropic  # noqa: PLC0415 (optional or heavy dependency, imported at use)

        return anthropic.Anthropic(
            api_key=key, base_url=endpoint.url, default_query=query, max_retries=0, timeout=cfg.timeout_s
        )
    if cfg.provider == "google":
        from google import genai  # noqa: PLC0415 (optional or heavy dependency, imported at use)
        from google.genai import types  # noqa: PLC0415 (optional or heavy dependency, imported at use)

        options = types.HttpOptions(
            base_url=endpoint.url,
            timeout=int(cfg.timeout_s * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        return genai.Client(api_key=key, http_options=options)
    raise UserError(f"model.api.provider: unknown provider '{cfg.provider}'")  # pragma: no cover
