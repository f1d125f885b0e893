"""A study's names reach paths (runs/<model>/, its report): refused when unsafe, and its runs are
never written through a linked folder (issue 32).  No model is loaded: each case fails before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.study.test_generic_study import SMOLLM2, write_study

from enade_bench.cli.main import main


@pytest.fixture(autouse=True)
def _no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_model(*_: object) -> None:
        pytest.fail("a model was loaded")

    for site in ("enade_bench.study.execute.create_backend", "enade_bench.runner.run.create_backend"):
        monkeypatch.setattr(site, no_model)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"name": "s" * 250}, "key 'name': got 'sss"),
        ({"models": [{**SMOLLM2, "name": "a..b"}]}, "holds '..'"),
        ({"dataset": {"path": "x.csv", "fields": ["area/subarea"]}}, "field name 'area/subarea' holds '/'"),
    ],
)
def test_unsafe_study_names_are_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, Any], expected: str
) -> None:
    assert main(["study", str(write_study(tmp_path, **changes))]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and expected in err[0], err
    assert not (tmp_path / "study").exists()


def test_a_linked_runs_folder_is_refused_and_nothing_lands_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "study").mkdir()
    (tmp_path / "study" / "runs").symlink_to(elsewhere, target_is_directory=True)
    assert main(["study", str(write_study(tmp_path, models=[SMOLLM2]))]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]
    assert len(err) == 1 and "runs: a symbolic link inside the output folder" in err[0], err
    assert list(elsewhere.iterdir()) == []


def test_a_linked_report_folder_is_refused_before_any_model_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "study").mkdir()
    (tmp_path / "study" / "report").symlink_to(elsewhere, target_is_directory=True)
    assert main(["study", str(write_study(tmp_path, models=[SMOLLM2]))]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "report: a symbolic link inside the output folder" in err[0], err
    assert list(elsewhere.iterdir()) == [] and not (tmp_path / "study" / "runs").exists()
