"""The runner: plans, runs and resumes the strategies of one loaded experiment.

It imports no benchmark: a benchmark (:mod:`enade_bench.benchmarks`) prepares an
:class:`Experiment` (data, prompts, strategies, hooks; everything checked before any
model loads), :func:`load_backend` loads its model, and :func:`run_experiment` runs it,
live or through a provider's batch API, on the one plan of :mod:`.plan`.
"""

from enade_bench.runner.plan import Experiment, RunOptions, StrategyPlan, plan_strategies
from enade_bench.runner.run import load_backend, run_experiment

__all__ = ["Experiment", "RunOptions", "StrategyPlan", "load_backend", "plan_strategies", "run_experiment"]
