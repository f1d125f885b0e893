"""The public entry points: check a model config, create its backend, inspect it without weights.

* :func:`check_backend`: everything checkable before the model loads (the type is
  known, ``model.options`` valid, the methods asked for are ones the backend runs,
  files and folders exist, the device is there, the hub or API is usable).
* :func:`create_backend`: :func:`check_backend`, then load.
* :func:`check_capabilities`: on a loaded backend or on a config.
* :func:`inspect_model`: tokenizer, context length and capabilities, no weights.

Each backend's module is imported only when its type is used (see :mod:`.registry`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import replace

from enade_bench.backends.base import METHODS, Backend
from enade_bench.backends.model_info import ModelInfo
from enade_bench.backends.registry import BackendSpec, backend_options, backend_spec
from enade_bench.config import ModelConfig
from enade_bench.errors import UserError
from enade_bench.results.identity import PROMPT_FORMS, ModelIdentity


def _check_options(cfg: ModelConfig, spec: BackendSpec) -> None:
    if spec.options is not None:
        backend_options(cfg, spec.options)
    elif cfg.options:
        raise UserError(
            f"model.options: backend '{cfg.type}' takes no options (they are for plug-in backends)"
        )


def check_backend(
    cfg: ModelConfig, methods: Iterable[str] = (), strategies: Iterable[str] = ()
) -> BackendSpec:
    """Check a model config as far as possible without loading the model.

    ``methods``/``strategies``: what the run needs (checked against the backend's
    capabilities when the config determines them).

    Raises
    ------
    UserError
        One line naming the key: an unknown or doubly claimed ``model.type``, bad
        ``model.options``, a method the backend cannot run, a missing file or folder,
        a device this machine lacks, an unreachable hub model, a missing API key...
    """
    spec = backend_spec(cfg.type)
    _check_options(cfg, spec)
    methods = list(methods)
    if methods and spec.capabilities is not None:
        _require(spec.capabilities(cfg), methods, strategies)
    if spec.check is not None:
        spec.check(cfg)
    return spec


def create_backend(cfg: ModelConfig) -> Backend:
    """Check the config (:func:`check_backend`), then load the model or build the client."""
    spec = check_backend(cfg)
    backend = spec.create(cfg)
    _conforms(cfg.type, backend)
    return backend


def _conforms(name: str, backend: Backend) -> None:
    """A plug-in's backend honours the :class:`~.base.Backend` protocol (a bug, named, if not)."""
    problem = _protocol_problem(backend)
    if problem:
        raise UserError(
            f"model.type: backend '{name}' {problem} (see docs/architecture.md, plug-in backends)"
        )


def _protocol_problem(backend: Backend) -> str | None:
    missing = [a for a in ("identity", "capabilities", "prompt_form", "render") if not hasattr(backend, a)]
    if missing:
        return f"lacks {', '.join(missing)}"
    if not isinstance(backend.identity, ModelIdentity):
        return "has an identity that is not a ModelIdentity"
    if backend.prompt_form not in PROMPT_FORMS:
        return f"has prompt_form {backend.prompt_form!r}, not one of {', '.join(PROMPT_FORMS)}"
    if not set(backend.capabilities) <= METHODS:
        return f"declares capabilities outside {', '.join(sorted(METHODS))}"
    return None


def _require(can: frozenset[str], methods: Iterable[str], strategies: Iterable[str]) -> None:
    missing = sorted(set(methods) - can)
    if missing:
        raise UserError(
            f"model: this backend cannot run method(s) {', '.join(missing)} needed by "
            f"{', '.join(strategies)}; it can run: {', '.join(sorted(can))}"
        )


def check_capabilities(
    backend: Backend | ModelConfig, methods: Iterable[str], strategies: Iterable[str]
) -> None:
    """An ``error:`` naming what the backend can run when it cannot run what was asked.

    ``backend``: a loaded backend, or a model config (checked before loading; a
    plug-in whose capabilities are known only once loaded passes here).
    """
    if isinstance(backend, ModelConfig):
        spec = backend_spec(backend.type)
        if spec.capabilities is not None:
            _require(spec.capabilities(backend), methods, strategies)
        return
    _require(backend.capabilities, methods, strategies)


def inspect_model(cfg: ModelConfig) -> ModelInfo | None:
    """Tokenizer, context length and capabilities of a model, without loading its weights.

    Runs :func:`check_backend` first.  None for a plug-in that offers no inspection.
    """
    started = time.perf_counter()
    spec = check_backend(cfg)
    if spec.inspect is None:
        return None
    info = spec.inspect(cfg)
    return None if info is None else replace(info, seconds=time.perf_counter() - started)
