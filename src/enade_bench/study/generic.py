"""A study on any benchmark but ENEM: plan every model's run, run or resume them, compare.

Everything is checked before the first model loads (:func:`plan_generic`): the study
YAML, each model's experiment YAML, the data, the prompts of every strategy and each
model's settings as far as they can be without loading it.  Each model becomes one task
(:func:`generic_tasks`) for the study's executor (:mod:`enade_bench.study.execute`): it is
loaded, runs every strategy (or resumes: its append-only logs skip each answered
question), and is released.  A model that fails to load or run is reported and the
others go on; the comparison covers the models with results.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from enade_bench.backends.factory import check_backend
from enade_bench.backends.preload import devices_elsewhere
from enade_bench.benchmarks.base import Benchmark
from enade_bench.benchmarks.registry import DEFAULT, Registry
from enade_bench.benchmarks.study_model import StudyModel, prompts_block, read_model_config
from enade_bench.config import ExperimentConfig, parse_config, resolve_input, resolve_output
from enade_bench.errors import UserError
from enade_bench.results.summary import JsonObject
from enade_bench.results.writable import check_output_dir
from enade_bench.runner.executors import ExecutorSettings, executor_settings
from enade_bench.runner.plan import Experiment, RunOptions
from enade_bench.strategies.registry import ALL_STRATEGIES
from enade_bench.study.config import StudyConfig, parse_study_config
from enade_bench.study.tasks import ModelTask, TaskRun


@dataclass(frozen=True)
class PlannedModel:
    """One model of the study, prepared: its experiment config, folder and planned strategies."""

    label: str
    config: ExperimentConfig
    folder: Path
    experiment: Experiment
    options: RunOptions

    @property
    def config_path(self) -> Path:
        """Where the model's experiment config is written (provenance; ``enade-bench run`` reruns it)."""
        return self.folder / "experiment.yaml"


@dataclass(frozen=True)
class GenericPlan:
    """What a study will do: its config, benchmark, output folder and one entry per model."""

    config: StudyConfig
    path: Path
    benchmark: Benchmark
    output: Path
    strategies: list[str]
    models: list[PlannedModel]
    #: Where the models run: the study's ``executor:`` block, or ``--executor``.
    executor: ExecutorSettings

    @property
    def report_dir(self) -> Path:
        return self.output / "report"


def _model_parts(entry: StudyModel, index: int, path: Path) -> tuple[str, JsonObject]:
    """A model entry's label and the model / prompts / batch-size parts of its experiment."""
    if entry.model is not None:
        return str(entry.name), {"model": entry.model.model_dump(mode="python"),
                                 "prompts": prompts_block(entry.prompts, path), "batch_size": entry.batch_size}  # fmt: skip
    exp = read_model_config(entry, index, path)
    source = resolve_input(str(entry.config), path).resolve()
    prompts = prompts_block(exp.prompts if "prompts" in exp.model_fields_set else entry.prompts, source)
    return entry.name or exp.name, {"model": exp.model.model_dump(mode="python"), "prompts": prompts,
                                    "batch_size": entry.batch_size or exp.evaluation.batch_size}  # fmt: skip


def _dataset(cfg: StudyConfig, path: Path) -> JsonObject:
    """The study's dataset block with its paths made absolute (the runs' configs live elsewhere)."""
    block = {**cfg.dataset, "benchmark": cfg.benchmark}
    where = str(block.get("path", ""))
    if where and not where.startswith("hf://") and not Path(where).is_absolute():
        block["path"] = str(resolve_input(where, path).resolve())
    return block


def plan_generic(path: Path, data: Any, registry: Registry = DEFAULT, progress: bool = False,
                 executor: str | None = None) -> GenericPlan:  # fmt: skip
    """Check the whole study and prepare every model's run; no model is loaded.

    ``executor``: ``--executor``, in place of the study's block.  Models the executor runs on
    other machines (its settings' ``elsewhere``: Slurm's nodes, a joined Ray cluster) are
    checked without this machine's devices (:func:`~enade_bench.backends.preload.devices_elsewhere`).
    """
    cfg = parse_study_config(data, path)
    settings = executor_settings(cfg.executor, executor)
    with devices_elsewhere() if settings.elsewhere else nullcontext():
        return _plan_models(cfg, path, registry, progress, settings)


def _plan_models(
    cfg: StudyConfig, path: Path, registry: Registry, progress: bool, settings: ExecutorSettings
) -> GenericPlan:
    """:func:`plan_generic` after the study file is read: each model's run, prepared and checked."""
    output = resolve_output(cfg.output, path).resolve()  # relative: from the study file's folder
    check_output_dir(output, f"{path}: output")
    models: list[PlannedModel] = []
    benchmark: Benchmark | None = None
    strategies: list[str] = []
    for index, entry in enumerate(cfg.models):
        label, parts = _model_parts(entry, index, path)
        if label.casefold() in {m.label.casefold() for m in models}:  # M1 and m1: one folder on some disks
            raise UserError(
                f"{path}: models.{index}: the label {label!r} is used twice (case aside); give a 'name'"
            )
        folder = output / "runs" / label
        evaluation = {
            **cfg.evaluation,
            **({"batch_size": parts["batch_size"]} if parts["batch_size"] else {}),
        }
        exp_cfg = parse_config(
            {"name": label, "description": f"study {cfg.name}: {label}", "dataset": _dataset(cfg, path),
             "model": parts["model"], "evaluation": evaluation, "output": {"dir": str(folder)},
             **({"prompts": parts["prompts"]} if parts["prompts"] else {})},
            f"{path}: models.{index} ({label})",
        )  # fmt: skip
        benchmark = benchmark or registry.for_config(exp_cfg, path)
        strategies = cfg.strategies or list(getattr(benchmark, "study_strategies", ALL_STRATEGIES))
        options = RunOptions(strategies=strategies, limit=cfg.limit, output_dir=folder, progress=progress)
        exp = benchmark.prepare(exp_cfg, path, options)
        ids = [s.id or label for s in exp.strategies]
        check_backend(exp_cfg.model, {s.method for s in exp.strategies}, ids)
        models.append(PlannedModel(label, exp_cfg, folder, exp, options))
    assert benchmark is not None  # models has at least one entry (validated)
    return GenericPlan(cfg, path, benchmark, output, strategies, models, settings)


def generic_tasks(plan: GenericPlan) -> list[ModelTask]:
    """One task per model of the study: its one run (every study strategy), prepared."""
    return [
        ModelTask(m.label, (TaskRun(m.config, m.config_path, m.experiment, replace(m.options, progress=False),
                                    plan.benchmark, f"{m.label}: {', '.join(plan.strategies)} -> {m.folder}"),),
                  plan.output)
        for m in plan.models
    ]  # fmt: skip
