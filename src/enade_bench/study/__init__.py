"""Studies: many models in one command, for every exam; this package knows no exam.

Layers (each module imports only those listed before it):

* :mod:`~enade_bench.study.models` — a study's model entries (an experiment YAML or an inline block);
  :mod:`~enade_bench.study.config` — the study YAML every exam has unless it brings its own.
* :mod:`~enade_bench.study.memory`, :mod:`~enade_bench.study.tasks` — one model with its runs on one
  exam (:class:`~enade_bench.study.tasks.ModelTask`), its size and how it runs where it lands.
* :mod:`~enade_bench.study.planner` — the one planner: a task per model × exam, their cost and order.
* :mod:`~enade_bench.study.executors` — where tasks run: this process, a Ray cluster, Slurm.
* :mod:`~enade_bench.study.execute`, :mod:`~enade_bench.study.progress` — the tasks through an executor.
* :mod:`~enade_bench.study.plan` — what an exam's study hands the pipeline (:class:`~enade_bench.study.plan.PlannedStudy`);
  :mod:`~enade_bench.study.run` — the pipeline: run or resume the tasks, then the exam's report.

An exam plans its study (:class:`~enade_bench.benchmarks.base.StudyBenchmark`: ENEM's areas ×
languages, option shuffles and verdict in :mod:`enade_bench.benchmarks.enem.study`), or gets
the study every exam has (:mod:`enade_bench.benchmarks.study`: its study strategies per model,
then the comparison); :func:`enade_bench.benchmarks.load.run_study` goes from a YAML to the report.
"""
