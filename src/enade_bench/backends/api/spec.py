"""``model.type: api``: a provider's API (registry entry).

Importing this module imports no SDK; :func:`check` finds the key, the base URL
and the SDK without calling the provider.  What the backend can run depends on
the provider and the endpoint (:func:`.backend.capabilities_for`).
"""

from __future__ import annotations

import importlib.util

from enade_bench.backends.api.backend import ApiBackend, api_prompt_form, capabilities_for
from enade_bench.backends.api.clients import base_url_for
from enade_bench.backends.api.keys import resolve_api_key, warn_if_weak
from enade_bench.backends.chat_render import has_chat_template
from enade_bench.backends.factory import BackendSpec
from enade_bench.backends.hf_load import resolve_source
from enade_bench.backends.model_info import ModelInfo, TokenCounter, load_tokenizer
from enade_bench.config import ApiConfig, ModelConfig
from enade_bench.errors import UserError

#: The SDK module each provider is reached through, and the package that ships it.
SDKS: dict[str, tuple[str, str]] = {
    "anthropic": ("anthropic", "anthropic"),
    "google": ("google.genai", "google-genai"),
}


def _api(cfg: ModelConfig) -> ApiConfig:
    if cfg.api is None:  # the config's own validator already says so; a plug-in may call here
        raise UserError("model.type is 'api' but there is no model.api block")
    return cfg.api


def capabilities(cfg: ModelConfig) -> frozenset[str]:
    return capabilities_for(_api(cfg))


def check(cfg: ModelConfig) -> None:
    """The base URL, the key and the SDK are there; ``api.tokenizer`` can be found."""
    api = _api(cfg)
    base_url_for(api)
    warn_if_weak(resolve_api_key(api))
    module, package = SDKS.get(api.provider, ("openai", "openai"))
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise UserError(
            f"model.api.provider: '{api.provider}' needs the package {package}: pip install {package}"
        )
    if api.tokenizer is not None:
        try:
            resolve_source(ModelConfig(name=api.tokenizer))
        except UserError as exc:
            raise UserError(str(exc).replace("model.name:", "model.api.tokenizer:", 1)) from None


def create(cfg: ModelConfig) -> ApiBackend:
    """Read the key, build the SDK client (no request is sent)."""
    api = _api(cfg)
    return ApiBackend(api, resolve_api_key(api))


def inspect(cfg: ModelConfig) -> ModelInfo:
    """No local tokenizer unless ``api.tokenizer``; the provider does not say its context length."""
    api = _api(cfg)
    tokenizer = load_tokenizer(api.tokenizer) if api.tokenizer is not None else None
    counter = None if tokenizer is None else TokenCounter(tokenizer, has_chat_template(tokenizer))
    return ModelInfo(
        type=cfg.type,
        capabilities=capabilities_for(api),
        prompt_form=api_prompt_form(api, tokenizer),
        counter=counter,
        context_length=None,
    )


SPEC = BackendSpec(
    create=create,
    capabilities=capabilities,
    check=check,
    inspect=inspect,
    description="a provider's API: anthropic, openai, maritaca, google, nvidia, openai_compatible",
)
