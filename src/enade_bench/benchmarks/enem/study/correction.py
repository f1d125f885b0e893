"""Letter-prior corrected copies of a study's runs (PriDe, :mod:`enade_bench.metrics.prior_correction`).

Each shuffled ``first_token`` / ``log_prob`` run of the study is corrected on
its own (one model, one exam): the model's prior over the option letters is
estimated from the run's option orders and removed from every record
(``scope="question"``: each question's own prior, the default; ``"model"``:
the mean prior).  The corrected run is an ordinary :class:`RunEntry` whose
records carry the corrected prediction (the raw one is kept in
``record.extra["raw"]``), so θ, l_z*, the verdict, DIF and CAT are computed
on it by exactly the code that scores the raw run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from enade_bench.benchmarks.enem.study.plan import PlannedRun
from enade_bench.metrics.prior_correction import PriorCorrection, Scope, prior_correction
from enade_bench.report.loader import RunEntry


@dataclass(frozen=True)
class RunCorrection:
    """The letter-prior correction of one study run (model × area × language)."""

    model: str
    area: str
    language: str
    correction: PriorCorrection


def correct_runs(
    runs: Sequence[tuple[PlannedRun, RunEntry]], scope: Scope
) -> tuple[list[tuple[PlannedRun, RunEntry]], list[RunCorrection], list[str]]:
    """Prior-corrected copies of the runs that have letter scores over ≥ 2 option orders.

    Returns
    -------
    runs, corrections, notes
        The corrected runs (same :class:`PlannedRun`), one :class:`RunCorrection`
        each, and a note per run that could not be corrected (and why).
    """
    out, corrections, notes = [], [], []
    for run, entry in runs:
        try:
            pc = prior_correction(entry.result.records, scope)
        except ValueError as exc:
            notes.append(f"letter-prior correction of {run.model} on {run.area} {run.language}: {exc}")
            continue
        result = entry.result.model_copy(update={"records": pc.records})
        out.append((run, RunEntry(entry.path, result)))
        corrections.append(RunCorrection(run.model, run.area, run.language, pc))
    return out, corrections, notes
