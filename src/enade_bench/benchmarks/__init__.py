"""Benchmarks as plug-ins: each exam is one folder that owns everything about it.

:func:`load_experiment` is the entry point for any config: the registry picks the
benchmark by ``dataset.benchmark``, the benchmark prepares the experiment (data,
prompts, strategies, all checked), and the caller loads the model and runs it
(:func:`run_config` does both). See ``docs/adding_an_exam.md``.
"""

from enade_bench.benchmarks.base import Benchmark, CommandBenchmark, CsvExam, PromptSets
from enade_bench.benchmarks.load import load_experiment, run_config
from enade_bench.benchmarks.registry import DEFAULT, ENTRY_POINT_GROUP, Registry

__all__ = [
    "DEFAULT",
    "ENTRY_POINT_GROUP",
    "Benchmark",
    "CommandBenchmark",
    "CsvExam",
    "PromptSets",
    "Registry",
    "load_experiment",
    "run_config",
]
