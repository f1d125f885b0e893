"""Benchmarks as plug-ins: each exam is one folder that owns everything about it.

:func:`load_experiment` is the entry point for any config: the registry picks the
benchmark by ``dataset.benchmark``, the benchmark prepares the experiment (data,
prompts, strategies, all checked), and the caller loads the model and runs it
(:func:`run_config` does both); :func:`run_study` does the same for a study YAML. See
``docs/adding_an_exam.md``.

The names below are imported when first read, so importing a module of this package (an
exam's command parser) does not import the runner, data and model code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from enade_bench.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from enade_bench.benchmarks.base import Benchmark, CsvExam, PromptSets, StudyBenchmark
    from enade_bench.benchmarks.load import load_experiment, run_config
    from enade_bench.benchmarks.load_study import run_study
    from enade_bench.benchmarks.registry import DEFAULT, ENTRY_POINT_GROUP, Registry

#: Each name this package exports -> the module defining it (imported when the name is first read).
_EXPORTS: dict[str, str] = {
    "Benchmark": "enade_bench.benchmarks.base",
    "CsvExam": "enade_bench.benchmarks.base",
    "PromptSets": "enade_bench.benchmarks.base",
    "StudyBenchmark": "enade_bench.benchmarks.base",
    "load_experiment": "enade_bench.benchmarks.load",
    "run_config": "enade_bench.benchmarks.load",
    "run_study": "enade_bench.benchmarks.load_study",
    "DEFAULT": "enade_bench.benchmarks.registry",
    "ENTRY_POINT_GROUP": "enade_bench.benchmarks.registry",
    "Registry": "enade_bench.benchmarks.registry",
}
__all__ = [
    "DEFAULT",
    "ENTRY_POINT_GROUP",
    "Benchmark",
    "CsvExam",
    "PromptSets",
    "Registry",
    "StudyBenchmark",
    "load_experiment",
    "run_config",
    "run_study",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
