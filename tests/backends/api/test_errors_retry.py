"""Errors are not answers: a rerun asks again every question that ended in an error."""

from __future__ import annotations

import json
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

from enade_bench.backends.api.resilience import AUTH_FAILURES_TO_STOP, MALFORMED_TRIES
from enade_bench.cli.main import main
from enade_bench.runner.retry import EXIT_ERRORS, MAX_ATTEMPTS

RIGHT_KEY = FAKE_KEY
WRONG_KEY = "sk-test-WRONG-9876543210zyxwvutsrqponmlk"


def _records(tmp: Path) -> list[dict]:  # type: ignore[type-arg]
    return json.loads((tmp / "out" / "api_test_results.json").read_text(encoding="utf-8"))["records"]


def test_wrong_key_stops_after_three_refusals_and_a_rerun_with_the_right_key_asks_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 26: all 28 requests of a run with a wrong key were sent (and exit 3). Now the
    third 401 in a row stops the run with one error line; the two refused questions are
    errors (no answer), and the rerun with the right key asks every question."""

    def handler(req):  # type: ignore[no-untyped-def]
        if req.headers.get("authorization") != f"Bearer {RIGHT_KEY}":
            return openai_error(401, "Incorrect API key provided.", code="invalid_api_key")
        return Reply(200, openai_completion(answer_for(user_text_openai(req.json()))))

    with FakeServer(handler) as server:
        api = {"provider": "openai", "model": "m", "base_url": server.url + "/v1", "max_concurrency": 1}
        cfg = write_config(tmp_path, {**api, "api_key": WRONG_KEY})
        assert main(["run", str(cfg), "--limit", "28", "--quiet"]) == 2
        captured = capsys.readouterr()
        assert len(server.posts()) == AUTH_FAILURES_TO_STOP == 3  # not 28
        err = captured.err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: openai (m at http://127.0.0.1:"), err
        assert (
            "3 requests in a row were refused (HTTP 401 (invalid_request_error): Incorrect API key provided.)"
            in err[0]
        )
        assert WRONG_KEY not in captured.err + captured.out
        log = tmp_path / "out" / "api_test_intermediate.jsonl"
        logged = [json.loads(line)["record"] for line in log.read_text(encoding="utf-8").splitlines()[1:]]
        assert len(logged) == 2 and all("HTTP 401" in r["error"] and r["prediction"] is None for r in logged)
        assert not (tmp_path / "out" / "api_test_results.json").exists()  # nothing scored

        cfg = write_config(tmp_path, {**api, "api_key": RIGHT_KEY})
        assert main(["run", str(cfg), "--limit", "28", "--quiet"]) == 0
        assert len(server.posts()) - 3 == 28  # the two in error, asked again, and the 26 never asked
    records = _records(tmp_path)
    assert len(records) == 28 and all(r["error"] is None and r["prediction"] for r in records)
    retried = [r for r in records if r.get("attempt")]
    assert len(retried) == 2 and all(
        r["attempt"] == 2 and "HTTP 401" in r["error_history"][0] for r in retried
    )


def test_a_success_between_refusals_keeps_the_run_going(tmp_path: Path) -> None:
    """401/403 on some questions only (a per-model permission) is recorded per question."""
    lock = threading.Lock()
    count = [0]

    def handler(req):  # type: ignore[no-untyped-def]
        with lock:
            count[0] += 1
            n = count[0]
        if n % 3:  # two refusals, then an answer, again and again: never three in a row
            return openai_error(403, "You do not have access to this model.", kind="permission_error")
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
        assert main(["run", str(cfg), "--limit", "9", "--quiet"]) == EXIT_ERRORS
        assert len(server.posts()) == 9
    errors = [r for r in _records(tmp_path) if r["error"]]
    assert len(errors) == 6 and all("HTTP 403" in r["error"] for r in errors)


def test_errors_are_asked_again_up_to_the_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeServer(lambda req: openai_error(400, "Invalid request.")) as server:
        cfg = write_config(
            tmp_path,
            {"provider": "openai", "model": "m", "api_key": FAKE_KEY, "base_url": server.url + "/v1"},
        )
        for _ in range(MAX_ATTEMPTS):
            assert main(["run", str(cfg), "--limit", "1", "--quiet"]) == EXIT_ERRORS
        assert len(server.posts()) == MAX_ATTEMPTS
        assert f"used all {MAX_ATTEMPTS} tries" in capsys.readouterr().err.splitlines()[-1]
        assert main(["run", str(cfg), "--limit", "1", "--quiet"]) == EXIT_ERRORS
        assert len(server.posts()) == MAX_ATTEMPTS  # the error is final now
    (record,) = _records(tmp_path)
    assert record["attempt"] == MAX_ATTEMPTS and len(record["error_history"]) == MAX_ATTEMPTS - 1


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (
            Reply(200, raw=b'{"id": "chatcmpl-1", "choices": [{"ind', content_type="application/json"),
            "body is not complete JSON",
        ),
        (
            Reply(200, raw=b"<html><body>502 Bad Gateway</body></html>", content_type="text/html"),
            "body is not JSON ('<html>",
        ),
        (Reply(200, {**openai_completion("x"), "choices": []}), "empty response (no choices)"),
    ],
    ids=["truncated-json", "html-200", "empty-choices"],
)
def test_malformed_replies_are_tried_twice_then_recorded(
    reply: Reply, reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = threading.Lock()
    seen: dict[str, int] = {}  # prompt -> requests, in the order first seen

    def handler(req):  # type: ignore[no-untyped-def]
        text = user_text_openai(req.json())
        with lock:
            seen[text] = seen.get(text, 0) + 1
            first_question, first_try = text == next(iter(seen)), seen[text] == 1
        if first_question or first_try:  # the first question always, the others once
            return reply
        return Reply(200, openai_completion(answer_for(text)))

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
        assert main(["run", str(cfg), "--limit", "3", "--quiet"]) == EXIT_ERRORS
        err = capsys.readouterr().err
        assert "Traceback" not in err and reason in err
        # issue 26: the first question was tried max_retries + 1 = 7 times (about 46 s each)
        assert len(server.posts()) == MALFORMED_TRIES + 2 + 2 == 6  # 2 tries for the first, 2 for each other
    first, *others = _records(tmp_path)
    assert reason in first["error"] and "(after 2 attempts)" in first["error"]
    assert first["prediction"] is None
    assert all(r["error"] is None and r["prediction"] for r in others)


def test_an_answer_is_logged_even_when_its_extraction_fails(tmp_path: Path) -> None:
    """A failing (plug-in) extractor records the raw answer with the error; a rerun asks again."""
    import dataclasses

    from enade_bench.benchmarks.load import load_experiment
    from enade_bench.runner.plan import RunOptions
    from enade_bench.runner.run import load_backend, run_experiment

    def boom(text: str, letters: str, options: object) -> object:
        raise ValueError("extractor bug")

    with FakeServer(lambda req: Reply(200, openai_completion("Resposta: B"))) as server:
        cfg = write_config(
            tmp_path,
            {"provider": "openai", "model": "m", "api_key": FAKE_KEY, "base_url": server.url + "/v1"},
        )
        options = RunOptions(progress=False, limit=2)
        _, exp = load_experiment(cfg, options)
        exp = dataclasses.replace(load_backend(exp, options), extract_fn=boom)  # type: ignore[arg-type]
        (result,) = run_experiment(exp, options).results
    for record in result.records:
        assert record.raw_output == "Resposta: B" and record.prediction is None
        assert record.error == "extraction failed (ValueError: extractor bug)"
    log = (tmp_path / "out" / "api_test_intermediate.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(log) == 1 + 2
