"""The submission writer on a run over the whole test split (3,813 questions, instant fake model).

The predictions come from the real loader, the real runner and real results
files; only the model is replaced (3,813 calls of a real one are too slow here).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.benchmarks.eeval.helpers import FixedLetterBackend, raw_rows, write_config

from enade_bench.benchmarks import run_config
from enade_bench.cli.main import main
from enade_bench.runner.plan import RunOptions


@pytest.fixture(scope="module")
def test_run(eeval_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("eeval_test_split")
    config = write_config(
        out / "t.yaml",
        name="fixed_test",
        data=eeval_root / "test",
        output=out,
        method="first_token",
        batch_size=512,
    )
    options = RunOptions(
        strategies=["ao0"], progress=False, backend_factory=lambda c: FixedLetterBackend("C")
    )
    run_config(config, options)
    return out


def test_submission_over_the_whole_test_split(
    test_run: Path, eeval_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "submission.json"
    assert main(["eeval", "submit", str(test_run), "--out", str(out)]) == 0
    assert "3813 predictions, 23 subjects" in capsys.readouterr().out
    submission = json.loads(out.read_text(encoding="utf-8"))
    example = json.loads((eeval_root / "submission_example.json").read_text(encoding="utf-8"))
    # the example's layout: same subject keys, string ids, one letter each
    assert list(submission) == list(example)
    for subject, ids in example.items():
        assert set(ids) <= set(submission[subject]), subject
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in submission[subject].items())
    # every id of every test file, and the fixed model's letter
    for path in sorted((eeval_root / "test").glob("*_test.csv")):
        subject = path.stem.removesuffix("_test").lower()
        assert list(submission[subject]) == [r["id"] for r in raw_rows(path)]
    assert {v for answers in submission.values() for v in answers.values()} == {"C"}


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error:") and len(err.strip().splitlines()) == 1, err
    return err


def test_missing_id_is_refused(test_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads((test_run / "fixed_test_ao0_results.json").read_text(encoding="utf-8"))
    data["records"] = [r for r in data["records"] if r["id"] != "middle_school_physics/152"]
    broken = tmp_path / "broken_results.json"
    broken.write_text(json.dumps(data), encoding="utf-8")
    assert main(["eeval", "submit", str(broken), "--out", str(tmp_path / "s.json")]) == 2
    assert "middle_school_physics: 1 test id(s) missing: 152" in _one_error_line(capsys)
    assert not (tmp_path / "s.json").exists()


def test_missing_subject_is_refused(
    eeval_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(
        tmp_path / "t.yaml",
        name="one_subject",
        data=eeval_root / "test",
        output=tmp_path,
        method="first_token",
        subjects=["primary_school_science"],
    )
    run_config(
        config,
        RunOptions(strategies=["ao0"], progress=False, backend_factory=lambda c: FixedLetterBackend("A")),
    )
    assert main(["eeval", "submit", str(tmp_path), "--out", str(tmp_path / "s.json")]) == 2
    assert "subject(s) missing" in _one_error_line(capsys)


def test_unanswered_needs_a_fill_letter(
    test_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((test_run / "fixed_test_ao0_results.json").read_text(encoding="utf-8"))
    data["records"][0]["prediction"] = None
    path = tmp_path / "unanswered_results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["eeval", "submit", str(path), "--out", str(tmp_path / "s.json")]) == 2
    assert "without an answer" in _one_error_line(capsys)
    assert (
        main(["eeval", "submit", str(path), "--out", str(tmp_path / "s.json"), "--fill-unanswered", "b"]) == 0
    )
    first = data["records"][0]["id"].split("/")
    assert json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))[first[0]][first[1]] == "B"
