"""A results file names its log; the report says when the log changed after it (issue 26)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from tests.report.test_unit import write_run

from enade_bench.report import load_results

FINGERPRINT = "a" * 64


def _with_log(folder: Path) -> tuple[Path, Path]:
    """A results file whose ``log`` block names the log beside it, as the runner writes it."""
    path = write_run(folder, "alpha", "S1", [True, False, True, False])
    log = folder / "alpha_S1_intermediate.jsonl"
    log.write_text(json.dumps({"kind": "header", "fingerprint": FINGERPRINT}) + "\n", encoding="utf-8")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["log"] = {
        "path": log.name,
        "fingerprint": FINGERPRINT,
        "sha256": hashlib.sha256(log.read_bytes()).hexdigest(),
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path, log


def test_an_unchanged_log_gives_no_warning(tmp_path: Path) -> None:
    _with_log(tmp_path)
    (entry,) = load_results([tmp_path])
    assert entry.warnings == ()


def test_a_log_restarted_by_another_setup_is_named(tmp_path: Path) -> None:
    _, log = _with_log(tmp_path)
    log.write_text(json.dumps({"kind": "header", "fingerprint": "b" * 64}) + "\n", encoding="utf-8")
    (entry,) = load_results([tmp_path])
    (warning,) = entry.warnings
    assert "STALE: its log alpha_S1_intermediate.jsonl was restarted by a run with another setup" in warning


def test_a_file_without_a_log_block_is_checked_by_date(tmp_path: Path) -> None:
    path = write_run(tmp_path, "alpha", "S1", [True, False])
    log = tmp_path / "alpha_S1_intermediate.jsonl"
    log.write_text("{}\n", encoding="utf-8")
    stamp = path.stat().st_mtime
    os.utime(log, (stamp + 60, stamp + 60))
    (entry,) = load_results([tmp_path])
    assert any("is newer than it" in w for w in entry.warnings)
    os.utime(log, (stamp - 60, stamp - 60))
    (entry,) = load_results([tmp_path])
    assert entry.warnings == ()
