"""The runner: loads an experiment, runs its strategies, writes results (resumable)."""

from enade_bench.runner.run import RunOptions, run_experiment

__all__ = ["RunOptions", "run_experiment"]
