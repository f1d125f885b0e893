"""What a run writes: its results file, summary CSV and timing, and its resume fingerprint."""

from __future__ import annotations

import hashlib
import json

from enade_bench.metrics.accuracy import breakdown, field_breakdowns, scored, summarize
from enade_bench.metrics.position_bias import position_bias
from enade_bench.results.environment import environment
from enade_bench.results.records import QuestionRecord, RunResult
from enade_bench.results.store import atomic_write_text, dump_json
from enade_bench.results.summary import BatchTiming, DatasetInfo, LiveTiming, LogInfo, StrategyInfo
from enade_bench.runner.outputs import RunOutcome, record_fields, summary_csv
from enade_bench.runner.plan import Experiment, StrategyPlan
from enade_bench.strategies.registry import Strategy

#: Evaluation keys a strategy replaces (its own method, shots and shuffles are hashed as the
#: strategy) and, per method, the keys that method never reads.
_REPLACED = ("method", "shot_type", "shuffle_alternatives", "n_shuffles", "run_all_strategies")
_UNUSED_BY = {
    "generation": ("letter_variants",),
    "log_prob": ("max_new_tokens", "cot_max_new_tokens", "temperature", "n_samples", "letter_variants"),
    "first_token": ("max_new_tokens", "cot_max_new_tokens", "temperature", "n_samples"),
}


def fingerprint(exp: Experiment, strategy: Strategy) -> str:
    """sha256 of everything that changes the answers of one strategy (the resume check).

    Per strategy, over what that strategy uses: the config minus output settings and
    description, minus the evaluation keys the strategy replaces or its method never
    reads (a chain-of-thought run reads ``cot_max_new_tokens``, any other generation
    ``max_new_tokens``); the strategy; the data; the prompt files it reads (the worked
    examples only when it shows some); and the model identity. So fixing S3's examples
    or adding a strategy to the command line does not discard S1's or S5's finished log.
    ``batch_size`` counts only for sampled generation, whose seeds follow the chunks
    (:mod:`enade_bench.runner.schedule`).
    """
    cfg = exp.config.public_dict()
    cfg.pop("output", None)
    cfg.pop("description", None)
    evaluation = cfg["evaluation"]
    assert isinstance(evaluation, dict)
    unused = [*_REPLACED, *_UNUSED_BY.get(strategy.method, ())]
    if strategy.method == "generation":
        unused.append("max_new_tokens" if strategy.chain_of_thought else "cot_max_new_tokens")
    sampled = strategy.method == "generation" and bool(exp.config.evaluation.temperature)
    if not sampled:
        # Greedy and scoring runs give the same answers at any batch size; a sampled run's
        # seed follows its chunk (runner/schedule.py), so there the batch size is kept.
        unused.append("batch_size")
    for key in unused:
        evaluation.pop(key, None)
    prompts = {k: v.sha256 for k, v in exp.prompt_files.items()}
    if strategy.n_examples == 0:
        prompts.pop("examples", None)
    payload = {
        "config": cfg,
        "strategy": strategy.__dict__,
        "data": exp.dataset.sources,
        "prompts": prompts,
        "model": exp.model.identity.fingerprint_data(),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def write_results(
    exp: Experiment,
    plan: StrategyPlan,
    records: list[QuestionRecord],
    timing: LiveTiming | BatchTiming | None = None,
) -> RunOutcome:
    """Write the results JSON, the summary CSV (and timing) atomically; the result and its files.

    The results file names its log and the log's sha256 as it is now (:func:`log_info`), so
    that ``report`` can tell when the log changed after it (a later run that did not finish).
    """
    result = assemble_result(exp, plan.strategy, records).model_copy(update={"log": log_info(exp, plan)})
    atomic_write_text(plan.paths.results, dump_json(result.model_dump(mode="json")))
    atomic_write_text(plan.paths.summary, summary_csv(records))
    if timing is not None:
        atomic_write_text(plan.paths.timing, dump_json(timing.model_dump(mode="json")))
    return RunOutcome([result], [plan.paths.results, plan.paths.summary])


def log_info(exp: Experiment, plan: StrategyPlan) -> LogInfo:
    """The run's intermediate log: its name, the run's fingerprint and the log's sha256 now."""
    path = plan.paths.intermediate
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    return LogInfo(path=path.name, fingerprint=fingerprint(exp, plan.strategy), sha256=digest)


def assemble_result(exp: Experiment, strategy: Strategy, records: list[QuestionRecord]) -> RunResult:
    """The results file: config, environment, totals, breakdowns, BPC, records.

    Records in error are kept in ``records`` but scored nowhere (``n_errors`` beside each
    ``n``); the file is then marked ``complete: false``.
    """
    cfg = exp.config
    bpc = None if strategy.method == "log_prob" else position_bias(scored(records))
    totals = summarize(records)
    return RunResult(
        experiment=cfg.name,
        strategy=StrategyInfo(label=strategy.label, **strategy.__dict__),
        complete=totals.errors == 0,
        config=cfg.public_dict(),
        seed=exp.seed,
        environment=environment(),
        model=exp.model.identity,
        dataset=DatasetInfo(
            sources=exp.dataset.sources,
            filter_counts=exp.dataset.counts,
            invalid_rows=exp.dataset.invalid,
            n_evaluated=len({r.id for r in records}),
        ),
        prompts=exp.prompt_files,
        totals=totals,
        breakdowns={
            **field_breakdowns(records, exp.breakdown_fields or record_fields(records)),
            "n_options": breakdown(records, lambda r: r.n_options),
        },
        position_bias=bpc,
        records=records,
    )
