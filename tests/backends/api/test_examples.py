"""Every example API config validates and builds its backend (keys from the environment)."""

from __future__ import annotations

from pathlib import Path

import pytest
from api_fakes import FAKE_KEY, REPO_ROOT

from enade_bench.backends.api.backend import ApiBackend
from enade_bench.backends.api.keys import ENV_VARS, resolve_api_key
from enade_bench.config import load_config

EXAMPLES = sorted((REPO_ROOT / "configs" / "examples").glob("api_*.yaml"))


def test_one_example_per_provider() -> None:
    assert {p.stem.removeprefix("api_") for p in EXAMPLES} == set(ENV_VARS)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_builds(path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    cfg = load_config(path)
    assert cfg.model.api is not None and cfg.model.api.api_key is None
    monkeypatch.setenv(ENV_VARS[cfg.model.api.provider], FAKE_KEY)
    backend = ApiBackend(cfg.model.api, resolve_api_key(cfg.model.api))
    assert cfg.evaluation.resolved_method in backend.capabilities
    assert backend.identity.api is not None and backend.identity.api.provider == cfg.model.api.provider
