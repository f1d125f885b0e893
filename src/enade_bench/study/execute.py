"""Run (or resume) the experiments of a study plan through the existing runner.

Each planned run is one experiment config (written for provenance as
``runs/<model>/<year>_<area>_<language>/experiment.yaml``); its records go
through :func:`enade_bench.runner.run.run_experiment`, whose append-only
intermediate log makes a rerun of an interrupted study skip every answered
(question, shuffle).  One backend is loaded per model and shared by its runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from enade_bench.backends.base import Backend
from enade_bench.backends.factory import check_capabilities, create_backend
from enade_bench.benchmarks.enem import BENCHMARK as ENEM
from enade_bench.benchmarks.enem.study.plan import PlannedRun, StudyPlan
from enade_bench.config import ExperimentConfig
from enade_bench.results.records import RunResult
from enade_bench.results.store import atomic_write_text
from enade_bench.runner.batch_probe import peak_workload
from enade_bench.runner.plan import RunOptions


@dataclass
class ExecuteOptions:
    """How to run the study's experiments."""

    progress: bool = True
    backend_factory: Callable[[ExperimentConfig], Backend] | None = None
    log: Callable[[str], None] | None = None
    written: list[Path] = field(default_factory=list)


def run_planned(plan: StudyPlan, options: ExecuteOptions) -> list[tuple[PlannedRun, RunResult]]:
    """Run or resume every planned run; return each run's result.

    Every run is prepared (data, prompts, plans) before the first model loads, so a
    bad file stops the study before any model call.
    """
    factory = options.backend_factory or (lambda c: create_backend(c.model))
    prepared = []
    for run in plan.runs:
        opts = RunOptions(
            limit=plan.config.limit, output_dir=run.folder, resume=True, progress=options.progress
        )
        prepared.append((run, opts, ENEM.prepare(run.config, run.config_path, opts)))
    backends: dict[str, Backend] = {}
    out = []
    for run, opts, exp in prepared:
        cfg = run.config
        if run.model not in backends:
            backends[run.model] = factory(cfg)
        backend = backends[run.model]
        check_capabilities(backend, {s.method for s in exp.strategies}, [cfg.name])
        atomic_write_text(
            run.config_path, yaml.safe_dump(cfg.public_dict(), sort_keys=False, allow_unicode=True)
        )
        if options.log is not None:
            options.log(f"{run.model} on ENEM {plan.config.year} {run.area} {run.language} -> {run.folder}")
        outcome = ENEM.run(exp.with_backend(backend, peak_workload), opts)
        out += [(run, result) for result in outcome.results]
        options.written += outcome.written
    return out
