"""Benchmarks as plug-ins: each exam is one folder (or module) with a preset and prompts.

:func:`run_experiment` is the entry point for any config: the registry picks the
benchmark by ``dataset.preset``, the benchmark loads the experiment, the runner
runs it. See ``docs/adding_an_exam.md``.
"""

from enade_bench.benchmarks.base import Benchmark, CsvExam
from enade_bench.benchmarks.registry import (
    BENCHMARKS,
    benchmark_for,
    load_experiment,
    run_config,
    run_experiment,
)

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "CsvExam",
    "benchmark_for",
    "load_experiment",
    "run_config",
    "run_experiment",
]
