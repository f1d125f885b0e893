"""OpenAI, Maritaca and NVIDIA through the ``openai`` SDK, against a loopback server."""

from __future__ import annotations

import json
import time
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

from enade_bench.backends.api.backend import ApiBackend
from enade_bench.backends.api.clients import base_url_for
from enade_bench.backends.api.keys import resolve_api_key
from enade_bench.backends.base import GenerationParams
from enade_bench.benchmarks import run_config
from enade_bench.config import ApiConfig
from enade_bench.errors import UserError
from enade_bench.prompts.builder import PromptParts
from enade_bench.runner.plan import RunOptions
from enade_bench.scoring.extraction import extract_answer

PROMPT = PromptParts(
    system="Você é um avaliador.", user="Pergunta?\nA) x\nB) y", answer_label="Resposta:", prefill=False
)


def chat_handler(req):  # type: ignore[no-untyped-def]
    body = req.json()
    return Reply(200, openai_completion(answer_for(user_text_openai(body))))


def run(config: Path, **kw):  # type: ignore[no-untyped-def]
    return run_config(config, RunOptions(progress=False, **kw)).results


def test_openai_generation_end_to_end(tmp_path: Path) -> None:
    with FakeServer(chat_handler) as server:
        cfg = write_config(
            tmp_path,
            {
                "provider": "openai",
                "model": "gpt-4o-mini",
                "api_key": FAKE_KEY,
                "base_url": server.url + "/v1",
            },
        )
        (result,) = run(cfg, limit=4)
    posts = server.posts("/v1/chat/completions")
    assert len(posts) == 4
    first = posts[0]
    assert first.headers["authorization"] == f"Bearer {FAKE_KEY}"
    body = first.json()
    assert body["model"] == "gpt-4o-mini"
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["max_completion_tokens"] == 100 and body["temperature"] == 0.0
    by_prompt = {json.dumps(r.json()["messages"], ensure_ascii=False): r for r in posts}
    for record in result.records:
        assert record.error is None
        sent = by_prompt[record.prompt].json()  # the record's prompt is exactly what was sent
        expected = extract_answer(answer_for(user_text_openai(sent)), "ABCDE"[: record.n_options], ())
        assert record.raw_output == answer_for(user_text_openai(sent))
        assert record.displayed_prediction == expected.letter


def test_samples_are_all_recorded_with_majority_and_agreement(tmp_path: Path) -> None:
    seen: list[int] = []

    def handler(req):  # type: ignore[no-untyped-def]
        body = req.json()
        seen.append(body["seed"])
        letter = "A" if body["seed"] % 3 else "C"  # seeds 42,43,44 -> C, A, A
        return Reply(200, openai_completion(f"Resposta: {letter}"))

    with FakeServer(handler) as server:
        cfg = write_config(
            tmp_path,
            {"provider": "openai", "model": "m", "api_key": FAKE_KEY, "base_url": server.url + "/v1"},
            {"n_samples": 3, "temperature": 0.7},
        )
        (result,) = run(cfg, limit=2)
    assert sorted(seen) == [42, 42, 43, 43, 44, 44]
    for record in result.records:
        assert [s.text for s in record.samples or []] == ["Resposta: C", "Resposta: A", "Resposta: A"]
        assert record.displayed_prediction == "A"
        assert record.agreement == pytest.approx(2 / 3)


def test_permanent_errors_are_recorded_not_raised(tmp_path: Path) -> None:
    def handler(req):  # type: ignore[no-untyped-def]
        text = user_text_openai(req.json())
        if "8.080" in text:  # the first demo question: a documented 400
            return openai_error(400, "Invalid 'messages': content too long.", "context_length_exceeded")
        if "Resposta" in text and "SUS" in text:
            return Reply(200, openai_completion(None, refusal="I can't help with that."))
        return Reply(200, openai_completion("Resposta: B"))

    with FakeServer(handler) as server:
        cfg = write_config(
            tmp_path,
            {"provider": "openai", "model": "m", "api_key": FAKE_KEY, "base_url": server.url + "/v1"},
        )
        (result,) = run(cfg, limit=5)
    errors = {r.id: r.error for r in result.records if r.error}
    assert any("HTTP 400" in e and "content too long" in e for e in errors.values())
    assert len(server.posts()) == 5  # a 400 is not retried
    for record in result.records:
        if record.error:
            assert record.prediction is None and record.raw_output is None
    assert (result.totals.n, result.totals.n_errors) == (4, 1)  # an error is not scored


