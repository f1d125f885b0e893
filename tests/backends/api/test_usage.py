"""Tokens and seconds per record: each provider's documented usage fields, read at the HTTP level.

The loopback server answers with the shapes of the providers' API references (OpenAI Chat
Completions ``usage``, Anthropic Messages ``usage`` with its cache counts, Gemini
``usageMetadata`` with thinking tokens) and a known delay; the records carry those counts,
the request's seconds, and keep them through a resumed run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from api_fakes import (
    FAKE_KEY,
    FakeServer,
    Reply,
    anthropic_message,
    gemini_response,
    openai_completion,
    user_text_openai,
    write_config,
)

from enade_bench.backends.api.backend import ApiBackend
from enade_bench.backends.api.keys import resolve_api_key
from enade_bench.backends.base import GenerationParams
from enade_bench.benchmarks import run_config
from enade_bench.config import ApiConfig
from enade_bench.prompts.builder import PromptParts
from enade_bench.runner.plan import RunOptions

PROMPT = PromptParts(system="Sistema.", user="Pergunta?\nA) x\nB) y", answer_label="Resposta:", prefill=False)
DELAY = 0.02


def _backend(provider: str, url: str) -> ApiBackend:
    cfg = ApiConfig(provider=provider, model="m", api_key=FAKE_KEY, base_url=url, max_concurrency=1)
    return ApiBackend(cfg, resolve_api_key(cfg))


@pytest.mark.parametrize(
    ("provider", "payload", "tokens"),
    [
        ("openai", {"usage": {"prompt_tokens": 31, "completion_tokens": 4, "total_tokens": 35}}, (31, 4)),
        (
            "anthropic",
            {
                "usage": {
                    "input_tokens": 7,
                    "cache_creation_input_tokens": 20,
                    "cache_read_input_tokens": 5,
                    "output_tokens": 4,
                }
            },
            (32, 4),
        ),
        (
            "google",
            {"usageMetadata": {"promptTokenCount": 31, "candidatesTokenCount": 4, "thoughtsTokenCount": 9}},
            (31, 13),
        ),
        ("openai", {}, (None, None)),  # no usage in the reply: only the seconds are known
    ],
)
def test_each_provider_usage_and_the_request_seconds(provider: str, payload: dict, tokens: tuple) -> None:  # type: ignore[type-arg]
    body = {
        "openai": openai_completion("Resposta: B"),
        "anthropic": anthropic_message("Resposta: B"),
        "google": gemini_response("Resposta: B"),
    }[provider]
    body.pop("usage", None), body.pop("usageMetadata", None)
    with FakeServer(lambda req: Reply(200, {**body, **payload}, delay=DELAY)) as server:
        url = server.url + ("/v1" if provider == "openai" else "")
        (gen,) = _backend(provider, url).generate([PROMPT], GenerationParams(max_new_tokens=5))
    assert gen.texts == ["Resposta: B"] and gen.usage is not None
    assert (gen.usage.input_tokens, gen.usage.output_tokens) == tokens
    assert gen.usage.seconds is not None and DELAY <= gen.usage.seconds < DELAY + 5


def test_samples_add_up_and_a_resumed_run_keeps_them(tmp_path: Path) -> None:
    def handler(req):  # type: ignore[no-untyped-def]
        body = req.json()
        reply = openai_completion(f"Resposta: {'AB'[body['seed'] % 2]}")
        reply["usage"] = {"prompt_tokens": len(user_text_openai(body)), "completion_tokens": body["seed"]}
        return Reply(200, reply, delay=DELAY)

    api = {"provider": "openai", "model": "m", "api_key": FAKE_KEY}
    with FakeServer(handler) as server:
        cfg = write_config(
            tmp_path, {**api, "base_url": server.url + "/v1"}, {"n_samples": 2, "temperature": 0.7}
        )
        (first,) = run_config(cfg, RunOptions(progress=False, limit=2)).results
        (resumed,) = run_config(cfg, RunOptions(progress=False, limit=3)).results
    assert len(server.posts()) == 6  # 2 + 1 questions, 2 samples each: nothing asked twice
    sent = {r.json()["messages"][-1]["content"] for r in server.posts()}
    for record in resumed.records:
        assert record.usage is not None
        user = json.loads(record.prompt)[-1]["content"]
        assert user in sent
        assert record.usage.input_tokens == 2 * len(user)  # each sample's request counted
        assert record.usage.output_tokens == 42 + 43  # seeds 42 and 43
        assert record.usage.seconds is not None and record.usage.seconds >= 2 * DELAY
    assert [r.usage for r in resumed.records[:2]] == [r.usage for r in first.records]
    stored = json.loads((tmp_path / "out" / "api_test_results.json").read_text())["records"]
    assert stored[0]["usage"] == resumed.records[0].usage.model_dump()  # type: ignore[union-attr]
