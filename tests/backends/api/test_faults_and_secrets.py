"""Rate limits, outages, resumption, capabilities and secrets, end to end through the runner."""

from __future__ import annotations

import json
import logging
import random
import threading
from pathlib import Path

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

from enade_bench.benchmarks import run_config
from enade_bench.cli.main import main
from enade_bench.masking import MARK
from enade_bench.runner.plan import RunOptions
from enade_bench.scoring.extraction import extract_answer


def test_fault_injection_every_question_answered(tmp_path: Path) -> None:
    """~30% of requests fail with 429, 500 or a timeout; one question gets a permanent 400."""
    rng = random.Random(1234)
    lock = threading.Lock()
    injected = {"429": 0, "500": 0, "timeout": 0}

    def handler(req):  # type: ignore[no-untyped-def]
        text = user_text_openai(req.json())
        if "8.080" in text:
            return openai_error(400, "Invalid request: prompt rejected by policy.")
        with lock:
            roll = rng.random()
        if roll < 0.1:
            injected["429"] += 1
            return Reply(
                429,
                {
                    "error": {
                        "message": "Rate limit reached",
                        "type": "requests",
                        "code": "rate_limit_exceeded",
                    }
                },
                {"retry-after-ms": "20"},
            )
        if roll < 0.2:
            injected["500"] += 1
            return openai_error(
                500, "The server had an error while processing your request.", kind="server_error"
            )
        if roll < 0.3:
            injected["timeout"] += 1
            return Reply(200, openai_completion(answer_for(text)), delay=1.0)  # client gives up at 0.4 s
        return Reply(200, openai_completion(answer_for(text)))

    with FakeServer(handler) as server:
        cfg = write_config(
            tmp_path,
            {
                "provider": "openai",
                "model": "gpt-4o-mini",
                "api_key": FAKE_KEY,
                "base_url": server.url + "/v1",
                "timeout_s": 0.4,
                "max_retries": 10,
                "max_concurrency": 6,
            },
        )
        (result,) = run_config(cfg, RunOptions(progress=False, limit=24)).results
    assert all(v > 0 for v in injected.values()), injected
    assert sum(injected.values()) >= 0.15 * len(server.requests)
    rejected = [r for r in result.records if r.error]
    assert len(rejected) == 1 and "HTTP 400" in (rejected[0].error or "")
    answered = [r for r in result.records if not r.error]
    assert len(answered) == 23
    for record in answered:
        user = json.loads(record.prompt)[-1]["content"]
        letters = "ABCDE"[: record.n_options]
        assert record.raw_output == answer_for(user)
        assert record.displayed_prediction == extract_answer(answer_for(user), letters, ()).letter
    log = tmp_path / "out" / "api_test_intermediate.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + 24  # header + one line per question, no duplicates


def test_outage_stops_run_keeps_completed_answers_and_resumes(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    state = {"ok_left": 5, "served_ok": 0}
    lock = threading.Lock()

    def handler(req):  # type: ignore[no-untyped-def]
        with lock:
            if state["ok_left"] > 0:
                state["ok_left"] -= 1
                state["served_ok"] += 1
                return Reply(200, openai_completion(answer_for(user_text_openai(req.json()))))
        return openai_error(503, "Service Unavailable", kind="server_error")

    with FakeServer(handler) as server:
        cfg = write_config(
            tmp_path,
            {
                "provider": "openai",
                "model": "m",
                "api_key": FAKE_KEY,
                "base_url": server.url + "/v1",
                "max_retries": 2,
                "max_concurrency": 2,
            },
        )
        status = main(["run", str(cfg), "--limit", "12", "--quiet"])
        err = capsys.readouterr().err.strip().splitlines()
        assert status == 2 and len(err) == 1 and err[0].startswith("error: ")
        assert "503" in err[0] and "rerun" in err[0] and FAKE_KEY not in err[0]
        log = tmp_path / "out" / "api_test_intermediate.jsonl"
        logged = log.read_text(encoding="utf-8").splitlines()[1:]
        assert len(logged) == state["served_ok"] == 5  # every answer received was written at once
        before = len(server.posts())
        state["ok_left"] = 10**6
        assert main(["run", str(cfg), "--limit", "12", "--quiet"]) == 0
        assert len(server.posts()) - before == 12 - 5  # nothing paid twice
    result = json.loads((tmp_path / "out" / "api_test_results.json").read_text(encoding="utf-8"))
    assert len(result["records"]) == 12 and all(r["error"] is None for r in result["records"])


def test_impossible_method_is_an_error_at_load(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    cfg = write_config(
        tmp_path, {"provider": "anthropic", "model": "m", "api_key": FAKE_KEY}, {"method": "log_prob"}
    )
    assert main(["run", str(cfg), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "log_prob" in err[0] and "it can run: generation" in err[0]
    cfg = write_config(tmp_path, {"provider": "openai", "model": "m", "api_key": FAKE_KEY}, name="b")
    assert main(["run", str(cfg), "--strategy", "S5", "--quiet"]) == 2
    assert "first_token, generation" in capsys.readouterr().err


def test_key_never_written_anywhere(tmp_path: Path, monkeypatch, capsys, caplog) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("OPENAI_LOG", "debug")
    calls = {"n": 0}

    def handler(req):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] % 3 == 0:  # a server that echoes the key it was given
            return openai_error(401, f"Incorrect API key provided: {FAKE_KEY}", "invalid_api_key")
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
        assert main(["run", str(cfg), "--limit", "6"]) == 3  # two questions ended in an error
    captured = capsys.readouterr()
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert {p.suffix for p in files} >= {".json", ".csv", ".jsonl"}
    result = json.loads((tmp_path / "out" / "api_test_results.json").read_text(encoding="utf-8"))
    assert result["config"]["model"]["api"]["api_key"] == "***"
    assert sum(1 for r in result["records"] if r["error"]) == 2
    texts = [p.read_text(encoding="utf-8") for p in files] + [captured.out, captured.err, caplog.text]
    for text in texts:
        for start in range(0, len(FAKE_KEY) - 12):
            assert FAKE_KEY[start : start + 12] not in text


@pytest.mark.parametrize("fragment_len", [12])
def test_redact_removes_fragments(fragment_len: int) -> None:
    from enade_bench.backends.api.keys import redact

    key = FAKE_KEY
    text = f"start {key[: fragment_len + 3]} middle {key[5 : 5 + fragment_len]} end {key}"
    cleaned = redact(text, [key])
    assert all(key[i : i + fragment_len] not in cleaned for i in range(len(key) - fragment_len + 1))
    assert cleaned == MARK  # a text holding a piece of the key is withheld whole (issue 40)
