"""Checks that run before any weights load: the device exists, the hub model can be had.

Both used to fail only after a long wait: ``model.device: cuda`` on a CPU-only
build raised an ``AssertionError`` once the weights were in memory, and a hub id
with no network took ``huggingface_hub``'s retries (about 35 s) before an
``OSError``.  Here each is one ``error:`` line within a second or so:

* :func:`check_device` asks torch whether the device is there (imported only for
  a device other than ``auto``/``cpu``);
* :func:`probe_hub` sends one ``HEAD`` for the repository's ``config.json`` with
  a short timeout and no retries (``huggingface_hub.get_hf_file_metadata``), and
  honours ``HF_HUB_OFFLINE``; a model already in the local cache is then loaded
  with ``local_files_only`` (no network at all).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from enade_bench.errors import UserError

#: Seconds to wait for the hub's answer (``ENADE_BENCH_HUB_TIMEOUT`` overrides).
HUB_TIMEOUT_S = 5.0
#: A hub id as huggingface_hub accepts it: ``name`` or ``org/name``, no ``--`` or ``..``.
_REPO_ID = re.compile(r"^(?!.*(--|\.\.))[\w.\-]{1,96}(/[\w.\-]{1,96})?$")


#: Set while a study is planned for a Ray cluster's or Slurm's nodes (:func:`devices_elsewhere`).
_ELSEWHERE: ContextVar[bool] = ContextVar("enade_bench_devices_elsewhere", default=False)


@contextmanager
def devices_elsewhere() -> Iterator[None]:
    """Within the block, this machine's devices are not checked: the models run on other nodes.

    A study run from a Slurm login node or a Ray head without GPUs plans models with
    ``device: cuda`` or ``tensor_parallel_size: 2``; its executor checks the GPUs the jobs or
    the cluster have, and each worker checks its own device when it loads the model.
    """
    token = _ELSEWHERE.set(True)
    try:
        yield
    finally:
        _ELSEWHERE.reset(token)


def devices_are_here() -> bool:
    """Whether the models being checked run on this machine (see :func:`devices_elsewhere`)."""
    return not _ELSEWHERE.get()


def check_device(device: str, key: str = "model.device") -> None:
    """An ``error:`` when ``device`` is not one this machine has (``auto`` always passes).

    Raises
    ------
    UserError
        Not a torch device name, a CUDA device on a build or machine without one (or
        an index past the last GPU), ``mps`` off Apple silicon, and so on.
    """
    if device in ("auto", "cpu"):
        return
    import torch  # noqa: PLC0415 (heavy or optional dependency, imported at use)

    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError):
        raise UserError(f"{key}: '{device}' is not a device (auto, cpu, cuda, cuda:N, mps)") from None
    if not devices_are_here():
        return
    if dev.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            build = "a CPU-only torch build" if torch.version.cuda is None else "no CUDA device visible"
            raise UserError(
                f"{key}: '{device}' asked for, but there is no CUDA GPU here ({build}, torch "
                f"{torch.__version__}); use auto or cpu"
            )
        if dev.index is not None and dev.index >= count:
            raise UserError(f"{key}: '{device}': this machine has {count} CUDA device(s), 0..{count - 1}")
        return
    if dev.type == "cpu":
        return
    module = torch.backends.mps if dev.type == "mps" else getattr(torch, dev.type, None)
    available = getattr(module, "is_available", None)
    if available is None or not available():
        raise UserError(f"{key}: '{device}' is not available on this machine; use auto or cpu")


def is_hub_id(name: str) -> bool:
    """Whether ``name`` has the form of a hub id (``org/name``), not of a path."""
    return bool(_REPO_ID.match(name)) and not name.startswith((".", "~"))


@dataclass(frozen=True)
class HubStatus:
    """What :func:`probe_hub` found: load from the cache only, and the commit the hub reported."""

    local_files_only: bool
    commit: str | None = None


def _timeout() -> float:
    try:
        return float(os.environ.get("ENADE_BENCH_HUB_TIMEOUT", HUB_TIMEOUT_S))
    except ValueError:
        return HUB_TIMEOUT_S


def probe_hub(repo_id: str, revision: str | None, token: str | None) -> HubStatus:
    """Check, with one request and no retries, that a hub model can be loaded.

    Raises
    ------
    UserError
        The hub cannot be reached (or ``HF_HUB_OFFLINE`` is set) and the model is not
        in the local cache; the repository, or the revision, does not exist; the
        repository is gated or private and no token opens it.
    """
    return _probe(repo_id, revision, token, _timeout())


@functools.lru_cache(maxsize=16)
def _probe(repo_id: str, revision: str | None, token: str | None, timeout: float) -> HubStatus:
    from huggingface_hub import (  # noqa: PLC0415 (heavy or optional dependency, imported at use)
        constants,
        errors,
        get_hf_file_metadata,
        hf_hub_url,
        try_to_load_from_cache,
    )

    cached = isinstance(try_to_load_from_cache(repo_id, "config.json", revision=revision), str)
    where = f"'{repo_id}'" + (f" (revision {revision})" if revision else "")
    offline = constants.HF_HUB_OFFLINE or os.environ.get("HF_HUB_OFFLINE", "").upper() in {
        "1",
        "ON",
        "YES",
        "TRUE",
    }
    if offline:
        if cached:
            return HubStatus(local_files_only=True)
        raise UserError(
            f"model.name: no folder '{repo_id}' here, and HF_HUB_OFFLINE is set but hub model {where} is "
            f"not in the local cache ({constants.HF_HUB_CACHE}); download it once online, or give a local folder"
        )
    url = hf_hub_url(repo_id, "config.json", revision=revision)
    try:
        meta = get_hf_file_metadata(url, token=token or None, timeout=timeout)
    except errors.GatedRepoError:
        raise UserError(
            f"model.name: {where} is gated on the hub: accept its licence on huggingface.co and set "
            "model.hf_token or HF_TOKEN"
        ) from None
    except errors.RepositoryNotFoundError:
        raise UserError(
            f"model.name: no folder '{repo_id}' here, and no model {where} on the Hugging Face hub "
            "(a private one needs model.hf_token or HF_TOKEN)"
        ) from None
    except errors.RevisionNotFoundError:
        raise UserError(
            f"model.revision: '{revision}' is not a branch, tag or commit of '{repo_id}'"
        ) from None
    except errors.EntryNotFoundError:
        return HubStatus(local_files_only=False)  # no config.json: transformers says what it misses
    except Exception as exc:  # noqa: BLE001 - transport errors are httpx's or httpx2's, by hub version
        if cached:
            return HubStatus(local_files_only=True)
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(
            f"model.name: no folder '{repo_id}' here, and the Hugging Face hub cannot be reached for "
            f"{where} ({type(exc).__name__}: {reason}) nor is it in the local cache; connect, or give a "
            "local folder"
        ) from None
    return HubStatus(local_files_only=False, commit=meta.commit_hash)
