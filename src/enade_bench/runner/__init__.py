"""The runner: plans, runs and resumes the strategies of one loaded experiment.

It imports no benchmark: :mod:`enade_bench.benchmarks` loads an experiment (data
layout, prompts, hooks) and hands it to :func:`run_loaded`.
"""

from enade_bench.runner.run import Experiment, RunOptions, load_experiment, run_loaded

__all__ = ["Experiment", "RunOptions", "load_experiment", "run_loaded"]
