"""What a run writes: its results file, summary CSV and timing, and what its resume log is keyed on."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from pydantic import JsonValue

from enade_bench.dataset.lint import LintWarning
from enade_bench.metrics.accuracy import field_breakdowns, scored, summarize
from enade_bench.metrics.position_bias import position_bias
from enade_bench.results.environment import environment
from enade_bench.results.log_key import PATH_SETTINGS, LogKey, flatten
from enade_bench.results.records import QuestionRecord, RunResult
from enade_bench.results.shared_paths import shared_path, shared_values
from enade_bench.results.store import atomic_write_text, dump_json
from enade_bench.results.summary import BatchTiming, DatasetInfo, LiveTiming, LogInfo, StrategyInfo, as_object
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
#: Settings that change how fast a run goes or how it reports, never a prompt or an answer.
THROUGHPUT = (
    "model.api.max_concurrency",
    "model.api.requests_per_minute",
    "model.api.timeout_s",
    "model.api.max_retries",
    "model.api.retry_base_delay_s",
    "model.api.retry_max_delay_s",
    "model.api.max_retry_after_s",
    "model.api.api_key",
    "model.hf_token",
    "model.training_cutoff",
    "model.vllm.gpu_memory_utilization",
)
#: Prefix of the model identity's settings (known only once the model is loaded).
IDENTITY = "model identity."


def _config_used(exp: Experiment, strategy: Strategy) -> dict[str, JsonValue]:
    """The config as the strategy reads it: without output settings, description and the
    evaluation keys the strategy replaces or its method never reads."""
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
    return cfg


def _prompt_files(exp: Experiment, strategy: Strategy) -> dict[str, str]:
    prompts = {k: v.sha256 for k, v in exp.prompt_files.items()}
    if strategy.n_examples == 0:
        prompts.pop("examples", None)
    return prompts


def log_key(exp: Experiment, strategy: Strategy, with_model: bool = True) -> LogKey:
    """The settings that change the answers of one strategy: what its resume log is keyed on.

    Per strategy, over what that strategy uses: the config minus output settings,
    description and :data:`THROUGHPUT` settings, minus the evaluation keys the strategy
    replaces or its method never reads (a chain-of-thought run reads
    ``cot_max_new_tokens``, any other generation ``max_new_tokens``); the strategy; the
    prompt files it reads (the worked examples only when it shows some); and the model
    identity (``with_model=False``: not known yet, as in ``validate``). So fixing S3's
    examples, adding a strategy to the command line or raising ``max_concurrency`` does
    not discard a finished log. ``batch_size`` counts only for sampled generation, whose
    seeds follow the chunks (:mod:`enade_bench.runner.schedule`). Neither the data file's
    path nor its bytes are keyed on (:data:`~enade_bench.results.log_key.PATH_SETTINGS`): the
    same file by an absolute or a relative path resumes; its content is checked question by
    question, each logged record's question hash against the data on disk, and its
    correctness recomputed from the key there (:func:`~enade_bench.runner.work.with_current_key`),
    so a corrected answer key re-scores instead of asking again.
    """
    settings = {
        k: v
        for k, v in flatten("", _config_used(exp, strategy)).items()
        if k not in (*THROUGHPUT, *PATH_SETTINGS)
    }
    settings |= flatten("strategy", dict(strategy.__dict__))
    settings |= {f"prompts.files.{name}": sha for name, sha in _prompt_files(exp, strategy).items()}
    if not with_model:
        return LogKey(_as_json(settings), unknown=(IDENTITY,))
    settings |= flatten(IDENTITY.rstrip("."), exp.model.identity.fingerprint_data())
    return LogKey(_as_json(settings), legacy=legacy_fingerprint(exp, strategy))


def _as_json(settings: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """The settings as they read back from a log header (tuples as lists, other values as text)."""
    loaded: dict[str, JsonValue] = json.loads(json.dumps(settings, default=str))
    return loaded


def fingerprint(exp: Experiment, strategy: Strategy) -> str:
    """The sha256 a strategy's log is keyed on (:func:`log_key`), e.g. to name it in a results file."""
    return log_key(exp, strategy).fingerprint


def legacy_fingerprint(exp: Experiment, strategy: Strategy) -> str:
    """The fingerprint enade-bench wrote before version 2 of the log header (for migration):
    sha256 over the used config, the strategy, the data files' sha256, the prompt files and
    the model identity, in one JSON object."""
    cfg = _config_used(exp, strategy)
    api = cfg["model"].get("api") if isinstance(cfg["model"], dict) else None
    if isinstance(api, dict) and api.get("max_retry_after_s") == 120.0:
        api.pop("max_retry_after_s")  # added with version 2
    model = cfg["model"]
    if isinstance(model, dict) and model.get("dtype") == "auto" and exp.model.identity.dtype == "float32":
        model["dtype"] = "float32"  # the default before `auto` (the weights ran in float32 either way)
    payload = {
        "config": cfg,
        "strategy": strategy.__dict__,
        "data": exp.dataset.sources,
        "prompts": _prompt_files(exp, strategy),
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
    here = exp.output_dir  # every path recorded relative to the results folder (shared_paths)
    sources = [{**s, "path": shared_path(s["path"], here)} if "path" in s else s for s in exp.dataset.sources]
    prompts = {
        role: f.model_copy(update={"path": shared_path(f.path, here)}) for role, f in exp.prompt_files.items()
    }
    bpc = None if strategy.method == "log_prob" else position_bias(scored(records))
    totals = summarize(records)
    return RunResult(
        experiment=cfg.name,
        strategy=StrategyInfo(label=strategy.label, **strategy.__dict__),
        complete=totals.errors == 0,
        config=as_object(shared_values(_written_here(cfg.public_dict()), here)),
        seed=exp.seed,
        environment=environment(),
        model=exp.model.identity,
        dataset=DatasetInfo(
            sources=sources,
            filter_counts=exp.dataset.counts,
            invalid_rows=exp.dataset.invalid,
            fixed_rows=[str(f) for f in exp.dataset.fixes],
            n_evaluated=len({r.id for r in records}),
            lint=lint_checks(exp.dataset.warnings),
        ),
        prompts=prompts,
        totals=totals,
        breakdowns=field_breakdowns(
            records, [*(exp.breakdown_fields or record_fields(records)), "n_options"]
        ),
        position_bias=bpc,
        records=records,
    )


def lint_checks(warnings: Sequence[LintWarning]) -> dict[str, list[str]]:
    """Question id -> the lint checks that flagged it (the report's browser filters on them)."""
    out: dict[str, list[str]] = {}
    for w in warnings:
        if w.check not in out.setdefault(w.qid, []):
            out[w.qid].append(w.check)
    return out


def _written_here(config: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """The config as recorded: ``output.dir`` is the folder the results file is in (``.``), wherever
    ``output.dir`` or ``--output-dir`` put it, so the same run gives the same file in any folder."""
    output = config.get("output")
    if isinstance(output, dict) and "dir" in output:
        return {**config, "output": {**output, "dir": "."}}
    return config
