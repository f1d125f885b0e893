"""Every engine gives the same answers: HF in-process, vLLM in-process and the real vLLM server.

Same weights (the packaged SmolLM2, float32, CPU), same prompts (chat template +
``Resposta:`` prefill), same methods: on the first 4 demo questions the predictions
agree exactly for S1 (greedy generation), S5 (log_prob) and first_token, and the
score differences are bounded.  The measurement over the whole demo and 40 ENEM
questions is ``python -m bench.speed.vllm_parity`` (docs/vllm.md, "Measured
agreement"): a measurement, not a test.
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.speed.vllm_parity import compare, questions, run_method, server_backend

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]  # the first test starts the engines
METHODS = ("S1", "S5", "first_token")
#: Largest |log-probability difference| accepted between engines (float32; measured ~1e-4).
SCORE_TOLERANCE = 0.02
#: A few questions prove the engines agree; the measurement covers 68 (docs/vllm.md).
N_QUESTIONS = 4


@pytest.fixture(scope="package")
def parity_questions() -> dict[str, list[Any]]:
    return {"demo": questions("demo", N_QUESTIONS)}


@pytest.fixture(scope="package")
def records_of(smollm2_backend, vllm_backend, vllm_server, parity_questions):  # type: ignore[no-untyped-def]
    """``records_of(engine, dataset, method)``, each computed once per session."""
    backends = {"hf": smollm2_backend, "vllm": vllm_backend, "server": server_backend(vllm_server)}
    memo: dict[tuple[str, str, str], Any] = {}

    def get(engine: str, dataset: str, method: str) -> Any:
        key = (engine, dataset, method)
        if key not in memo:
            memo[key] = run_method(backends[engine], method, parity_questions[dataset])
        return memo[key]

    return get


@pytest.mark.parametrize("engine", ["vllm", "server"])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dataset", ["demo"])
def test_engine_agrees_with_hf(records_of, record_property, engine: str, method: str, dataset: str) -> None:  # type: ignore[no-untyped-def]
    reference = records_of("hf", dataset, method)
    other = records_of(engine, dataset, method)
    assert [r.prompt for r in other] == [r.prompt for r in reference]  # the same text, every engine
    assert {r.prompt_form for r in other} == {"chat_template_rendered"}
    c = compare(reference, other)
    record_property("agreement", f"{c.agree}/{c.n}")
    record_property("max_score_diff", c.max_score_diff)
    print(f"{engine} vs hf, {dataset}, {method}: {c.agree}/{c.n} agree, max score diff {c.max_score_diff}")
    assert c.agree == c.n == N_QUESTIONS, f"predictions differ on {c.differing}"
    if method != "S1":
        assert c.max_score_diff is not None and c.max_score_diff < SCORE_TOLERANCE
    else:
        same_text = sum(a.raw_output == b.raw_output for a, b in zip(reference, other, strict=True))
        assert same_text / c.n >= 0.99
