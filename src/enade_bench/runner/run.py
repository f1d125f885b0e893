"""The runner: the one place that combines config, data, prompts, backend and results."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from tqdm import tqdm

from enade_bench.backends.base import Backend
from enade_bench.backends.factory import check_capabilities, create_backend
from enade_bench.config import ExperimentConfig, load_config
from enade_bench.dataset.loader import LoadedDataset, load_dataset
from enade_bench.metrics.accuracy import breakdown, summarize
from enade_bench.metrics.position_bias import position_bias
from enade_bench.prompts.templates import PromptSet, load_prompt_set
from enade_bench.results.environment import environment
from enade_bench.results.records import QuestionRecord, RunResult
from enade_bench.results.store import IntermediateLog, atomic_write_text, dump_json, result_paths
from enade_bench.results.writable import check_output_dir
from enade_bench.runner.execute import ChunkExecutor, ExtractFn, PromptFn
from enade_bench.runner.work import WorkItem, work_items
from enade_bench.strategies.registry import ALL_STRATEGIES, Strategy, from_config, get_strategy

SUMMARY_COLUMNS = (
    "id", "shuffle", "year", "course", "component", "n_options", "answer", "prediction",
    "correct", "method", "shot", "strategy", "permutation", "extraction_rule", "error",
    "question_hash", "prompt_hash",
)  # fmt: skip


@dataclass
class RunOptions:
    """Command-line choices that are not part of the experiment config."""

    strategies: list[str] | None = None  # None: the config's own settings
    all_strategies: bool = False
    limit: int | None = None
    output_dir: Path | None = None
    resume: bool = True
    progress: bool = True
    backend_factory: Callable[[ExperimentConfig], Backend] | None = None
    written: list[Path] = field(default_factory=list)


@dataclass
class Experiment:
    """Everything loaded once and shared by the strategies of one run."""

    config: ExperimentConfig
    dataset: LoadedDataset
    prompts: PromptSet
    backend: Backend
    output_dir: Path
    #: Optional hooks for other benchmarks (E-EVAL): prompt builder per strategy, extractor.
    prompt_fn_for: Callable[[Strategy], PromptFn] | None = None
    extract_fn: ExtractFn | None = None

    @cached_property
    def prompt_files(self) -> dict[str, Any]:
        """Path, sha256 and text of the prompt files (read once, used by every strategy)."""
        return _prompt_files(self.prompts)


def plan_strategies(cfg: ExperimentConfig, options: RunOptions) -> list[Strategy]:
    if options.all_strategies or (cfg.evaluation.run_all_strategies and not options.strategies):
        return [get_strategy(s, cfg.evaluation) for s in ALL_STRATEGIES]
    if options.strategies:
        return [get_strategy(s, cfg.evaluation) for s in options.strategies]
    return [from_config(cfg.evaluation)]


def _prompt_files(prompts: PromptSet) -> dict[str, Any]:
    out = {}
    for role, path in prompts.source.items():
        text = Path(path).read_text(encoding="utf-8")
        out[role] = {"path": path, "sha256": hashlib.sha256(text.encode()).hexdigest(), "text": text}
    return out


def _fingerprint(exp: Experiment, strategy: Strategy) -> str:
    cfg = exp.config.public_dict()
    cfg.pop("output", None)
    cfg.pop("description", None)
    cfg["evaluation"].pop("run_all_strategies", None)
    cfg["evaluation"].pop("batch_size", None)
    payload = {
        "config": cfg,
        "strategy": strategy.__dict__,
        "data": exp.dataset.sources,
        "prompts": {k: v["sha256"] for k, v in exp.prompt_files.items()},
        "model": exp.backend.identity,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _chunks(items: list[WorkItem], strategy: Strategy, batch_size: int) -> list[list[WorkItem]]:
    """Fixed chunk boundaries (so a resumed run computes exactly what a fresh one does)."""
    if strategy.shuffle and strategy.n_shuffles > 1:
        groups: dict[str, list[WorkItem]] = {}
        for item in items:
            groups.setdefault(item.question.id, []).append(item)
        return list(groups.values())
    return [items[i : i + batch_size] for i in range(0, len(items), batch_size)]


def summary_csv(records: Sequence[QuestionRecord]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(SUMMARY_COLUMNS)
    for r in records:
        row = r.model_dump()
        row["permutation"] = "".join(map(str, r.permutation)) if r.permutation else ""
        writer.writerow(["" if row[c] is None else row[c] for c in SUMMARY_COLUMNS])
    return buffer.getvalue()


def run_strategy(exp: Experiment, strategy: Strategy, options: RunOptions) -> RunResult:
    """Run (or resume) one strategy and write its files."""
    cfg = exp.config
    questions = exp.dataset.questions[: options.limit] if options.limit else exp.dataset.questions
    items = work_items(questions, strategy, cfg.evaluation.seed)
    paths = result_paths(exp.output_dir, cfg.name, strategy.id)
    log = IntermediateLog(paths["intermediate"], _fingerprint(exp, strategy))
    done: dict[tuple[str, int], QuestionRecord] = {}
    if cfg.output.save_intermediate:
        if options.resume:
            done = log.load()
            log.ensure_header()
        else:
            log.start_fresh()
    executor = make_executor(exp, strategy)
    todo = sum(1 for item in items if item.key not in done)
    label = strategy.id or cfg.name
    started = time.perf_counter()
    with tqdm(total=len(items), initial=len(items) - todo, desc=label, unit="item",
              disable=not options.progress, dynamic_ncols=True) as bar:  # fmt: skip
        if strategy.method == "generation" and hasattr(exp.backend, "generate_stream"):
            # API backends: each answer is logged the moment it arrives (no chunk barrier).
            def keep(record: QuestionRecord) -> None:
                if cfg.output.save_intermediate:
                    log.append([record])
                done[record.key] = record
                bar.update(1)

            executor.run_streaming([item for item in items if item.key not in done], keep)
        for index, chunk in enumerate(_chunks(items, strategy, cfg.evaluation.batch_size)):
            if all(item.key in done for item in chunk):
                continue
            records = executor.run(chunk, index)
            new = [r for r in records if r.key not in done]
            if cfg.output.save_intermediate:
                log.append(new)
            done.update({r.key: r for r in new})
            bar.update(len(new))
    elapsed = time.perf_counter() - started
    records = [done[item.key] for item in items]
    timing = {
        "seconds": elapsed,
        "items_computed": todo,
        "items_per_second": todo / elapsed if elapsed else None,
    }
    return write_results(exp, strategy, records, options, timing)


def make_executor(exp: Experiment, strategy: Strategy) -> ChunkExecutor:
    """The chunk executor for one strategy (ENADE prompts unless the experiment has hooks)."""
    prompt_fn = exp.prompt_fn_for(strategy) if exp.prompt_fn_for else None
    evaluation = exp.config.evaluation
    if exp.extract_fn is not None:
        return ChunkExecutor(exp.backend, strategy, exp.prompts, evaluation, prompt_fn, exp.extract_fn)
    return ChunkExecutor(exp.backend, strategy, exp.prompts, evaluation, prompt_fn)


def write_results(
    exp: Experiment,
    strategy: Strategy,
    records: list[QuestionRecord],
    options: RunOptions,
    timing: dict[str, Any] | None = None,
) -> RunResult:
    """Write the results JSON, the summary CSV (and timing) atomically; return the result."""
    paths = result_paths(exp.output_dir, exp.config.name, strategy.id)
    result = assemble_result(exp, strategy, records)
    atomic_write_text(paths["results"], dump_json(result.model_dump(mode="json")))
    atomic_write_text(paths["summary"], summary_csv(records))
    if timing is not None:
        atomic_write_text(paths["timing"], dump_json(timing))
    options.written += [paths["results"], paths["summary"]]
    return result


def assemble_result(exp: Experiment, strategy: Strategy, records: list[QuestionRecord]) -> RunResult:
    """The results file: config, environment, totals, breakdowns, BPC, records."""
    cfg = exp.config
    bpc = None if strategy.method == "log_prob" else position_bias(records)
    return RunResult(
        experiment=cfg.name,
        strategy={"id": strategy.id, "label": strategy.label, **strategy.__dict__},
        config=cfg.public_dict(),
        seed=cfg.evaluation.seed,
        environment=environment(),
        model=exp.backend.identity,
        dataset={
            "sources": exp.dataset.sources,
            "filter_counts": exp.dataset.counts,
            "invalid_rows": exp.dataset.invalid,
            "n_evaluated": len({r.id for r in records}),
        },
        prompts=exp.prompt_files,
        totals=summarize(records),
        breakdowns={
            "year": breakdown(records, lambda r: r.year),
            "course": breakdown(records, lambda r: r.course),
            "component": breakdown(records, lambda r: r.component),
            "n_options": breakdown(records, lambda r: r.n_options),
        },
        position_bias=bpc,
        records=records,
    )


def table1_csv(results: Sequence[RunResult]) -> str:
    """Accuracy per strategy (Table 1)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["strategy", "label", "n", "correct", "accuracy", "ci95_low", "ci95_high", "unanswered"])
    for res in results:
        t = res.totals
        writer.writerow([res.strategy["id"], res.strategy["label"], t["n"], t["correct"],
                         f"{t['accuracy']:.4f}", f"{t['ci95'][0]:.4f}", f"{t['ci95'][1]:.4f}",
                         t["unanswered"]])  # fmt: skip
    return buffer.getvalue()


