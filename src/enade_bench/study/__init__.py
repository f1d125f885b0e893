"""The ENEM study: one command from model configs to a verdict and a report folder.

Layers (each module imports only those listed before it):

* :mod:`~enade_bench.study.config` — the study YAML (pydantic, ``extra="forbid"``).
* :mod:`~enade_bench.study.exams`, :mod:`~enade_bench.study.attributes` — exam files linked to
  INEP booklets; item attributes (derived or a user CSV).
* :mod:`~enade_bench.study.plan` — every check, then one experiment config per model × area × language.
* :mod:`~enade_bench.study.execute` — run or resume them through :mod:`enade_bench.runner`.
* :mod:`~enade_bench.study.verdict` — the verdict rule (pure).
* :mod:`~enade_bench.study.correction` — letter-prior corrected copies of the runs (PriDe).
* :mod:`~enade_bench.study.analysis` — per-exam psychometrics and the verdict rows (raw, corrected).
* :mod:`~enade_bench.study.step`, :mod:`~enade_bench.study.irt_steps`,
  :mod:`~enade_bench.study.analyses` — extra analysis steps (Min-K%, DIF, prior correction, CAT).
* :mod:`~enade_bench.study.report` — the report folder; :mod:`~enade_bench.study.run` — the command.
"""

from enade_bench.study.run import StudyResult, run_study

__all__ = ["StudyResult", "run_study"]