def test_unauthorized_is_recorded_and_key_never_echoed(tmp_path: Path) -> None:
    def handler(req):  # type: ignore[no-untyped-def]
        return openai_error(
            401, f"Incorrect API key provided: {FAKE_KEY[:20]}...{FAKE_KEY[-4:]}.", "invalid_api_key"
        )

    with FakeServer(handler) as server:
        cfg = write_config(
            tmp_path,
            {"provider": "openai", "model": "m", "api_key": FAKE_KEY, "base_url": server.url + "/v1"},
        )
        (result,) = run(cfg, limit=2)
    for record in result.records:
        assert record.error and "HTTP 401" in record.error
        assert FAKE_KEY[:12] not in record.error and FAKE_KEY[:20] not in record.error


def test_retry_after_is_honoured(tmp_path: Path) -> None:
    calls: list[float] = []

    def handler(req):  # type: ignore[no-untyped-def]
        calls.append(time.monotonic())
        if len(calls) == 1:
            return Reply(
                429,
                {
                    "error": {
                        "message": "Rate limit reached",
                        "type": "requests",
                        "code": "rate_limit_exceeded",
                    }
                },
                {"retry-after": "1"},
            )
        return Reply(200, openai_completion("Resposta: A"))

    cfg = ApiConfig(provider="openai", model="m", api_key=FAKE_KEY, retry_base_delay_s=0.01)
    with FakeServer(handler) as server:
        served = cfg.model_copy(update={"base_url": server.url + "/v1"})
        backend = ApiBackend(served, resolve_api_key(served))
        (gen,) = backend.generate([PROMPT], GenerationParams(max_new_tokens=5))
    assert gen.texts == ["Resposta: A"] and gen.error is None
    assert len(calls) == 2 and calls[1] - calls[0] >= 0.95


def test_requests_per_minute_budget_spaces_requests() -> None:
    def handler(req):  # type: ignore[no-untyped-def]
        return Reply(200, openai_completion("Resposta: A"))

    with FakeServer(handler) as server:
        cfg = ApiConfig(
            provider="openai",
            model="m",
            api_key=FAKE_KEY,
            base_url=server.url + "/v1",
            requests_per_minute=600,
            max_concurrency=4,
        )
        ApiBackend(cfg, resolve_api_key(cfg)).generate([PROMPT] * 4, GenerationParams(max_new_tokens=5))
    starts = sorted(r.at for r in server.requests)
    assert starts[-1] - starts[0] >= 3 * 0.1 * 0.9  # 600/min = one start every 0.1 s


@pytest.mark.parametrize(
    ("provider", "env", "default_url"),
    [
        ("openai", "OPENAI_API_KEY", None),
        ("maritaca", "MARITACA", "https://chat.maritaca.ai/api"),
        ("nvidia", "NVIDIA_API_KEY", "https://integrate.api.nvidia.com/v1"),
    ],
)
def test_keys_from_environment_and_default_urls(monkeypatch, provider, env, default_url) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(env, raising=False)
    cfg = ApiConfig(provider=provider, model="m")
    with pytest.raises(UserError, match=env):
        ApiBackend(cfg, resolve_api_key(cfg))
    monkeypatch.setenv(env, FAKE_KEY)
    backend = ApiBackend(cfg, resolve_api_key(cfg))
    assert backend.client.api_key == FAKE_KEY
    assert base_url_for(cfg) == default_url
    if default_url:
        assert str(backend.client.base_url).rstrip("/") == default_url


@pytest.mark.parametrize("provider", ["maritaca", "nvidia"])
def test_maritaca_and_nvidia_generation(tmp_path: Path, provider: str) -> None:
    with FakeServer(chat_handler) as server:
        cfg = write_config(
            tmp_path,
            {"provider": provider, "model": "sabia-3", "api_key": FAKE_KEY, "base_url": server.url + "/api"},
        )
        (result,) = run(cfg, limit=2)
    assert [r.path for r in server.requests] == ["/api/chat/completions"] * 2
    assert all("max_tokens" in r.json() and "max_completion_tokens" not in r.json() for r in server.requests)
    assert all(r.error is None and r.raw_output for r in result.records)
