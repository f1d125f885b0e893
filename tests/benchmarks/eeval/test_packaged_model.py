"""The packaged SmolLM2 model on real E-EVAL val questions, and S7 on ENADE (slow, run in CI)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from tests.benchmarks.eeval.helpers import EEVAL_RULES, write_config
from tests.conftest import REPO_ROOT
from tests.scoring.extraction_rules import EXTRACTION_RULES

from enade_bench.benchmarks import run_config
from enade_bench.dataset.schema import LETTERS
from enade_bench.runner.plan import RunOptions

pytestmark = pytest.mark.slow
SUBJECTS = ["primary_school_english", "primary_school_science"]  # two subjects with short prompts
PER_SUBJECT = 2


@pytest.fixture(scope="module")
def model_run(eeval_root: Path, packaged_model: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("eeval_model")
    config = write_config(
        out / "m.yaml",
        name="smol",
        data=eeval_root / "val",
        output=out,
        subjects=SUBJECTS,
        cot_max_new_tokens=16,
        batch_size=4,
    )
    options = RunOptions(
        strategies=["ao0", "ao5", "cot5", "ao0_ft"],
        limit=PER_SUBJECT,
        progress=False,
        backend_factory=lambda c: packaged_model,
    )
    run_config(config, options)
    return out


def _records(out: Path, setting: str) -> list[dict[str, Any]]:
    return json.loads((out / f"smol_{setting}_results.json").read_text(encoding="utf-8"))["records"]


@pytest.mark.parametrize("setting", ["ao0", "ao5", "cot5"])
def test_three_settings_on_two_subjects(model_run: Path, setting: str) -> None:
    records = _records(model_run, setting)
    assert sorted({r["fields"]["subject"] for r in records}) == SUBJECTS
    assert {r["fields"]["level"] for r in records} == {"primary"}
    assert len(records) == PER_SUBJECT * len(SUBJECTS)
    ending = "答案：让我们一步一步思考，\n1. " if setting == "cot5" else "答案："
    shots = 0 if setting == "ao0" else 5
    for r in records:
        assert r["prompt"].endswith(ending)  # chat template + prefilled answer prefix
        assert r["prompt"].count("以下是中国关于") == 1
        assert r["prompt"].count("答案：") == shots + 1
        assert r["raw_output"] is not None
        assert r["extraction_rule"] in EEVAL_RULES
        assert r["prediction"] is None or r["prediction"] in "ABCD"
    breakdowns = json.loads((model_run / f"smol_{setting}_results.json").read_text(encoding="utf-8"))[
        "breakdowns"
    ]
    assert list(breakdowns) == ["subject", "level", "n_options"] and sorted(breakdowns["subject"]) == SUBJECTS
    summary = json.loads((model_run / f"smol_{setting}_eeval.json").read_text(encoding="utf-8"))
    assert sorted(summary["by_subject"]) == SUBJECTS and list(summary["by_level"]) == ["primary"]


def test_chain_of_thought_gets_its_own_token_budget(model_run: Path, packaged_model: Any) -> None:
    lengths = [
        len(packaged_model.tokenizer(r["raw_output"])["input_ids"]) for r in _records(model_run, "cot5")
    ]
    assert max(lengths) > 8  # answer-only stops at max_new_tokens = 8
    assert max(lengths) <= 16 + 1


def test_first_token_answer_only(model_run: Path) -> None:
    for r in _records(model_run, "ao0_ft"):
        probs = r["option_scores"]
        assert list(probs) == list(LETTERS[:4])
        assert math.isclose(sum(probs.values()), 1.0, rel_tol=1e-6)
        assert r["prediction"] == max(probs, key=lambda k: probs[k])


def test_enade_s7_chain_of_thought(packaged_model: Any, tmp_path: Path) -> None:
    config = (REPO_ROOT / "configs" / "demo.yaml").read_text(encoding="utf-8")
    config = config.replace("max_new_tokens: 10", "max_new_tokens: 10\n  cot_max_new_tokens: 16")
    config = config.replace("data/enade_demo.csv", str(REPO_ROOT / "data" / "enade_demo.csv"))
    path = tmp_path / "demo_s7.yaml"
    path.write_text(config, encoding="utf-8")
    options = RunOptions(
        strategies=["S7"],
        limit=2,
        output_dir=tmp_path,
        progress=False,
        backend_factory=lambda c: packaged_model,
    )
    (result,) = run_config(path, options).results
    assert result.strategy.chain_of_thought is True
    assert len(result.records) == 2
    lengths = []
    for r in result.records:
        assert "Vamos pensar passo a passo" in r.prompt
        assert r.extraction_rule in EXTRACTION_RULES
        assert r.prediction is None or r.prediction in LETTERS
        lengths.append(len(packaged_model.tokenizer(r.raw_output or "")["input_ids"]))
    assert max(lengths) > 10  # S7 is not cut at the answer-only budget
