"""Anthropic (Messages API) and Google Gemini (generateContent), against a loopback server."""

from __future__ import annotations

from pathlib import Path

import pytest
from api_fakes import (
    FAKE_KEY,
    FakeServer,
    Reply,
    answer_for,
    anthropic_error,
    anthropic_message,
    gemini_error,
    gemini_response,
    gemini_user_text,
    write_config,
)

from enade_bench.backends.api.backend import ApiBackend
from enade_bench.backends.api.keys import resolve_api_key
from enade_bench.backends.base import GenerationParams
from enade_bench.benchmarks import run_config
from enade_bench.config import ApiConfig
from enade_bench.errors import UserError
from enade_bench.prompts.builder import PromptParts
from enade_bench.runner.plan import RunOptions

PROMPT = PromptParts(system="Sistema.", user="Pergunta?\nA) x\nB) y", answer_label="Resposta:", prefill=False)
GREEDY = GenerationParams(max_new_tokens=5)


def test_anthropic_generation_end_to_end(tmp_path: Path) -> None:
    def handler(req):  # type: ignore[no-untyped-def]
        body = req.json()
        return Reply(200, anthropic_message(answer_for(body["messages"][0]["content"])))

    with FakeServer(handler) as server:
        cfg = write_config(
            tmp_path,
            {
                "provider": "anthropic",
                "model": "claude-sonnet-4-6",
                "api_key": FAKE_KEY,
                "base_url": server.url,
            },
        )
        (result,) = run_config(cfg, RunOptions(progress=False, limit=3)).results
    posts = server.posts("/v1/messages")
    assert len(posts) == 3
    auth = posts[0].headers.get("x-api-key") or posts[0].headers["authorization"].removeprefix("Bearer ")
    assert auth == FAKE_KEY and "anthropic-version" in posts[0].headers
    body = posts[0].json()
    assert body["model"] == "claude-sonnet-4-6" and body["max_tokens"] == 100
    assert body["system"] and body["messages"][0]["role"] == "user"
    for record in result.records:
        assert record.error is None and record.raw_output and record.raw_output.startswith("Resposta: ")


def test_anthropic_overloaded_is_retried_refusal_and_400_are_recorded() -> None:
    replies = [
        anthropic_error(529, "overloaded_error", "Overloaded"),
        Reply(200, anthropic_message("Resposta: B")),
        Reply(200, anthropic_message("", stop_reason="refusal")),
        anthropic_error(400, "invalid_request_error", "max_tokens: Field required"),
    ]

    def handler(req):  # type: ignore[no-untyped-def]
        return replies.pop(0)

    with FakeServer(handler) as server:
        cfg = ApiConfig(
            provider="anthropic",
            model="m",
            api_key=FAKE_KEY,
            base_url=server.url,
            retry_base_delay_s=0.01,
            max_concurrency=1,
        )
        backend = ApiBackend(cfg, resolve_api_key(cfg))
        ok, refused, bad = (backend.generate([PROMPT], GREEDY)[0] for _ in range(3))
    assert ok.texts == ["Resposta: B"] and ok.error is None
    assert refused.texts == [] and refused.error and "refus" in refused.error
    assert bad.texts == [] and bad.error and "HTTP 400" in bad.error and "max_tokens" in bad.error
    assert len(server.requests) == 4


def test_gemini_generation_end_to_end(tmp_path: Path) -> None:
    def handler(req):  # type: ignore[no-untyped-def]
        return Reply(200, gemini_response(answer_for(gemini_user_text(req.json()))))

    with FakeServer(handler) as server:
        cfg = write_config(
            tmp_path,
            {"provider": "google", "model": "gemini-2.5-flash", "api_key": FAKE_KEY, "base_url": server.url},
            {"temperature": 0.5, "n_samples": 2},
        )
        (result,) = run_config(cfg, RunOptions(progress=False, limit=2)).results
    posts = server.posts(":generateContent")
    assert len(posts) == 4
    assert posts[0].path.endswith("/models/gemini-2.5-flash:generateContent")
    assert posts[0].headers["x-goog-api-key"] == FAKE_KEY
    body = posts[0].json()
    assert body["systemInstruction"]["parts"][0]["text"]
    assert body["generationConfig"]["maxOutputTokens"] == 100
    assert body["generationConfig"]["temperature"] == 0.5
    assert sorted(p.json()["generationConfig"]["seed"] for p in posts) == [42, 42, 43, 43]
    for record in result.records:
        assert record.error is None and len(record.samples or []) == 2


def test_gemini_errors() -> None:
    replies = [
        gemini_error(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
        gemini_error(503, "UNAVAILABLE", "The model is overloaded."),
        Reply(200, gemini_response("Resposta: C")),
        Reply(200, gemini_response(None, block="SAFETY")),
        Reply(200, gemini_response(None, finish="SAFETY")),
        gemini_error(400, "INVALID_ARGUMENT", "Request contains an invalid argument."),
    ]

    def handler(req):  # type: ignore[no-untyped-def]
        return replies.pop(0)

    with FakeServer(handler) as server:
        cfg = ApiConfig(
            provider="google",
            model="gemini-2.5-flash",
            api_key=FAKE_KEY,
            base_url=server.url,
            retry_base_delay_s=0.01,
            max_concurrency=1,
        )
        backend = ApiBackend(cfg, resolve_api_key(cfg))
        ok, blocked, unsafe, bad = (backend.generate([PROMPT], GREEDY)[0] for _ in range(4))
    assert ok.texts == ["Resposta: C"]
    assert blocked.error and "SAFETY" in blocked.error and not blocked.texts
    assert unsafe.error and "SAFETY" in unsafe.error
    assert bad.error == "HTTP 400 (INVALID_ARGUMENT): Request contains an invalid argument."
    assert len(server.requests) == 6


@pytest.mark.parametrize(("provider", "env"), [("anthropic", "ANTHROPIC_API_KEY"), ("google", "GEMINI")])
def test_key_from_environment(monkeypatch, provider: str, env: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(env, raising=False)
    with pytest.raises(UserError, match=env):
        unkeyed = ApiConfig(provider=provider, model="m")  # type: ignore[arg-type]
        ApiBackend(unkeyed, resolve_api_key(unkeyed))
    monkeypatch.setenv(env, FAKE_KEY)

    def handler(req):  # type: ignore[no-untyped-def]
        auth = req.headers.get("authorization", "").removeprefix("Bearer ")
        seen.append(req.headers.get("x-api-key") or req.headers.get("x-goog-api-key") or auth)
        body = anthropic_message("Resposta: A") if provider == "anthropic" else gemini_response("Resposta: A")
        return Reply(200, body)

    seen: list[str | None] = []
    with FakeServer(handler) as server:
        cfg = ApiConfig(provider=provider, model="m", base_url=server.url)  # type: ignore[arg-type]
        (gen,) = ApiBackend(cfg, resolve_api_key(cfg)).generate([PROMPT], GREEDY)
    assert gen.texts == ["Resposta: A"] and seen == [FAKE_KEY]
