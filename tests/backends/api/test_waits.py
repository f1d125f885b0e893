"""Waits that speak: long retry waits print one line, ``Retry-After`` is capped, hangs show.

Issue 26: ``Retry-After: 3600`` waited 600 s, and a hung server 60 s × 7, with nothing
printed even without ``--quiet``. The server is a loopback fake speaking OpenAI's
documented error shape; only the clock of the retries is stood in for (a list that
records each wait), so that a 120 s wait takes no time.
"""

from __future__ import annotations

import re
import threading
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

from enade_bench.backends.api import resilience
from enade_bench.cli.main import main


def _rate_limit(retry_after: str) -> Reply:
    return Reply(
        429,
        {
            "error": {
                "message": "Rate limit reached for requests",
                "type": "requests",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        },
        {"retry-after": retry_after},
    )


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    recorded: list[float] = []
    monkeypatch.setattr(resilience, "_sleep", recorded.append)
    return recorded


@pytest.mark.parametrize(("cap", "expected"), [(None, 120.0), (30, 30.0)])
@pytest.mark.parametrize("quiet", [False, True])
def test_long_waits_print_one_line_each_and_retry_after_is_capped(
    cap: float | None,
    expected: float,
    quiet: bool,
    waits: list[float],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    script = [_rate_limit("1"), _rate_limit("7"), _rate_limit("3600")]
    lock = threading.Lock()

    def handler(req):  # type: ignore[no-untyped-def]
        with lock:
            reply = script.pop(0) if script else None
        return reply or Reply(200, openai_completion(answer_for(user_text_openai(req.json()))))

    with FakeServer(handler) as server:
        api = {
            "provider": "openai",
            "model": "m",
            "api_key": FAKE_KEY,
            "base_url": server.url + "/v1",
            "max_concurrency": 1,
            **({"max_retry_after_s": cap} if cap is not None else {}),
        }
        cfg = write_config(tmp_path, api)
        assert main(["run", str(cfg), "--limit", "1", *(["--quiet"] if quiet else [])]) == 0
        assert len(server.posts()) == 4
    assert waits == [1.0, 7.0, expected]  # issue 26: the third waited 600 s
    lines = capsys.readouterr().err.strip().splitlines()
    if quiet:
        assert lines == []
        return
    assert len(lines) == 2, lines  # the 1 s wait is not announced
    url = re.escape(server.url)
    assert re.fullmatch(
        rf"retry: openai \(m at {url}/v1\): HTTP 429 \(requests\): Rate limit reached for requests "
        r"\(attempt 2/7, took \d\.\d s\); next try in 7\.0 s",
        lines[0],
    ), lines[0]
    assert re.fullmatch(
        rf"retry: openai \(m at {url}/v1\): HTTP 429 \(requests\): Rate limit reached for requests \(attempt 3/7, "
        rf"took \d\.\d s, the server asked 3600 s, capped by model.api.max_retry_after_s\); "
        rf"next try in {expected:.0f} s",
        lines[1],
    ), lines[1]


def test_a_hung_server_is_visible(
    monkeypatch: pytest.MonkeyPatch, waits: list[float], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each attempt that runs into ``timeout_s`` says so (here 0.3 s stands for 60 s, the line
    threshold 0.2 s for 5 s); after ``max_retries`` the run stops with one error line."""
    monkeypatch.setattr(resilience, "SPEAK_AFTER_S", 0.2)
    with FakeServer(lambda req: Reply(200, openai_completion("Resposta: A"), delay=1.0)) as server:
        cfg = write_config(
            tmp_path,
            {
                "provider": "openai",
                "model": "m",
                "api_key": FAKE_KEY,
                "base_url": server.url + "/v1",
                "timeout_s": 0.3,
                "max_retries": 2,
                "max_concurrency": 1,
            },
        )
        assert main(["run", str(cfg), "--limit", "1"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 3, lines
    for k, line in enumerate(lines[:2], start=1):
        assert re.fullmatch(
            rf"retry: openai \(m at .*\): timeout: Request timed out\. \(attempt {k}/3, took 0\.\d s\); "
            r"next try in \d\.\d s",
            line,
        ), line
    assert lines[2].startswith("error: openai (m at ") and "gave up after 3 attempts (timeout" in lines[2]
    assert len(waits) == 2