def input_base(relative: str, config_path: Path) -> Path | None:
    """Directory against which a relative input path of a config is resolved.

    The current directory first, then the config file's directory and its ancestors,
    nearest first (configs usually live in ``configs/`` under the project root);
    ``None`` (the current directory, for the error message) when none holds it.
    """
    if Path(relative).is_absolute() or any(ch in relative for ch in "*?[") or relative.startswith("hf://"):
        return None
    config_dir = config_path.resolve().parent
    for base in (Path.cwd(), config_dir, *config_dir.parents):
        if (base / relative).exists():
            return base
    return None


def load_experiment(config_path: Path, options: RunOptions) -> tuple[Experiment, list[Strategy]]:
    """Load and check everything before any model call."""
    cfg = load_config(config_path)
    check_output_dir(
        options.output_dir or Path(cfg.output.dir),
        "--output-dir" if options.output_dir else f"{config_path}: output.dir",
    )
    if cfg.dataset.preset == "eeval":  # E-EVAL: its own loader, prompts and settings
        from enade_bench.eeval.experiment import load_eeval_experiment

        return load_eeval_experiment(cfg, options)
    strategies = plan_strategies(cfg, options)
    dataset = load_dataset(cfg.dataset, input_base(cfg.dataset.path, config_path))
    template = str(Path(cfg.prompts.dir) / cfg.prompts.template)
    prompt_base = input_base(template, config_path) or Path.cwd()
    prompts = load_prompt_set(prompt_base / cfg.prompts.dir, cfg.prompts.template, cfg.prompts.examples)
    factory = options.backend_factory or (lambda c: create_backend(c.model))
    backend = factory(cfg)
    check_capabilities(backend, {s.method for s in strategies}, [s.id or cfg.name for s in strategies])
    output_dir = options.output_dir or Path(cfg.output.dir)
    return Experiment(cfg, dataset, prompts, backend, output_dir), strategies


def run_experiment(config_path: Path, options: RunOptions) -> list[RunResult]:
    """Run every planned strategy of a config; write Table 1 when several ran."""
    exp, strategies = load_experiment(config_path, options)
    if exp.config.dataset.preset == "eeval":
        from enade_bench.eeval.experiment import run_loaded

        return run_loaded(exp, strategies, options)
    results = [run_strategy(exp, s, options) for s in strategies]
    if len(strategies) > 1:
        path = exp.output_dir / f"{exp.config.name}_table1.csv"
        atomic_write_text(path, table1_csv(results))
        options.written.append(path)
    return results
