"""Errors are never scores, and a report never shows stale results as current (issue 26).

Real runs through the API backend against a loopback server (the provider's documented
shapes), then the real ``report`` command on their folder.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from api_fakes import (
    FAKE_KEY,
    FakeServer,
    Reply,
    answer_for,
    openai_completion,
    openai_error,
    user_text_openai,
    write_config,
)

from enade_bench.cli.main import main
from enade_bench.runner.retry import EXIT_ERRORS

ROOT = Path(__file__).resolve().parents[2]


def _api(server: FakeServer, key: str = FAKE_KEY) -> dict[str, object]:
    return {
        "provider": "openai",
        "model": "m",
        "base_url": server.url + "/v1",
        "api_key": key,
        "max_concurrency": 1,
        "timeout_s": 60,
    }


def _refused(req):  # type: ignore[no-untyped-def]
    # A permanent error on every request (a 401 now stops the run after three: test_errors_retry.py)
    return openai_error(
        400, "This model's maximum context length is 8 tokens.", code="context_length_exceeded"
    )


def _answer(req):  # type: ignore[no-untyped-def]
    return Reply(200, openai_completion(answer_for(user_text_openai(req.json()))))


def _results(tmp: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((tmp / "out" / "api_test_results.json").read_text(encoding="utf-8"))


def test_a_run_whose_requests_all_fail_has_no_accuracy_and_the_report_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``report`` showed n = 4, accuracy 0.000 [0.000, 0.490], marked best, and no word of errors.

    (The issue's run had 28 requests refused with HTTP 401; every request refused for
    another permanent reason gives the same results file.)"""
    with FakeServer(_refused) as server:
        cfg = write_config(tmp_path, _api(server, "sk-test-WRONG-9876543210zyxwvutsrqponmlk"))
        assert main(["run", str(cfg), "--limit", "4", "--quiet"]) == EXIT_ERRORS
    stored = _results(tmp_path)
    assert stored["complete"] is False and stored["schema_version"] == 4
    totals = stored["totals"]
    assert (totals["n"], totals["n_errors"], totals["errors"], totals["correct"]) == (0, 4, 4, 0)
    assert math.isnan(totals["accuracy"])
    assert stored["log"]["path"] == "api_test_intermediate.jsonl" and len(stored["log"]["fingerprint"]) == 64
    for cells in stored["breakdowns"].values():
        assert all(c["n"] == 0 and c["n_errors"] > 0 for c in cells.values())
    capsys.readouterr()

    report = tmp_path / "report"
    assert main(["report", str(tmp_path / "out"), "--out", str(report)]) == 0
    err = capsys.readouterr().err
    assert (
        "warning: api_test run: 4 of 4 records ended in an error and are not scored (n = 0, n_errors = 4)"
        in err
    )
    table = pd.read_csv(report / "tables" / "table1.csv")
    row = table.iloc[0]
    assert (row["n"], row["n_errors"], bool(row["best"])) == (0, 4, False)
    assert math.isnan(row["accuracy"])
    html = (report / "index.html").read_text(encoding="utf-8")
    assert html.index('id="attention"') < html.index('id="tables"')
    assert "4 of 4 records ended in an error" in html and "– n_errors=4" in html
    assert "(incomplete: 4 records in error, not scored)" in html
    assert "0.000 [0.000, 0.490]" not in html and "0.0 [0.0, 49.0]" not in html
    assert "<strong>" not in html.split('id="table-table1"')[1].split("</table>")[0]


