"""One process at a time on a run's files: two real processes, a killed holder taken over."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from api_fakes import (
    FAKE_KEY,
    FakeServer,
    Reply,
    answer_for,
    openai_completion,
    user_text_openai,
    write_config,
)

from enade_bench.results.lock import run_lock

ROOT = Path(__file__).resolve().parents[2]


def _run(cfg: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(ROOT / "run.py"), str(cfg), "--limit", "2", "--quiet", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(check, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_second_process_is_refused_and_a_killed_holder_is_taken_over(tmp_path: Path) -> None:
    release = threading.Event()

    def handler(req):  # type: ignore[no-untyped-def]
        release.wait(60)  # the first run hangs in its first request until released
        return Reply(200, openai_completion(answer_for(user_text_openai(req.json()))))

    with FakeServer(handler) as server:
        cfg = write_config(
            tmp_path,
            {
                "provider": "openai",
                "model": "m",
                "api_key": FAKE_KEY,
                "base_url": server.url + "/v1",
                "max_concurrency": 1,
            },
        )
        lock = tmp_path / "out" / "api_test.lock"
        first = _run(cfg)
        try:
            _wait_for(lambda: len(server.requests) > 0)  # the first run holds the lock, mid-request
            holder = json.loads(lock.read_text(encoding="utf-8"))
            assert holder["pid"] == first.pid and holder["host"] == socket.gethostname()
            for extra in ((), ("--no-resume",)):
                second = _run(cfg, *extra)
                out, err = second.communicate(timeout=120)
                lines = err.strip().splitlines()
                assert second.returncode == 2, err
                assert len(lines) == 1 and lines[0].startswith("error: "), err
                assert f"PID {first.pid} on {socket.gethostname()} since {holder['started']}" in lines[0]
                assert str(lock) in lines[0]
            assert len(server.requests) == 1  # the refused runs asked nothing
            first.send_signal(signal.SIGKILL)
            first.wait(30)
        finally:
            if first.poll() is None:
                first.kill()
        assert lock.exists()  # a killed run leaves its lock file behind, but not its flock
        release.set()
        third = _run(cfg)
        out, err = third.communicate(timeout=120)
    assert third.returncode == 0, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: took over 1 lock(s) of a run that is gone")
    assert f"(PID {first.pid} on {socket.gethostname()}" in lines[0]
    assert "accuracy" in out
    assert not lock.exists()  # a finished run removes its lock


def test_lock_is_reentrant_in_one_process_and_released(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    with run_lock([path]), run_lock([path]):
        assert json.loads(path.read_text(encoding="utf-8"))["pid"]
    assert not path.exists()
    with run_lock([path]):
        pass


def test_locks_left_by_one_killed_run_give_one_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A killed study leaves a lock per strategy (six): taking them over says so once, counted."""
    stale = json.dumps(
        {"pid": 4242, "host": "gone-host", "started": "2026-01-01T00:00:00+00:00", "command": "x"}
    )
    paths = [tmp_path / f"S{k}.lock" for k in range(1, 7)]
    for path in paths:
        path.write_text(stale + "\n", encoding="utf-8")
    with run_lock(paths):
        pass
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "warning: took over 6 lock(s) of a run that is gone (PID 4242 on gone-host"
    )
    assert "and 5 more beside it" in lines[0]
    with run_lock(paths):  # released cleanly: nothing is taken over the second time
        pass
    assert capsys.readouterr().err == ""
