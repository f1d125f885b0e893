"""The runner: plans, runs and resumes the strategies of one loaded experiment.

It imports no benchmark: a benchmark (:mod:`enade_bench.benchmarks`) prepares an
:class:`~.plan.Experiment` (data, prompts, strategies, hooks; everything checked before any
model loads), :func:`~.run.load_backend` loads its model, and :func:`~.run.run_experiment` runs it,
live or through a provider's batch API, on the one plan of :mod:`.plan`.
"""
