"""Ctrl-C during API requests: out within 2 s, the log intact; a second Ctrl-C forces it."""

from __future__ import annotations

import json
import signal
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

ROOT = Path(__file__).resolve().parents[3]


def _wait_for(check, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _log_records(log: Path) -> list[dict]:  # type: ignore[type-arg]
    if not log.exists():
        return []
    lines = log.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["record"] for line in lines[1:]]


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_during_requests_exits_fast_with_the_log_intact(presses: int, tmp_path: Path) -> None:
    lock = threading.Lock()
    state = {"served": 0, "quick": 2}
    release = threading.Event()

    def handler(req):  # type: ignore[no-untyped-def]
        with lock:
            quick = state["served"] < state["quick"]
            state["served"] += 1
        if not quick:
            release.wait(30)  # a request that hangs (a slow provider)
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
                "timeout_s": 60,
            },
        )
        log = tmp_path / "out" / "api_test_intermediate.jsonl"
        argv = [sys.executable, str(ROOT / "run.py"), str(cfg), "--limit", "4", "--quiet"]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _wait_for(lambda: len(_log_records(log)) == 2 and len(server.requests) == 3)
            time.sleep(0.2)  # the third request is in flight, hanging
            started = time.monotonic()
            for _ in range(presses):
                proc.send_signal(signal.SIGINT)
                time.sleep(0.05)
            _, err = proc.communicate(timeout=10)
            took = time.monotonic() - started
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 130, err
        assert took < 2.0, took
        assert "Traceback" not in err
        lines = err.strip().splitlines()
        assert 1 <= len(lines) <= presses and all(line.startswith("error: interrupted") for line in lines), (
            err
        )
        assert len(_log_records(log)) == 2  # every answer received, and whole lines only
        release.set()
        state["quick"] = 10**6
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    records = _log_records(log)
    assert len(records) == 4 and len({r["id"] for r in records}) == 4


def test_sigterm_stops_like_ctrl_c_releases_the_lock_and_exits_143(tmp_path: Path) -> None:
    """Issue 26: SIGTERM exited 143 with no message and left ``api_test.lock`` behind."""
    release = threading.Event()
    served = []

    def handler(req):  # type: ignore[no-untyped-def]
        served.append(1)
        if len(served) > 2:
            release.wait(30)  # the third request hangs
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
        out = tmp_path / "out"
        log, lock = out / "api_test_intermediate.jsonl", out / "api_test.lock"
        argv = [sys.executable, str(ROOT / "run.py"), str(cfg), "--limit", "4"]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _wait_for(lambda: len(_log_records(log)) == 2 and len(server.requests) == 3)
            assert lock.exists()  # held while the run works
            started = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=10)
            took = time.monotonic() - started
        finally:
            if proc.poll() is None:
                proc.kill()
            release.set()
    assert proc.returncode == 143, err
    assert took < 2.0 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == (
        "error: terminated (SIGTERM; partial results are kept; rerun to resume)"
    ), err
    assert not lock.exists() and len(_log_records(log)) == 2
