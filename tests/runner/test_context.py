"""Prompt length against the context, on the real packaged SmolLM2 (2 questions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_run_e2e import write_config

from enade_bench.cli.main import main


def _records(tmp_path: Path, name: str) -> list[dict]:  # type: ignore[type-arg]
    return json.loads((tmp_path / "out" / f"{name}_results.json").read_text(encoding="utf-8"))["records"]


def test_smollm2_knows_its_context_and_counts_tokens(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    from enade_bench.backends.base import ContextBackend

    assert isinstance(smollm2_backend, ContextBackend)
    assert smollm2_backend.context_length == smollm2_backend.model.config.max_position_embeddings > 1000


def test_prompt_too_long_is_an_error_before_any_question_runs(
    tmp_path: Path, smollm2_backend, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    cfg = write_config(tmp_path, "ctx", method="first_token", context_limit=60)
    assert main(["run", str(cfg), "--limit", "2", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ctx: question ")
    assert "the context is 60 tokens with 1 kept for the answer, so at most 59 fit" in err[0]
    assert "evaluation.truncate: left" in err[0]
    assert not (tmp_path / "out" / "ctx_results.json").exists()
    assert not (tmp_path / "out" / "ctx_intermediate.jsonl").exists()  # nothing ran


def test_truncate_left_cuts_and_records_it(tmp_path: Path, smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    cfg = write_config(tmp_path, "cut", method="first_token", context_limit=60, truncate="left")
    assert main(["run", str(cfg), "--limit", "2", "--quiet"]) == 0
    records = _records(tmp_path, "cut")
    assert len(records) == 2
    for record in records:
        cut = record["truncation"]
        assert cut["policy"] == "left" and cut["kept_tokens"] == 59 and cut["context"] == 60
        assert cut["prompt_tokens"] > 59
        assert record["prediction"] in "ABCDE"
    assert smollm2_backend.prompt_limit is None  # the limit lasts one strategy only
    whole = write_config(tmp_path, "whole", method="first_token")
    assert main(["run", str(whole), "--limit", "2", "--quiet"]) == 0
    read_whole = _records(tmp_path, "whole")
    assert all("truncation" not in r for r in read_whole)
    assert [r["option_scores"] for r in records] != [r["option_scores"] for r in read_whole]  # really cut
