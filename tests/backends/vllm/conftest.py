"""vLLM engines for the tests, each started once per test session and stopped right after this
folder's last test (:func:`pytest_runtest_teardown`), not kept for the rest of the suite: the folder is
no Python package, so pytest keeps a "package" fixture to the session's end, and an idle engine
core and API server held 8 GB and polled a core's tenth for the rest of a suite.

* ``vllm_backend``: ``model.type: vllm`` in-process (``vllm.LLM``) on the packaged
  SmolLM2 (its converted folder), float32, eager mode.
* ``vllm_server``: the real OpenAI-compatible server
  (``python -m vllm.entrypoints.openai.api_server``) on 127.0.0.1, same weights.

Both skip with the reason when vLLM is not importable here, and fail in CI (env
``CI`` set), where ``setup.sh`` installs it — like ``require_shared``.  They take
~1.5 min each to start on 2 cores (eager mode; torch.compile would add ~3 min).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import require_vllm

REPO_ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent


#: Stops of the engines started, run once after the folder's last test (or at the session's end).
_STOPS: list[Callable[[], None]] = []


def _stop_all() -> None:
    while _STOPS:
        _STOPS.pop()()


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After the last test of this folder on this worker, stop its engines."""
    if nextitem is None or HERE not in Path(nextitem.path).parents:
        _stop_all()


@pytest.fixture(scope="session")
def vllm_backend() -> Iterator[Any]:
    """The in-process vLLM backend (one engine for the folder's tests)."""
    require_vllm()
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    from bench.speed.vllm_parity import MODEL, VLLM_CPU
    from enade_bench.backends.factory import create_backend
    from enade_bench.config import ModelConfig

    backend = create_backend(ModelConfig(name=MODEL, type="vllm", vllm=VLLM_CPU))
    _STOPS.append(backend.close)  # ``close`` and ``stop`` act once: the teardown below may follow
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def vllm_server() -> Iterator[Any]:
    """The real vLLM OpenAI server on 127.0.0.1 (``stop`` is idempotent; a restarted one is stopped too)."""
    require_vllm()
    from bench.speed.vllm_parity import serve_smollm2

    server = serve_smollm2().start()
    _STOPS.append(server.stop)
    yield server
    server.stop()
