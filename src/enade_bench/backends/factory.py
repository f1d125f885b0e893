"""Create the backend a config asks for, and check it can run the requested methods."""

from __future__ import annotations

from collections.abc import Iterable

from enade_bench.backends.base import Backend
from enade_bench.config import ModelConfig
from enade_bench.errors import UserError


def create_backend(cfg: ModelConfig) -> Backend:
    """Load the model (local) or build the client (API)."""
    # Backends are imported when chosen: each pulls a heavy stack (SDKs, torch) that the
    # other paths, and every command that fails on bad input first, do not need.
    if cfg.type == "api":
        from enade_bench.backends.api import create_api_backend  # noqa: PLC0415

        assert cfg.api is not None
        return create_api_backend(cfg.api)
    if cfg.type == "vllm":
        from enade_bench.backends.vllm_local import create_vllm_backend  # noqa: PLC0415

        return create_vllm_backend(cfg)
    from enade_bench.backends.hf_load import load_model_and_tokenizer, resolve_source  # noqa: PLC0415
    from enade_bench.backends.hf_local import HFLocalBackend  # noqa: PLC0415

    source = resolve_source(cfg)
    model, tokenizer, identity = load_model_and_tokenizer(cfg, source)
    return HFLocalBackend(cfg, model, tokenizer, identity)


def check_capabilities(backend: Backend, methods: Iterable[str], strategies: Iterable[str]) -> None:
    """An ``error:`` naming what the backend can run when it cannot run what was asked."""
    missing = sorted(set(methods) - backend.capabilities)
    if missing:
        can = ", ".join(sorted(backend.capabilities))
        raise UserError(
            f"model: this backend cannot run method(s) {', '.join(missing)} needed by "
            f"{', '.join(strategies)}; it can run: {can}"
        )
