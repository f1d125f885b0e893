"""``study --limit 1`` (or ``limit: 1``) leaves no pair to compare: one ``error:`` line, before any run."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from enade_bench.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def test_limit_one_is_refused_before_any_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = yaml.safe_load((ROOT / "configs" / "study_demo.yaml").read_text(encoding="utf-8"))
    study["dataset"]["path"] = str(ROOT / "data" / "enade_demo.csv")
    study["models"][0]["config"] = str(ROOT / "configs" / "demo.yaml")
    study["output"] = str(tmp_path / "out")
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(study), encoding="utf-8")
    for args in (["--limit", "1"], []):
        if not args:
            path.write_text(yaml.safe_dump({**study, "limit": 1}), encoding="utf-8")
        assert main(["study", str(path), *args]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and "limit" in err[0]
        assert "no pair of models to compare" in err[0] and "expected 2 or more" in err[0]
        assert not (tmp_path / "out").exists()


def test_the_demo_runs_s4_with_a_few_shuffles_as_the_docs_say() -> None:
    """S4 with 2-5 shuffles makes a clustered pair in the demo; docs/studies.md shows the same number."""
    study = yaml.safe_load((ROOT / "configs" / "study_demo.yaml").read_text(encoding="utf-8"))
    shuffles = study["evaluation"]["n_shuffles"]
    assert 2 <= shuffles <= 5
    docs = (ROOT / "docs" / "studies.md").read_text(encoding="utf-8")
    assert (
        f"n_shuffles: {shuffles} " in docs
        and f"`n_shuffles: {shuffles}` in `configs/study_demo.yaml`" in docs
    )
