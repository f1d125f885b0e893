"""The generation arm (``--methods generation``): our generation against lm-eval's ``generate_until``.

Both engines get byte-identical prompts: the exact strings our runner sends for a
generation strategy (S1 zero-shot, S2 one-shot, S3 few-shot; the team prompt and worked
examples of the ENADE benchmark, chat template applied by us).  lm-eval reads each as a
plain context (:mod:`.lmeval_generate`).  Same weights, dtype and threads, greedy
decoding, the same ``max_new_tokens`` and stop rule.  The questions go in blocks; per
block and strategy the engine that goes first alternates, as in the scoring arms.

Figures per strategy (:class:`GenerationStrategyResult`): agreement of the generated
texts (equal after stripping) and of the letters our extraction reads from them, tokens
through the model, seconds, lm-eval over ours, and our S3 time over our S1 time.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from bench.speed.gen_results import GenerationDifference, GenerationSide, GenerationStrategyResult
from bench.speed.measure import measured
from bench.speed.records import BlockTimes, GenDoc, GenerationArmSection, GenQuestion, GenRun, Target
from enade_bench.config import EvaluationConfig
from enade_bench.scoring.extraction import extract_answer
from enade_bench.strategies.registry import STRATEGIES, Strategy

#: The strategies the arm can run: generation without shuffles or chain of thought.
GENERATION_STRATEGIES: dict[str, Strategy] = {
    k: s
    for k, s in STRATEGIES.items()
    if s.method == "generation" and not s.shuffle and not s.chain_of_thought
}
#: Issue 22's targets: ours >= 2x lm-eval on S1 and >= 4x on S3 (lm-eval model time over
#: ours); our S3 time <= 1.3x our S1 time.
GENERATION_TARGETS = {"S1": 2.0, "S3": 4.0, "s3_over_s1": 1.3}


def token_digest(ids: list[int]) -> str:
    """A short digest of token ids (to compare both engines' prompt encodings)."""
    return hashlib.sha256(",".join(map(str, ids)).encode()).hexdigest()[:16]


# -- our side (called in the worker process through OursEngine) -------------------------
def ours_gen_docs(engine: Any, strategy: str, indices: list[int]) -> list[GenDoc]:
    """The exact prompts our runner sends for ``strategy``, as lm-eval documents."""
    executor = engine.executor_for(GENERATION_STRATEGIES[strategy], indices, engine.evaluation)
    docs = []
    for item in executor.plan.items:
        ctx = engine.backend.render(executor.plan.prompt_of(item))
        ids = list(engine.backend.encode(ctx))
        q = item.question
        docs.append(
            GenDoc(
                qid=q.id,
                ctx=ctx,
                answer=q.answer,
                options=list(item.options),
                letters="ABCDEFGHIJ"[: q.n_options],
                prompt_tokens=len(ids),
                prompt_digest=token_digest(ids),
            )
        )
    return docs


def ours_gen_run(
    engine: Any, strategy: str, indices: list[int], max_new_tokens: int, batch_size: int
) -> GenRun:
    """``strategy`` through our runner's executor (greedy), in chunks of ``batch_size`` questions."""
    evaluation = EvaluationConfig(
        max_new_tokens=max_new_tokens, batch_size=batch_size, seed=engine.evaluation.seed
    )
    executor = engine.executor_for(GENERATION_STRATEGIES[strategy], indices, evaluation)
    items = list(executor.plan.items)
    records = []
    with measured(engine.counter, tree=engine.engine == "vllm") as phase:
        for chunk in executor.ahead([items[i : i + batch_size] for i in range(0, len(items), batch_size)]):
            records += executor.run(chunk)
    figures = phase.as_dict()  # model_seconds, ours: the whole executor call (prompts, extraction)
    return GenRun(
        **figures, model_seconds=figures["seconds"], texts={r.id: r.raw_output or "" for r in records}
    )


def stop_strings(engine: Any) -> list[str]:
    """Our stop rule as strings: the end-of-sequence text (the runner stops on that token only)."""
    return [str(engine.backend.tokenizer.eos_token)]  # the HF and the vLLM backend alike


# -- orchestration (parent process) -----------------------------------------------------
@dataclass
class StrategyTotals:
    """One strategy's figures summed over the blocks."""

    #: Prompt tokens of the questions (our encoding).
    prompt_tokens: int = 0
    #: Contexts lm-eval received as sent, and encoded to the same token ids as ours.
    contexts_identical: int = 0
    prompt_tokens_identical: int = 0
    #: The generation settings lm-eval received (its own keys, as it passed them).
    gen_kwargs: dict[str, object] | None = None
    ours: GenerationSide = field(default_factory=GenerationSide)
    lm_eval: GenerationSide = field(default_factory=GenerationSide)


def _accumulate(total: GenerationSide, res: GenRun, questions: int) -> None:
    total.questions += questions
    total.seconds += res["seconds"]
    total.model_seconds += res["model_seconds"]
    total.tokens += res["tokens"]
    total.model_calls += res["model_calls"]
    total.peak_rss_mb = max(total.peak_rss_mb, res["peak_rss_mb"])


def compare_strategy(
    strategy: str, per_question: dict[str, GenQuestion], totals: StrategyTotals
) -> GenerationStrategyResult:
    """Agreement and ratios of one strategy from the per-question texts and the engines' totals."""
    both = {q: e for q, e in per_question.items() if "ours" in e and "lm_eval" in e}
    same_text = same_letter = 0
    differences = []
    for qid, e in both.items():
        texts = e["ours"], e["lm_eval"]  # both present (above)
        letters = [extract_answer(t, e["letters"], e["options"]).letter for t in texts]
        e["ours_letter"], e["lm_eval_letter"] = letters
        same_letter += letters[0] == letters[1]
        if texts[0].strip() == texts[1].strip():
            same_text += 1
        else:
            differences.append(GenerationDifference(qid, texts[0], texts[1], *letters))
    ours, lm = totals.ours, totals.lm_eval
    n = len(both)
    return GenerationStrategyResult(
        strategy=strategy,
        n=n,
        text_agreement=same_text / n if n else 0.0,
        letter_agreement=same_letter / n if n else 0.0,
        contexts_identical=totals.contexts_identical,
        prompt_tokens_identical=totals.prompt_tokens_identical,
        prompt_tokens=totals.prompt_tokens,
        ours=ours,
        lm_eval=lm,
        speedup_model_time=lm.model_seconds / ours.seconds if ours.seconds and lm.seconds else None,
        speedup_end_to_end=lm.seconds / ours.seconds if ours.seconds and lm.seconds else None,
        differences=differences,
    )


def s3_over_s1(results: dict[str, GenerationStrategyResult]) -> float | None:
    """Our S3 time over our S1 time (None without both)."""
    if "S1" not in results or "S3" not in results or not results["S1"].ours.seconds:
        return None
    return results["S3"].ours.seconds / results["S1"].ours.seconds


def _prompt_checks(total: StrategyTotals, docs: list[GenDoc], res: GenRun) -> None:
    """Count the contexts lm-eval received as sent and encoded to the same token ids as ours."""
    digests = {d["qid"]: d["prompt_digest"] for d in docs}
    ids = res.get("prompt_token_ids", {})
    same = sum(token_digest(v) == digests.get(q) for q, v in ids.items())
    total.contexts_identical += res.get("contexts_identical", 0)
    total.prompt_tokens_identical += same
    total.gen_kwargs = res.get("gen_kwargs")


def generation_targets(results: dict[str, GenerationStrategyResult]) -> dict[str, Target]:
    """Issue 22's targets, as measured (see :data:`GENERATION_TARGETS`)."""
    targets: dict[str, Target] = {}
    for sid in ("S1", "S3"):
        r = results.get(sid)
        if r is not None and r.speedup_model_time is not None:
            goal = GENERATION_TARGETS[sid]
            targets[f"generation_{sid}_speedup"] = {
                "target": f">= {goal}",
                "value": r.speedup_model_time,
                "met": r.speedup_model_time >= goal,
            }
    value = s3_over_s1(results)
    if value is not None:
        goal = GENERATION_TARGETS["s3_over_s1"]
        targets["generation_ours_s3_over_s1"] = {"target": f"<= {goal}", "value": value, "met": value <= goal}
    return targets


def run_generation_arm(
    ours: Any,
    lm: Any,
    indices: list[int],
    strategies: list[str],
    opts: Any,
    log: Any,
    warm_up: bool = True,
) -> GenerationArmSection:
    """Both engines on ``strategies`` over ``indices``, in blocks of ``opts.block`` questions.

    Parameters
    ----------
    ours, lm
        :class:`~bench.speed.core.Worker` objects (anything with ``call(name, **kwargs)``);
        ``lm`` may be None (ours only).
    indices
        The questions.
    strategies
        Keys of :data:`GENERATION_STRATEGIES`.
    opts
        :class:`~bench.speed.options.BenchOptions` (``block``, ``batch_size``, ``max_new_tokens``).
    log
        Called with one line per block.
    warm_up
        First run one question, one new token, through both engines, untimed.

    Returns
    -------
    GenerationArmSection
        The report section: per strategy a :class:`GenerationStrategyResult` (written to the
        JSON as its fields), the targets, the per-question texts and the block times.
    """
    until = ours.call("stop_strings")
    if warm_up and indices:  # untimed: each process's first model calls set up its kernels
        first = ours.call("gen_docs", strategy=strategies[0], indices=indices[:1])
        ours.call("gen_run", strategy=strategies[0], indices=indices[:1], max_new_tokens=1, batch_size=1)
        if lm is not None:
            lm.call("gen_run", docs=first, max_new_tokens=1, until=until)
    ours.call("reset_prefix_store")  # ours pays for each prompt prefix once in the arm
    totals = {s: StrategyTotals() for s in strategies}
    per_question: dict[str, dict[str, GenQuestion]] = {s: {} for s in strategies}
    blocks: list[BlockTimes] = []
    for b, start in enumerate(range(0, len(indices), opts.block)):
        block = indices[start : start + opts.block]
        times: BlockTimes = {"block": b, "questions": len(block)}
        for sid in strategies:
            docs: list[GenDoc] = ours.call("gen_docs", strategy=sid, indices=block)
            for d in docs:
                per_question[sid].setdefault(
                    d["qid"], GenQuestion(letters=d["letters"], options=d["options"])
                )
            totals[sid].prompt_tokens += sum(d["prompt_tokens"] for d in docs)
            for engine in ("ours", "lm_eval") if b % 2 == 0 else ("lm_eval", "ours"):
                res: GenRun
                if engine == "ours":
                    res = ours.call(
                        "gen_run",
                        strategy=sid,
                        indices=block,
                        max_new_tokens=opts.max_new_tokens,
                        batch_size=opts.batch_size,
                    )
                elif lm is not None:
                    res = lm.call("gen_run", docs=docs, max_new_tokens=opts.max_new_tokens, until=until)
                    _prompt_checks(totals[sid], docs, res)
                else:
                    continue
                for qid, text in res["texts"].items():
                    per_question[sid][qid][engine] = text
                _accumulate(totals[sid].ours if engine == "ours" else totals[sid].lm_eval, res, len(block))
                times[f"{sid}/{engine}"] = res["seconds"]
        blocks.append(times)
        log(
            ", ".join(
                [f"generation block {b} ({len(block)} q)"]
                + [f"{k} {v:.1f}s" for k, v in times.items() if "/" in k]
            )
        )
    results = {sid: compare_strategy(sid, per_question[sid], totals[sid]) for sid in strategies}
    return GenerationArmSection(
        strategies=list(strategies),
        max_new_tokens=opts.max_new_tokens,
        until=until,
        lm_eval_gen_kwargs=next((t.gen_kwargs for t in totals.values() if t.gen_kwargs), None),
        results=dict(results),
        ours_s3_over_s1=s3_over_s1(results),
        targets=generation_targets(results),
        per_question=per_question,
        blocks=blocks,
    )


def parse_strategies(text: str) -> list[str]:
    """``--gen-strategies``: comma-separated ids of :data:`GENERATION_STRATEGIES`."""
    out = [s.strip().upper() for s in text.split(",") if s.strip()]
    unknown = [s for s in out if s not in GENERATION_STRATEGIES]
    if unknown or not out:
        raise ValueError(
            f"--gen-strategies: expected some of {', '.join(GENERATION_STRATEGIES)}, got {text!r}"
        )
    return out
