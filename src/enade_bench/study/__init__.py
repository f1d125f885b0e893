"""The ENEM study: one command from model configs to a verdict and a report folder.

Layers (each module imports only those listed before it):

* :mod:`~enade_bench.benchmarks.enem.study.config` — the study YAML (pydantic, ``extra="forbid"``).
* :mod:`~enade_bench.benchmarks.enem.study.exams`, :mod:`~enade_bench.benchmarks.enem.study.attributes` — exam files linked to
  INEP booklets; item attributes (derived or a user CSV).
* :mod:`~enade_bench.benchmarks.enem.study.plan` — every check, then one experiment config per model × area × language.
* :mod:`~enade_bench.study.execute` — run or resume them through :mod:`enade_bench.runner`.
* :mod:`~enade_bench.benchmarks.enem.study.verdict` — the verdict rule (pure).
* :mod:`~enade_bench.benchmarks.enem.study.analysis` — per-exam psychometrics and the verdict rows
  (raw, and letter-prior corrected: :func:`~enade_bench.benchmarks.enem.steps.correct_entries`).
* :mod:`~enade_bench.benchmarks.enem.steps` — the ENEM steps (Min-K%, DIF, prior correction, CAT),
  the same that ``report`` and the ``irt`` commands run.
* :mod:`~enade_bench.benchmarks.enem.study.report` — the report folder; :mod:`~enade_bench.study.run` — the command.
"""

from enade_bench.study.run import StudyResult, run_study

__all__ = ["StudyResult", "run_study"]
