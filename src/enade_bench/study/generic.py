"""A study on any benchmark but ENEM: plan every model's run, run or resume them, compare.

Everything is checked before the first model loads (:func:`plan_generic`): the study
YAML, each model's experiment YAML, the data, the prompts of every strategy and each
model's settings as far as they can be without loading it.  Then one model at a time
is loaded, runs every strategy (or resumes: its append-only logs skip each answered
question), and is released.  A model that fails to load or run is reported and the
others go on; the comparison covers the models with results.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from enade_bench.backends.base import Backend
from enade_bench.backends.factory import check_backend, check_capabilities, create_backend
from enade_bench.benchmarks.base import Benchmark
from enade_bench.benchmarks.registry import DEFAULT, Registry
from enade_bench.benchmarks.study_model import StudyModel, prompts_block, read_model_config
from enade_bench.config import ExperimentConfig, parse_config, resolve_input, resolve_output
from enade_bench.errors import UserError
from enade_bench.results.safe_write import real_folder
from enade_bench.results.store import atomic_write_text
from enade_bench.results.summary import JsonObject
from enade_bench.results.writable import check_output_dir
from enade_bench.runner.batch_probe import peak_workload
from enade_bench.runner.plan import Experiment, RunOptions
from enade_bench.strategies.registry import ALL_STRATEGIES
from enade_bench.study.config import StudyConfig, parse_study_config


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

    @property
    def report_dir(self) -> Path:
        return self.output / "report"


@dataclass
class ModelRun:
    """How one model's run ended: the result files it wrote, or why it failed."""

    label: str
    written: list[Path] = field(default_factory=list)
    error: str | None = None


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


def plan_generic(path: Path, data: Any, registry: Registry = DEFAULT, progress: bool = False) -> GenericPlan:
    """Check the whole study and prepare every model's run; no model is loaded."""
    cfg = parse_study_config(data, path)
    output = resolve_output(cfg.output, path).resolve()  # relative: from the study file's folder
    check_output_dir(output, f"{path}: output")
    models: list[PlannedModel] = []
    benchmark: Benchmark | None = None
    strategies: list[str] = []
    for index, entry in enumerate(cfg.models):
        label, parts = _model_parts(entry, index, path)
        if label in {m.label for m in models}:
            raise UserError(f"{path}: models.{index}: the label {label!r} is used twice; give a 'name'")
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
    return GenericPlan(cfg, path, benchmark, output, strategies, models)


@dataclass
class GenericOptions:
    """How to run a generic study's models."""

    backend_factory: Callable[[ExperimentConfig], Backend] | None = None
    log: Callable[[str], None] | None = None


def run_models(plan: GenericPlan, options: GenericOptions) -> list[ModelRun]:
    """Run or resume each planned model, one loaded at a time; a failure does not stop the others."""
    factory = options.backend_factory or (lambda c: create_backend(c.model))
    log = options.log or (lambda _line: None)
    runs = []
    for planned in plan.models:
        run = ModelRun(planned.label)
        runs.append(run)
        log(f"{planned.label}: {', '.join(plan.strategies)} -> {planned.folder}")
        backend: Backend | None = None
        try:
            real_folder(planned.folder, plan.output)  # never through a linked folder of the study
            atomic_write_text(planned.config_path,
                              yaml.safe_dump(planned.config.public_dict(), sort_keys=False, allow_unicode=True))  # fmt: skip
            backend = factory(planned.config)
            exp = planned.experiment
            check_capabilities(backend, {s.method for s in exp.strategies}, [planned.label])
            outcome = plan.benchmark.run(exp.with_backend(backend, peak_workload), planned.options)
            run.written = list(outcome.written)
        except KeyboardInterrupt:
            raise
        except UserError as exc:
            run.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - one model's failure is reported, the others run
            run.error = f"{type(exc).__name__}: {exc}"
        finally:
            close = getattr(backend, "close", None)
            if callable(close):
                close()
            del backend
            gc.collect()
        if run.error is not None:
            log(f"{planned.label}: failed: {run.error}")
    return runs
