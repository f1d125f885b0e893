"""The runner: the one place that combines config, data, prompts, backend and results."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from tqdm import tqdm

from enade_bench.backends.base import Backend, StreamingBackend
from enade_bench.backends.factory import check_capabilities, create_backend
from enade_bench.config import ExperimentConfig, load_config
from enade_bench.dataset.loader import LoadedDataset, load_dataset
from enade_bench.dataset.presets import DatasetPreset
from enade_bench.errors import UserError
from enade_bench.metrics.accuracy import breakdown, field_breakdowns, summarize
from enade_bench.metrics.position_bias import position_bias
from enade_bench.prompts.templates import PromptSet, load_prompt_set
from enade_bench.results.environment import environment
from enade_bench.results.records import QuestionRecord, RunResult
from enade_bench.results.store import IntermediateLog, atomic_write_text, dump_json, result_paths
from enade_bench.results.summary import BatchTiming, DatasetInfo, LiveTiming, PromptFile, StrategyInfo
from enade_bench.runner.execute import ChunkExecutor, ExtractFn, PromptFn
from enade_bench.runner.outputs import RunOutcome, record_fields, summary_csv, write_table1
from enade_bench.runner.schedule import chunks, item_seeds
from enade_bench.runner.work import with_current_fields, work_items
from enade_bench.strategies.registry import ALL_STRATEGIES, Strategy, from_config, get_strategy


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
    #: The grouping fields accuracy is broken down by (the benchmark's preset declares
    #: them); ``None``: every field the records carry, in their order.
    breakdown_fields: tuple[str, ...] | None = None

    @cached_property
    def prompt_files(self) -> dict[str, PromptFile]:
        """Path, sha256 and text of the prompt files (read once, used by every strategy)."""
        return _prompt_files(self.prompts)


def plan_strategies(cfg: ExperimentConfig, options: RunOptions) -> list[Strategy]:
    if options.all_strategies or (cfg.evaluation.run_all_strategies and not options.strategies):
        return [get_strategy(s, cfg.evaluation) for s in ALL_STRATEGIES]
    if options.strategies:
        return [get_strategy(s, cfg.evaluation) for s in options.strategies]
    return [from_config(cfg.evaluation)]


def _prompt_files(prompts: PromptSet) -> dict[str, PromptFile]:
    out = {}
    for role, path in prompts.source.items():
        text = Path(path).read_text(encoding="utf-8")
        out[role] = PromptFile(path=str(path), sha256=hashlib.sha256(text.encode()).hexdigest(), text=text)
    return out


def fingerprint(exp: Experiment, strategy: Strategy) -> str:
    """sha256 of everything that changes the answers of one strategy (the resume check).

    The config minus output settings and description, the strategy, the data and
    prompt hashes and the model identity.  ``batch_size`` counts only for sampled
    generation, whose seeds follow the chunks (:mod:`enade_bench.runner.schedule`).
    """
    cfg = exp.config.public_dict()
    cfg.pop("output", None)
    cfg.pop("description", None)
    evaluation = cfg["evaluation"]
    assert isinstance(evaluation, dict)
    evaluation.pop("run_all_strategies", None)
    sampled = strategy.method == "generation" and bool(exp.config.evaluation.temperature)
    if not sampled:
        # Greedy and scoring runs give the same answers at any batch size; a sampled run's
        # seed follows its chunk (runner/schedule.py), so there the batch size is kept.
        evaluation.pop("batch_size", None)
    payload = {
        "config": cfg,
        "strategy": strategy.__dict__,
        "data": exp.dataset.sources,
        "prompts": {k: v.sha256 for k, v in exp.prompt_files.items()},
        "model": exp.backend.identity.fingerprint_data(),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def run_strategy(exp: Experiment, strategy: Strategy, options: RunOptions) -> RunOutcome:
    """Run (or resume) one strategy and write its files."""
    cfg = exp.config
    questions = exp.dataset.questions[: options.limit] if options.limit else exp.dataset.questions
    items = work_items(questions, strategy, cfg.evaluation.seed)
    paths = result_paths(exp.output_dir, cfg.name, strategy.id)
    log = IntermediateLog(paths["intermediate"], fingerprint(exp, strategy))
    done: dict[tuple[str, int], QuestionRecord] = {}
    if cfg.output.save_intermediate:
        if options.resume:
            done = with_current_fields(log.load(), questions)
            log.ensure_header()
        else:
            log.start_fresh()
    executor = make_executor(exp, strategy)
    todo = sum(1 for item in items if item.key not in done)
    label = strategy.id or cfg.name
    started = time.perf_counter()
    with tqdm(total=len(items), initial=len(items) - todo, desc=label, unit="item",
              disable=not options.progress, dynamic_ncols=True) as bar:  # fmt: skip
        if strategy.method == "generation" and isinstance(exp.backend, StreamingBackend):
            # API backends: each answer is logged the moment it arrives (no chunk barrier).
            def keep(record: QuestionRecord) -> None:
                if cfg.output.save_intermediate:
                    log.append([record])
                done[record.key] = record
                bar.update(1)

            seeds = item_seeds(items, strategy, cfg.evaluation.seed, cfg.evaluation.batch_size)
            executor.run_streaming(exp.backend, [item for item in items if item.key not in done], seeds, keep)
        for index, chunk in enumerate(chunks(items, strategy, cfg.evaluation.batch_size)):
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
    timing = LiveTiming(
        seconds=elapsed, items_computed=todo, items_per_second=todo / elapsed if elapsed else None
    )
    return write_results(exp, strategy, records, timing)


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
    timing: LiveTiming | BatchTiming | None = None,
) -> RunOutcome:
    """Write the results JSON, the summary CSV (and timing) atomically; the result and its files."""
    paths = result_paths(exp.output_dir, exp.config.name, strategy.id)
    result = assemble_result(exp, strategy, records)
    atomic_write_text(paths["results"], dump_json(result.model_dump(mode="json")))
    atomic_write_text(paths["summary"], summary_csv(records))
    if timing is not None:
        atomic_write_text(paths["timing"], dump_json(timing.model_dump(mode="json")))
    return RunOutcome([result], [paths["results"], paths["summary"]])


def assemble_result(exp: Experiment, strategy: Strategy, records: list[QuestionRecord]) -> RunResult:
    """The results file: config, environment, totals, breakdowns, BPC, records."""
    cfg = exp.config
    bpc = None if strategy.method == "log_prob" else position_bias(records)
    return RunResult(
        experiment=cfg.name,
        strategy=StrategyInfo(label=strategy.label, **strategy.__dict__),
        config=cfg.public_dict(),
        seed=cfg.evaluation.seed,
        environment=environment(),
        model=exp.backend.identity,
        dataset=DatasetInfo(
            sources=exp.dataset.sources,
            filter_counts=exp.dataset.counts,
            invalid_rows=exp.dataset.invalid,
            n_evaluated=len({r.id for r in records}),
        ),
        prompts=exp.prompt_files,
        totals=summarize(records),
        breakdowns={
            **field_breakdowns(records, exp.breakdown_fields or record_fields(records)),
            "n_options": breakdown(records, lambda r: r.n_options),
        },
        position_bias=bpc,
        records=records,
    )


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


@dataclass(frozen=True)
class ExamSpec:
    """What a benchmark hands the runner: its file layout and its shipped prompt sets."""

    preset: DatasetPreset | None = None
    #: Shipped prompt templates by name (``prompts.preset`` selects one).
    prompt_presets: Mapping[str, Path] = field(default_factory=dict)


def load_prompts(cfg: ExperimentConfig, config_path: Path, spec: ExamSpec) -> PromptSet:
    """The prompt set a config names: a shipped preset, or the template file in ``prompts.dir``."""
    preset_path = None
    if cfg.prompts.preset is not None:
        if cfg.prompts.preset not in spec.prompt_presets:
            known = ", ".join(sorted(spec.prompt_presets)) or "none for this benchmark"
            raise UserError(f"{config_path}: prompts.preset: unknown '{cfg.prompts.preset}' (known: {known})")
        preset_path = spec.prompt_presets[cfg.prompts.preset]
    examples = str(Path(cfg.prompts.dir) / cfg.prompts.examples)
    template = str(Path(cfg.prompts.dir) / cfg.prompts.template)
    prompt_base = input_base(examples if preset_path else template, config_path) or Path.cwd()
    return load_prompt_set(
        prompt_base / cfg.prompts.dir, cfg.prompts.template, cfg.prompts.examples, preset_path
    )


def load_experiment(
    config_path: Path, options: RunOptions, cfg: ExperimentConfig | None = None, spec: ExamSpec | None = None
) -> tuple[Experiment, list[Strategy]]:
    """Load and check everything before any model call (``cfg``: already loaded by the caller)."""
    cfg = cfg or load_config(config_path)
    spec = spec or ExamSpec()
    strategies = plan_strategies(cfg, options)
    dataset = load_dataset(cfg.dataset, input_base(cfg.dataset.path, config_path), spec.preset)
    prompts = load_prompts(cfg, config_path, spec)
    factory = options.backend_factory or (lambda c: create_backend(c.model))
    backend = factory(cfg)
    check_capabilities(backend, {s.method for s in strategies}, [s.id or cfg.name for s in strategies])
    output_dir = options.output_dir or Path(cfg.output.dir)
    fields = spec.preset.breakdown_fields if spec.preset else None
    return Experiment(cfg, dataset, prompts, backend, output_dir, breakdown_fields=fields), strategies


def run_loaded(
    exp: Experiment, strategies: Sequence[Strategy], options: RunOptions, table1: bool = True
) -> RunOutcome:
    """Run every planned strategy of a loaded experiment; write Table 1 when several ran.

    ``table1=False``: no Table 1 (E-EVAL's test split, whose answers are private).
    """
    outcome = RunOutcome.combine(run_strategy(exp, s, options) for s in strategies)
    if not table1:
        return outcome
    return RunOutcome.combine([outcome], *write_table1(exp.output_dir, exp.config.name, outcome.results))