def test_errors_leave_the_other_answers_scored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One question of four in error: n = 3 answers scored, n_errors = 1 beside it everywhere."""
    lock = threading.Lock()
    first: dict[str, str] = {}

    def first_fails(req):  # type: ignore[no-untyped-def]
        text = user_text_openai(req.json())
        with lock:
            failing = first.setdefault("text", text) == text
        return _refused(req) if failing else _answer(req)

    with FakeServer(first_fails) as server:
        cfg = write_config(tmp_path, _api(server))
        assert main(["run", str(cfg), "--limit", "4", "--quiet"]) == EXIT_ERRORS
    stored = _results(tmp_path)
    kept = [r for r in stored["records"] if r["error"] is None]
    assert len(kept) == 3 and stored["complete"] is False
    totals = stored["totals"]
    assert (totals["n"], totals["n_errors"], totals["correct"]) == (3, 1, sum(r["correct"] for r in kept))
    assert totals["accuracy"] == pytest.approx(totals["correct"] / 3)
    assert sum(c["n"] for c in stored["breakdowns"]["n_options"].values()) == 3
    summary = stored["position_bias"]
    assert sum(block["n"] for block in summary.values()) == 3
    capsys.readouterr()
    assert main(["report", str(tmp_path / "out"), "--out", str(tmp_path / "report")]) == 0
    course = pd.read_csv(tmp_path / "report" / "tables" / "accuracy_by_course.csv")
    assert (course["n"].sum(), course["n_errors"].sum()) == (3, 1)
    html = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "n_errors=1" in html and "1 of 4 records ended in an error" in html


def _log_lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def _killed_rerun(tmp_path: Path, cfg: Path, extra: list[str], logged: Callable[[], bool]) -> None:
    """Start ``run`` in a process, wait until ``logged()`` (its new answer is in the log), SIGKILL it."""
    argv = [sys.executable, str(ROOT / "run.py"), str(cfg), "--limit", "4", "--quiet", *extra]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not logged():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "timed out"
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()


def _hangs_after(n: int):  # type: ignore[no-untyped-def]
    """A handler that answers ``n`` requests, then hangs until ``release`` is set (or 30 s)."""
    release = threading.Event()
    lock, seen = threading.Lock(), {"n": 0}

    def handler(req):  # type: ignore[no-untyped-def]
        with lock:
            seen["n"] += 1
            hang = seen["n"] > n
        if hang:
            release.wait(30)
        return _answer(req)

    return handler, release


def test_a_killed_resumed_run_leaves_a_results_file_the_report_calls_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the report showed the two-question results of the first run, with no warning."""
    slow_after_three, release = _hangs_after(3)
    with FakeServer(slow_after_three) as server:
        cfg = write_config(tmp_path, _api(server))
        assert main(["run", str(cfg), "--limit", "2", "--quiet"]) == 0
        log = tmp_path / "out" / "api_test_intermediate.jsonl"
        before = _log_lines(log)
        _killed_rerun(tmp_path, cfg, [], lambda: _log_lines(log) > before)
        release.set()
    capsys.readouterr()
    assert main(["report", str(tmp_path / "out"), "--out", str(tmp_path / "report")]) == 0
    err = capsys.readouterr().err
    assert "STALE: its log api_test_intermediate.jsonl holds answers written after it" in err
    html = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "STALE: its log api_test_intermediate.jsonl holds answers" in html.split('id="tables"')[0]


def test_no_resume_moves_the_earlier_files_aside_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A killed ``--no-resume`` rerun leaves no earlier results beside its new log."""
    slow_after_three, release = _hangs_after(3)
    out = tmp_path / "out"
    with FakeServer(slow_after_three) as server:
        cfg = write_config(tmp_path, _api(server))
        assert main(["run", str(cfg), "--limit", "2", "--quiet"]) == 0
        first = (out / "api_test_results.json").read_text(encoding="utf-8")
        log = out / "api_test_intermediate.jsonl"
        results = out / "api_test_results.json"
        # the fresh log: a header and one answer, once the earlier files are aside
        _killed_rerun(tmp_path, cfg, ["--no-resume"], lambda: not results.exists() and _log_lines(log) == 2)
        release.set()
    assert not (out / "api_test_results.json").exists() and _log_lines(log) == 2
    (moved,) = (out / "previous_old").iterdir()
    assert moved.name.startswith("api_test_") and (moved / "api_test_results.json").read_text() == first
    assert _log_lines(moved / "api_test_intermediate.jsonl") == 3
    capsys.readouterr()
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 2
    assert "no *_results.json files" in capsys.readouterr().err
