"""Smoke test of the generation arm (``python -m bench --methods generation``) on 2 questions.

Both engines run in this process (no worker processes, to keep the test short): ours
through the runner's executor, lm-eval's ``HFLM.generate_until`` through
``simple_evaluate``, on the same S1 and S3 prompts with greedy decoding.  No timing is
asserted; the prompts must reach lm-eval unchanged and the extracted letters agree.
"""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace
from typing import Any

import pytest
from tests.conftest import require_shared

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("lm_eval") is None, reason="lm-eval is not installed"),
]


class _InProcess:
    """The :class:`~bench.speed.core.Worker` interface over an engine in this process."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def call(self, name: str, **kwargs: Any) -> Any:
        return getattr(self.engine, name)(**kwargs)


def test_generation_arm_against_lm_eval() -> None:
    from bench.speed.engines import LmEvalEngine, OursEngine
    from bench.speed.generation import run_generation_arm
    from bench.speed.records import Report
    from bench.speed.report import summarise, table

    questions = str(require_shared("enem", "questions", "pt-br") / "ENEM_2022_*.csv")
    ours = OursEngine(questions, threads=1, batch_size=2)  # a core per xdist worker
    lm = LmEvalEngine(ours.model_dir, threads=1, batch_size=2)
    opts = SimpleNamespace(block=2, batch_size=2, max_new_tokens=3)
    arm = run_generation_arm(
        _InProcess(ours), _InProcess(lm), [0, 1], ["S1", "S3"], opts, lambda _: None, warm_up=False
    )
    assert arm["until"] == ["<|im_end|>"]
    assert arm["lm_eval_gen_kwargs"] == {"until": ["<|im_end|>"], "max_gen_toks": 3, "do_sample": False}
    for sid in ("S1", "S3"):
        r = arm["results"][sid]
        assert r.n == 2
        assert r.contexts_identical == r.prompt_tokens_identical == 2  # byte- and token-identical prompts
        assert r.letter_agreement == 1.0, r.differences
        assert 0.0 <= r.text_agreement <= 1.0
        assert r.ours.tokens > 0 and r.lm_eval.tokens > 0
        assert r.speedup_model_time is not None and r.speedup_model_time > 0
        for entry in arm["per_question"][sid].values():
            assert entry["ours_letter"] == entry["lm_eval_letter"]
    # ours computes the few-shot prefix once; lm-eval feeds every prompt in full
    s3 = arm["results"]["S3"]
    assert s3.ours.tokens < s3.lm_eval.tokens
    assert arm["ours_s3_over_s1"] is not None
    report: Report = {"generation_vs_lm_eval": arm}
    summarise(report)
    assert {"generation_S1_speedup", "generation_S3_speedup", "generation_ours_s3_over_s1"} <= set(
        report["targets"]
    )
    assert "ours S3 time / ours S1 time" in table(report)
