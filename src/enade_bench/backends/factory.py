"""Backends by ``model.type``: the built-ins and plug-ins, checked, created and inspected.

The public entry points:

* :func:`check_backend`: everything checkable before the model loads (the type is
  known, ``model.options`` valid, the methods asked for are ones the backend runs,
  files and folders exist, the device is there, the hub or API is usable).
* :func:`create_backend`: :func:`check_backend`, then load.
* :func:`check_capabilities`: on a loaded backend.
* :func:`inspect_model`: tokenizer, context length and capabilities, no weights.

A backend is a :class:`BackendSpec`: how to create it from a ``model`` config, and
what is known about it before it loads (its capabilities, its cheap checks, its
tokenizer and context length, the pydantic model of its ``model.options``).

Built-in types point at one module each (:data:`BUILTIN`); a plug-in package
declares its type in the entry-point group :data:`GROUP`, the same
``"module:attribute"`` form::

    [project.entry-points."enade_bench.backends"]
    llamacpp = "enade_llamacpp.backend:SPEC"

Nothing is imported until a type is asked for: reading the claims costs only the
installed packages' metadata (``importlib.metadata``), and only the module of the
type in use is imported; each module imports its heavy stack (torch, vLLM, an SDK)
inside the functions that need it.  The entry-point target may be a
:class:`BackendSpec` or a plain callable ``factory(cfg) -> Backend`` (its
capabilities are then known only once it has loaded).

A type claimed twice (a plug-in reusing a built-in's name, or two plug-ins) is an
``error:`` naming both claimants, never a silent choice of one.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from importlib.metadata import entry_points
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from enade_bench.backends.base import METHODS, Backend
from enade_bench.backends.model_info import ModelInfo
from enade_bench.config import ModelConfig
from enade_bench.errors import UserError
from enade_bench.results.identity import PROMPT_FORMS, ModelIdentity

#: The entry-point group plug-in backends register under.
GROUP = "enade_bench.backends"

#: Built-in types: ``model.type`` -> ``"module:attribute"`` of its :class:`BackendSpec`.
BUILTIN: dict[str, str] = {
    "causal_lm": "enade_bench.backends.hf_spec:CAUSAL_LM",
    "seq2seq": "enade_bench.backends.hf_spec:SEQ2SEQ",
    "vllm": "enade_bench.backends.vllm_spec:SPEC",
    "api": "enade_bench.backends.api.spec:SPEC",
}

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class BackendSpec:
    """One ``model.type``: how to build it, and what is known before it loads.

    Attributes
    ----------
    create
        Builds the backend (loads the model, or makes the client); may be slow.
    capabilities
        The methods it will run, from the config alone (None: known after loading).
    check
        Cheap checks before loading (files, keys, devices, reachability); raise
        :class:`~enade_bench.errors.UserError` with one line naming the key.
    inspect
        Tokenizer and context length without the weights (``enade-bench validate``).
    options
        The pydantic model ``model.options`` must satisfy (None: no options taken).
    """

    create: Callable[[ModelConfig], Backend]
    capabilities: Callable[[ModelConfig], frozenset[str]] | None = None
    check: Callable[[ModelConfig], None] | None = None
    inspect: Callable[[ModelConfig], ModelInfo | None] | None = None
    options: type[BaseModel] | None = None
    description: str = ""


@dataclass(frozen=True)
class Claim:
    """One package's claim to a type name."""

    name: str
    target: str
    #: ``enade-bench (built-in)`` or ``package <dist> <version>``.
    origin: str

    def __str__(self) -> str:
        return f"{self.target} from {self.origin}"


def claims() -> dict[str, list[Claim]]:
    """Every claimed type name and who claims it (built-ins first), nothing imported."""
    out: dict[str, list[Claim]] = {
        name: [Claim(name, target, "enade-bench (built-in)")] for name, target in BUILTIN.items()
    }
    for ep in entry_points(group=GROUP):
        dist = ep.dist
        origin = f"package {dist.name} {dist.version}" if dist is not None else "an unnamed package"
        claim = Claim(ep.name, ep.value, origin)
        if claim not in out.setdefault(ep.name, []):  # one distribution seen twice on sys.path
            out[ep.name].append(claim)
    return out


def _claim_of(name: str) -> Claim:
    found = claims()
    if name not in found:
        raise UserError(
            f"model.type: unknown backend '{name}' (known: {', '.join(sorted(found))}; plug-ins "
            f"register under the entry-point group '{GROUP}')"
        )
    if len(found[name]) > 1:
        both = " and ".join(str(c) for c in found[name])
        raise UserError(f"model.type: '{name}' is claimed twice: by {both}; uninstall one of them")
    return found[name][0]


def _load(claim: Claim) -> object:
    module_name, _, attribute = claim.target.partition(":")
    try:
        obj: object = importlib.import_module(module_name)
        for part in attribute.split(".") if attribute else []:
            obj = getattr(obj, part)
    except Exception as exc:  # noqa: BLE001 - a plug-in may fail in any way on import
        raise UserError(
            f"model.type: '{claim.name}': cannot load {claim} ({type(exc).__name__}: {exc})"
        ) from None
    return obj


def backend_spec(name: str) -> BackendSpec:
    """The spec of ``model.type: name`` (its module imported now, its heavy stack not).

    Raises
    ------
    UserError
        An unknown name (the known ones listed), a name claimed twice (both named), a
        plug-in that cannot be imported or whose target is not a spec or a callable.
    """
    claim = _claim_of(name)
    obj = _load(claim)
    if isinstance(obj, BackendSpec):
        return obj
    if callable(obj):
        return BackendSpec(create=obj)
    raise UserError(
        f"model.type: '{name}': {claim} is a {type(obj).__name__}, not a BackendSpec or a factory"
    )


def backend_options(cfg: ModelConfig, model: type[M]) -> M:
    """``model.options`` validated by a backend's pydantic model (for plug-ins' ``create``).

    Raises
    ------
    UserError
        Naming the first wrong key under ``model.options``.
    """
    try:
        return model.model_validate(cfg.options or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(["model.options", *(str(p) for p in first["loc"])])
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        allowed = ", ".join(model.model_fields)
        raise UserError(f"{where}: {first['msg']}{more} (keys: {allowed})") from None


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


def check_capabilities(backend: Backend, methods: Iterable[str], strategies: Iterable[str]) -> None:
    """An ``error:`` naming what the loaded ``backend`` can run when it cannot run what was asked
    (before loading, :func:`check_backend` checks the config's capabilities)."""
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
