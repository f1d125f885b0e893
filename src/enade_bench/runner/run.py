"""The runner: runs (or resumes) the planned strategies of a loaded experiment.

The one place that combines config, data, prompts, backend and results.  Live and
batch runs share the plan (:mod:`enade_bench.runner.plan`): the same work items,
seeds, prompts, resume log and files; :func:`run_experiment` runs every strategy
live or hands the plans to the provider's batch API (:mod:`enade_bench.runner.batch`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence

from tqdm import tqdm

from enade_bench.backends.base import Backend, ContextBackend, StreamingBackend
from enade_bench.backends.factory import check_capabilities, create_backend
from enade_bench.backends.hf_batch_size import run_halving
from enade_bench.config import ExperimentConfig
from enade_bench.results.records import QuestionRecord
from enade_bench.results.store import IntermediateLog
from enade_bench.results.summary import HalvedChunk, LiveTiming
from enade_bench.runner.batch_probe import peak_workload
from enade_bench.runner.context import PromptFit, fit_prompts
from enade_bench.runner.dry_run import check_logs
from enade_bench.runner.execute import ChunkExecutor
from enade_bench.runner.outputs import RunOutcome, write_table1
from enade_bench.runner.plan import Experiment, RunOptions, StrategyPlan, plan_run
from enade_bench.runner.retry import as_retry, split_logged
from enade_bench.runner.work import rescored_note, with_current_fields, with_current_key
from enade_bench.runner.write import log_key, write_results


def load_backend(exp: Experiment, options: RunOptions) -> Experiment:
    """The experiment with its model loaded (``options.backend_factory`` or the registry's).

    A log the run would refuse is refused first (:func:`~enade_bench.runner.dry_run.check_logs`):
    no model loads for a run that cannot resume.
    """
    check_logs(exp, options.resume)
    factory: Callable[[ExperimentConfig], Backend] = options.backend_factory or (
        lambda c: create_backend(c.model)
    )
    backend = factory(exp.config)
    strategies = exp.strategies
    check_capabilities(backend, {s.method for s in strategies}, [s.id or exp.config.name for s in strategies])
    return exp.with_backend(backend, peak_workload)


Logged = dict[tuple[str, int], QuestionRecord]


def _resume(
    exp: Experiment, plan: StrategyPlan, options: RunOptions
) -> tuple[IntermediateLog, Logged, Logged]:
    """The strategy's log, the records it holds that are done, and the errors to ask again.

    None with ``--no-resume``; errors with tries left are asked again
    (:mod:`enade_bench.runner.retry`).
    """
    log = IntermediateLog(plan.paths.intermediate, log_key(exp, plan.strategy))
    if not exp.config.output.save_intermediate:
        return log, {}, {}
    if not options.resume:
        log.start_fresh()
        return log, {}, {}
    raw = with_current_fields(log.load(), exp.questions)
    logged = with_current_key(raw, exp.questions, log.path)
    note = rescored_note(raw, logged, log.path)
    if note is not None:
        print(f"note: {plan.label}: {note}", file=sys.stderr)
    done, again = split_logged(logged)
    log.ensure_header()
    return log, done, again


def run_strategy(
    exp: Experiment, plan: StrategyPlan, options: RunOptions, fit: PromptFit | None = None
) -> RunOutcome:
    """Run (or resume) one planned strategy live and write its files.

    ``fit``: the prompts cut to the context (``evaluation.truncate: left``), from
    :func:`~enade_bench.runner.context.fit_prompts`.
    """
    fit = fit or PromptFit()
    if isinstance(exp.model, ContextBackend):
        exp.model.set_prompt_limit(fit.limit)
    try:
        return _run_strategy(exp, plan, options, fit)
    finally:
        if isinstance(exp.model, ContextBackend):
            exp.model.set_prompt_limit(None)


def _run_strategy(exp: Experiment, plan: StrategyPlan, options: RunOptions, fit: PromptFit) -> RunOutcome:
    cfg = exp.config
    log, done, again = _resume(exp, plan, options)
    executor = ChunkExecutor(exp.model, plan, cfg.evaluation, exp.extract_fn)
    items = plan.items
    todo = sum(1 for item in items if item.key not in done)
    started = time.perf_counter()
    with tqdm(
        total=len(items),
        initial=len(items) - todo,
        desc=plan.label,
        unit="item",
        disable=not options.progress,
        dynamic_ncols=True,
    ) as bar:

        def keep(records: Sequence[QuestionRecord]) -> None:
            new = [fit.mark(as_retry(r, again.get(r.key))) for r in records if r.key not in done]
            if cfg.output.save_intermediate:
                log.append(new)
            done.update({r.key: r for r in new})
            bar.update(len(new))

        if plan.strategy.method == "generation" and isinstance(exp.model, StreamingBackend):
            # API backends: each answer is logged the moment it arrives (no chunk barrier).
            pending = [item for item in items if item.key not in done]
            executor.run_streaming(exp.model, pending, lambda record: keep([record]))
        halved: list[HalvedChunk] = []
        left = [
            index for index, chunk in enumerate(plan.chunks) if any(item.key not in done for item in chunk)
        ]
        for index, chunk in zip(left, executor.ahead([plan.chunks[i] for i in left]), strict=True):
            # out of device memory: the chunk again in halves, and the run goes on
            records, pieces = run_halving(executor.run, chunk)
            if len(pieces) > 1:
                halved.append(HalvedChunk(chunk=index, rows=len(chunk), pieces=pieces))
            keep(records)
    elapsed = time.perf_counter() - started
    records = [done[item.key] for item in items]
    size = cfg.evaluation.batch_size
    timing = LiveTiming(
        seconds=elapsed,
        items_computed=todo,
        items_per_second=todo / elapsed if elapsed else None,
        batch_size=size if isinstance(size, int) else None,
        halved=halved or None,
        attention=getattr(exp.model, "attention", None),
    )
    return write_results(exp, plan, records, timing)


def set_aside(plans: Sequence[StrategyPlan]) -> None:
    """``--no-resume``: move each strategy's earlier files aside before anything is asked.

    Its results file would otherwise stand beside the new log until the new run ends; a
    rerun that is killed would leave those old results to be reported as current.
    """
    for plan in plans:
        moved = plan.paths.set_aside()
        if moved is not None:
            print(f"note: --no-resume: moved the earlier files of {plan.label} to {moved}", file=sys.stderr)


def run_experiment(exp: Experiment, options: RunOptions, table1: bool = True) -> RunOutcome:
    """Run (or resume) every planned strategy of an experiment whose model is loaded.

    Live by default; ``options.batch`` hands the same plans to the provider's batch API.
    Writes Table 1 when several strategies completed (``table1=False``: never, e.g.
    E-EVAL's test split, whose answers are private).
    """
    plans = plan_run(exp)
    with exp.lock():  # one process at a time on these files (taken before the model loaded too)
        if options.batch is not None:
            from enade_bench.runner.batch import run_batch  # noqa: PLC0415 (the API stack, only when asked)

            outcome = run_batch(exp, plans, options.batch)
        else:
            fits = fit_prompts(exp, plans)  # every prompt against the context, before any question runs
            if not options.resume:
                set_aside(plans)
            outcome = RunOutcome.combine(
                run_strategy(exp, plan, options, fits.get(plan.strategy.id)) for plan in plans
            )
    if not table1 or len(outcome.results) < len(plans):
        return outcome
    return RunOutcome.combine([outcome], *write_table1(exp.output_dir, exp.config.name, outcome.results))
