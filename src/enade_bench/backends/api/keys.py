"""API keys: where they come from, and keeping them out of everything written.

A key comes from ``model.api.api_key`` or, when that is null, from the
provider's environment variable (:data:`ENV_VARS`).  It is handed to the SDK
client and nowhere else: results store the config through
``ExperimentConfig.public_dict()`` (which masks ``api_key``), and every error
text that leaves a backend goes through :func:`redact` first.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from enade_bench.config import ApiConfig
from enade_bench.errors import UserError

#: Environment variable read for each provider when ``api_key`` is null.
ENV_VARS: dict[str, str] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "maritaca": "MARITACA",
    "google": "GEMINI",
    "nvidia": "NVIDIA_API_KEY",
    "openai_compatible": "OPENAI_COMPATIBLE_API_KEY",
}

#: Sent to OpenAI-compatible servers that need no key (vLLM, llama.cpp, Ollama without auth).
NO_KEY = "EMPTY"

#: Shortest run of key characters that :func:`redact` still treats as a leak.
_MIN_FRAGMENT = 12


def resolve_api_key(cfg: ApiConfig) -> str:
    """The key for ``cfg.provider`` from the config or the environment.

    Raises
    ------
    UserError
        When no key is configured (the message names the variable, never a value).
    """
    if cfg.api_key is not None and cfg.api_key.get_secret_value():
        return cfg.api_key.get_secret_value()
    var = ENV_VARS[cfg.provider]
    value = os.environ.get(var, "").strip()
    if value:
        return value
    if cfg.provider == "openai_compatible":
        return NO_KEY
    raise UserError(
        f"model.api.api_key: no API key for provider '{cfg.provider}'; "
        f"set the environment variable {var} or model.api.api_key"
    )


def redact(text: str, secrets: Iterable[str]) -> str:
    """Replace every secret, and any long fragment of one, by ``***``.

    Servers sometimes echo part of a key in an error message (``Incorrect API
    key provided: sk-abc…``); fragments of :data:`_MIN_FRAGMENT` characters or
    more are removed too.

    Examples
    --------
    >>> redact("bad key sk-1234567890abcdefXYZ here", ["sk-1234567890abcdefXYZ"])
    'bad key *** here'
    """
    for secret in secrets:
        if not secret or secret == NO_KEY:
            continue
        text = text.replace(secret, "***")
        if len(secret) > _MIN_FRAGMENT:
            for start in range(len(secret) - _MIN_FRAGMENT + 1):
                fragment = secret[start : start + _MIN_FRAGMENT]
                if fragment in text:
                    text = text.replace(fragment, "***")
    return text
