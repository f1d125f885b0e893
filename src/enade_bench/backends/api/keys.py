"""API keys: where they come from, and keeping them out of everything written.

A key comes from ``model.api.api_key`` or, when that is null, from the
provider's environment variable (:data:`ENV_VARS`).  It is handed to the SDK
client and nowhere else: results store the config through
``ExperimentConfig.public_dict()`` (which masks ``api_key``), the backend registers
the key with :func:`enade_bench.masking.remember`, and every error text that leaves a
backend goes through :func:`redact` (every encoded form masked) first.  ``${VAR}`` in
``api_key`` is read from the environment (:func:`expand_env`).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Iterable

from enade_bench.config import ApiConfig
from enade_bench.errors import UserError
from enade_bench.masking import STRONG_SECRET, is_common, scrub

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

#: ``${NAME}``: an environment variable named in ``api_key`` or ``base_url``.
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_env(value: str, key: str) -> str:
    """``value`` with every ``${NAME}`` replaced by the environment variable ``NAME``.

    Raises
    ------
    UserError
        When a named variable is unset or empty (the message names the variable, never a
        value), or a ``${`` is not a whole ``${NAME}`` (``${FAKE_KEY`` is never sent literally).

    Examples
    --------
    >>> import os; os.environ["ENADE_DOC_HOST"] = "127.0.0.1"
    >>> expand_env("http://${ENADE_DOC_HOST}:8000/v1", "model.api.base_url")
    'http://127.0.0.1:8000/v1'
    """

    def value_of(match: re.Match[str]) -> str:
        name = match.group(1)
        found = os.environ.get(name, "").strip()
        if not found:
            raise UserError(
                f"{key}: '${{{name}}}' names the environment variable {name}, which is not set; "
                f"export {name}=… before the run (or write the value in the config)"
            )
        return found

    expanded = _ENV_REF.sub(value_of, value)
    rest = _ENV_REF.sub("", value)
    if "${" in rest:  # ``${NAME`` unclosed, or ``${1X}``: never sent literally as a key or a URL
        shown = rest[rest.index("${") :][:24]
        raise UserError(
            f"{key}: '{shown}' is not a complete '${{NAME}}' (a '}}' missing, or not a variable name: "
            "letters, digits and _, not starting with a digit); write ${NAME} or the value itself"
        )
    return expanded


def resolve_api_key(cfg: ApiConfig) -> str:
    """The key for ``cfg.provider``: ``model.api.api_key`` (``${VAR}`` expanded) or the environment.

    Raises
    ------
    UserError
        When no key is configured, or ``api_key`` names an unset variable (the message names
        the variable, never a value).
    """
    if cfg.api_key is not None and cfg.api_key.get_secret_value():
        raw = cfg.api_key.get_secret_value()
        names = _ENV_REF.findall(raw)
        where = f"model.api.api_key (the variable {', '.join(names)})" if names else "model.api.api_key"
        return header_safe(expand_env(raw, "model.api.api_key"), where)
    var = ENV_VARS[cfg.provider]
    value = os.environ.get(var, "").strip()
    if value:
        return header_safe(value, f"the environment variable {var}")
    if cfg.provider == "openai_compatible":
        return NO_KEY
    raise UserError(
        f"model.api.api_key: no API key for provider '{cfg.provider}'; "
        f"set the environment variable {var} or model.api.api_key"
    )


def header_safe(key: str, where: str) -> str:
    """``key`` when an HTTP header can carry it (printable ASCII, no white space); else a
    ``UserError`` naming ``where`` (the config key or the variable), never the key.

    >>> header_safe("sk-local-7f3a", "model.api.api_key")
    'sk-local-7f3a'
    """
    for ch in key:
        what = (
            "a character that is not ASCII (a dash, quote or accent pasted with it?)"
            if not ch.isascii()
            else "white space"
            if ch.isspace()
            else "a control character"
            if not ch.isprintable()
            else None
        )
        if what is not None:
            raise UserError(
                f"{where}: the key holds {what}, which no HTTP header can carry: copy the key again "
                "from the provider's page (it is printable ASCII without spaces)"
            )
    return key


_warned: set[str] = set()


def warn_if_weak(key: str) -> None:
    """One ``warning:`` line (once per process and key) when ``key`` is too short or too common
    to be told from data (:func:`enade_bench.masking.is_common`): it is sent, masked in the
    config and URLs, and a reply or error that holds it as a word is withheld whole."""
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()
    if key == NO_KEY or digest in _warned or not is_common(key):
        return
    _warned.add(digest)
    why = f"under {STRONG_SECRET} characters" if len(key) < STRONG_SECRET else "a word of the data or prompts"
    print(
        f"warning: model.api.api_key is {why}: it cannot be told from data, so every reply or error "
        "that holds it as a word is withheld whole (an answer is extracted first): use a longer key",
        file=sys.stderr,
    )


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text``, withheld whole when it holds a form of ``secrets`` (or of the process's
    remembered ones), else with credentials shown by their shape masked.

    Servers echo a key whole, in part (``Incorrect API key provided: sk-abc…``) or encoded
    (``Authorization: Basic …``, hex, ``%XX``, ``\\/``); :func:`enade_bench.masking.scrub`
    recognises them all.

    Examples
    --------
    >>> redact("bad key 1234567890abcdefXYZ here", ["1234567890abcdefXYZ"])
    '[withheld: it held a form of a secret]'
    """
    return scrub(text, [s for s in secrets if s != NO_KEY])
