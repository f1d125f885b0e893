"""The registry of benchmarks: ``dataset.preset`` -> the benchmark that runs it.

Registering an exam is one line in :data:`BENCHMARKS` (and its folder beside this
file); nothing else changes.
"""

from __future__ import annotations

from pathlib import Path

from enade_bench.benchmarks import eeval, enade, enem, progress_test
from enade_bench.benchmarks.base import Benchmark
from enade_bench.config import ExperimentConfig, load_config
from enade_bench.errors import UserError
from enade_bench.results.records import RunResult
from enade_bench.results.writable import check_output_dir
from enade_bench.runner.outputs import RunOutcome
from enade_bench.runner.run import Experiment, RunOptions
from enade_bench.strategies.registry import Strategy

BENCHMARKS: dict[str, Benchmark] = {
    b.name: b for b in (enade.BENCHMARK, enem.BENCHMARK, eeval.BENCHMARK, progress_test.BENCHMARK)
}


def benchmark_for(cfg: ExperimentConfig, source: str) -> Benchmark:
    """The benchmark that ``cfg.dataset.preset`` names (an ``error:`` naming the key otherwise)."""
    try:
        return BENCHMARKS[cfg.dataset.preset]
    except KeyError:
        raise UserError(
            f"{source}: key 'dataset.preset': got '{cfg.dataset.preset}'; "
            f"expected one of {', '.join(BENCHMARKS)}"
        ) from None


def load_experiment(config_path: Path, options: RunOptions) -> tuple[Benchmark, Experiment, list[Strategy]]:
    """Load a config with its benchmark; everything is checked before any model call."""
    cfg = load_config(config_path)
    check_output_dir(
        options.output_dir or Path(cfg.output.dir),
        "--output-dir" if options.output_dir else f"{config_path}: output.dir",
    )
    benchmark = benchmark_for(cfg, str(config_path))
    exp, strategies = benchmark.load(cfg, config_path, options)
    return benchmark, exp, strategies


def run_config(config_path: Path, options: RunOptions) -> RunOutcome:
    """Run every planned strategy of a config with its benchmark; results and files written."""
    benchmark, exp, strategies = load_experiment(config_path, options)
    return benchmark.run(exp, strategies, options)


def run_experiment(config_path: Path, options: RunOptions) -> list[RunResult]:
    """The results of :func:`run_config` (one per strategy)."""
    return run_config(config_path, options).results
