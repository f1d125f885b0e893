"""Nothing is written through a hard link (issue 40).

A file that a run, ``report`` or ``compare`` changes in place (the run's lock, its log) and
that has another name is copied aside first (the link broken, the other name unchanged); a
file replaced by rename (results, summaries, report pages) is a new file anyway.  The runs
here are real: the API backend against a loopback server.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from api_fakes import FakeServer, Reply, Request, answer_for, openai_completion, user_text_openai
from api_fakes import write_config as api_config

from enade_bench.cli.main import main
from enade_bench.results.lock import run_lock
from enade_bench.results.safe_write import append_text, write_text


def _answer(req: Request) -> Reply:
    return Reply(200, openai_completion(answer_for(user_text_openai(req.json()))))


def test_a_hard_linked_lock_leaves_the_other_file_unchanged(
    tmp_path: Path, victim: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    lock = out / "api_test.lock"
    os.link(victim, lock)
    with run_lock([lock]):
        assert os.stat(lock).st_nlink == 1 and "pid" in lock.read_text(encoding="utf-8")
    assert victim.read_text(encoding="utf-8") == "precious\n" and os.stat(victim).st_nlink == 1
    assert not lock.exists()
    assert "had other names (a hard link)" in capsys.readouterr().err


def test_appends_and_writes_never_reach_another_name(tmp_path: Path, victim: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    os.link(victim, out / "log.jsonl")
    append_text(out / "log.jsonl", "{}\n")
    assert (out / "log.jsonl").read_text(encoding="utf-8") == "precious\n{}\n"
    os.link(victim, out / "index.html")
    write_text(out / "index.html", "<p>new</p>\n", root=out)
    assert victim.read_text(encoding="utf-8") == "precious\n" and os.stat(victim).st_nlink == 1


def test_a_cp_al_snapshot_resumed_and_reported_is_left_as_it_was(
    tmp_path: Path, victim: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer(_answer) as server:
        cfg = api_config(
            tmp_path,
            {
                "provider": "openai_compatible",
                "model": "m",
                "base_url": server.url + "/v1",
                "max_concurrency": 1,
            },
        )
        assert main(["run", str(cfg), "--limit", "2", "--quiet"]) == 0
        out, snapshot = tmp_path / "out", tmp_path / "snapshot"
        subprocess.run(["cp", "-al", str(out), str(snapshot)], check=True)
        before = {p.name: p.read_bytes() for p in snapshot.iterdir()}
        assert os.stat(out / "api_test_intermediate.jsonl").st_nlink == 2
        assert main(["run", str(cfg), "--limit", "4", "--quiet"]) == 0  # resumes: 2 more answers appended
        assert len(server.posts()) == 4
    assert {p.name: p.read_bytes() for p in snapshot.iterdir()} == before
    log = (out / "api_test_intermediate.jsonl").read_text(encoding="utf-8")
    assert log.count('"kind": "record"') == 4
    # a report whose index.html is a hard link to a file elsewhere
    report = tmp_path / "report"
    assert main(["report", str(out), "--out", str(report)]) == 0
    shutil.copy(report / "index.html", tmp_path / "kept.html")
    (report / "index.html").unlink()
    os.link(victim, report / "index.html")
    assert main(["report", str(out), "--out", str(report)]) == 0
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert (report / "index.html").read_bytes() == (tmp_path / "kept.html").read_bytes()
    assert "hard link" in capsys.readouterr().err
