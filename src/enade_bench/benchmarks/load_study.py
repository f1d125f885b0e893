"""From a study file to a planned study, and to its report: what ``enade-bench study`` does.

The registry finds the study's exam (:meth:`~enade_bench.benchmarks.registry.Registry.for_study`);
an exam with a study of its own plans it (:class:`~enade_bench.benchmarks.base.StudyBenchmark`:
ENEM), every other exam gets the study every exam has
(:func:`~enade_bench.benchmarks.generic_study.plan_generic`); the one pipeline
(:mod:`enade_bench.study.run`) runs the plan's tasks and writes the exam's report.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from enade_bench.benchmarks.base import StudyBenchmark
from enade_bench.benchmarks.generic_study import plan_generic
from enade_bench.benchmarks.registry import DEFAULT, Registry
from enade_bench.config import read_yaml
from enade_bench.study.executors import LocalSettings, executor_settings
from enade_bench.study.plan import PlannedStudy, StudyOptions, StudyResult
from enade_bench.study.run import describe_planned, run_planned


def plan_study_file(path: Path, options: StudyOptions, registry: Registry = DEFAULT) -> PlannedStudy:
    """Read a study YAML and plan it with its exam's study: everything checked, no model loaded.

    A bad ``--executor`` (``options.executor``) is one ``error:`` line before the file is read.
    """
    executor_settings(LocalSettings(), options.executor)
    data = read_yaml(path, "study config")
    benchmark = registry.for_study(data, path)
    if isinstance(benchmark, StudyBenchmark):
        return benchmark.plan_study(path, data, options)
    return plan_generic(path, data, options, registry)


def run_study(config: Path | str, options: StudyOptions | None = None, **changes: Any) -> StudyResult:
    """Run or resume a study and write its report folder.

    Everything in the config, the data and the prompts is checked before any model is
    loaded, and the executor before the first model starts.  ``changes``: fields of
    :class:`~enade_bench.study.run.StudyOptions` (``run_study(path, backend_factory=...)``).  A
    model that fails is left out of the comparison and named in the report and in ``failed``.
    """
    opts = dataclasses.replace(options or StudyOptions(), **changes)
    path = Path(config)
    return run_planned(path, plan_study_file(path, opts), opts)


def study_plan(config: Path | str, options: StudyOptions | None = None) -> list[str]:
    """``study --dry-run``: the study checked and planned as a run plans it, its tasks described
    (runs, items, the resources each asks of the executor); no model loads, nothing is written."""
    opts = options or StudyOptions()
    return describe_planned(plan_study_file(Path(config), opts))
