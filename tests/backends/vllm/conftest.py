"""vLLM engines for the tests, each started once per test session (package scope: stopped when the
vLLM tests are done, not kept for the rest of the suite).

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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import require_vllm

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="package")
def vllm_backend() -> Iterator[Any]:
    """The in-process vLLM backend (one engine for the whole session)."""
    require_vllm()
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    from enade_bench.backends.factory import create_backend
    from enade_bench.bench.vllm_parity import MODEL, VLLM_CPU
    from enade_bench.config import ModelConfig

    backend = create_backend(ModelConfig(name=MODEL, type="vllm", vllm=VLLM_CPU))
    yield backend
    backend.close()


@pytest.fixture(scope="package")
def vllm_server() -> Iterator[Any]:
    """The real vLLM OpenAI server on 127.0.0.1 (stopped at the end of the session)."""
    require_vllm()
    from enade_bench.bench.vllm_parity import serve_smollm2

    with serve_smollm2() as server:
        yield server
