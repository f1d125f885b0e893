"""Backends by ``model.type``: the built-ins, and plug-ins from installed packages.

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
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel, ValidationError

from enade_bench.config import ModelConfig
from enade_bench.errors import UserError

if TYPE_CHECKING:
    from enade_bench.backends.base import Backend
    from enade_bench.backends.model_info import ModelInfo

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
    out: dict[str, list[Claim]] = {name: [Claim(name, target, "enade-bench (built-in)")]
                                   for name, target in BUILTIN.items()}  # fmt: skip
    for ep in entry_points(group=GROUP):
        dist = ep.dist
        origin = f"package {dist.name} {dist.version}" if dist is not None else "an unnamed package"
        claim = Claim(ep.name, ep.value, origin)
        if claim not in out.setdefault(ep.name, []):  # one distribution seen twice on sys.path
            out[ep.name].append(claim)
    return out


def known_types() -> list[str]:
    """The ``model.type`` names that can be used here."""
    return sorted(claims())


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
