"""A run's output folder is written by the one safe writer (issue 32): a link at a file the run
writes is replaced, never followed; the log and the lock are never used through a link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from enade_bench.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "configs" / "demo.yaml"


def test_links_at_the_runs_files_are_replaced_and_the_victim_untouched(
    tmp_path: Path, victim: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The session's packaged SmolLM2 (in-process), two questions, one strategy."""
    out = tmp_path / "out"
    out.mkdir()
    stem = "demo_smollm2_S2"
    (out / f"{stem}_results.json").symlink_to(os.path.relpath(victim, out))  # to a file
    (out / f"{stem}_summary.csv").symlink_to(tmp_path / "gone" / "summary.csv")  # dangling
    assert (
        main(["run", str(DEMO), "--strategy", "S2", "--limit", "2", "--output-dir", str(out), "--quiet"]) == 0
    )
    assert victim.read_text(encoding="utf-8") == "precious\n" and not (tmp_path / "gone").exists()
    for name in (f"{stem}_results.json", f"{stem}_summary.csv"):
        assert (out / name).is_file() and not (out / name).is_symlink(), name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "victim.txt"]


@pytest.mark.parametrize("file", ["intermediate.jsonl", "lock"])
def test_a_log_or_lock_behind_a_link_is_one_error_before_the_model(
    file: str,
    tmp_path: Path,
    victim: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def no_model(*_: object) -> None:
        pytest.fail("the model was loaded")

    monkeypatch.setattr("enade_bench.runner.run.create_backend", no_model)
    out = tmp_path / "out"
    out.mkdir()
    name = f"demo_smollm2_S2_{file}" if file != "lock" else "demo_smollm2_S2.lock"
    (out / name).symlink_to(victim)
    assert (
        main(["run", str(DEMO), "--strategy", "S2", "--limit", "2", "--output-dir", str(out), "--quiet"]) == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {out / name}: a symbolic link"), err
    assert victim.read_text(encoding="utf-8") == "precious\n"
