"""The ENEM benchmark: an ordinary CSV exam plus its psychometric report section."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from enade_bench.benchmarks.base import CsvExam, ReportOptions

if TYPE_CHECKING:  # the analysis stack (pandas, scipy, matplotlib) loads only for a report
    from enade_bench.report.loader import RunEntry
    from enade_bench.report.section import Section


@dataclass(frozen=True)
class EnemBenchmark(CsvExam):
    """ENEM: questions in INEP's booklets, analysed with INEP's 3PL item parameters."""

    def report_section(self, entries: Sequence[RunEntry], options: ReportOptions, folder: Path) -> Section:
        """The ENEM runs' psychometrics (θ, person fit, information, discrimination, attribute
        tests, with their figures), then every ENEM step (:data:`~.steps.STEPS`): Min-K%,
        DIF, letter-prior correction (shuffled first_token / log_prob runs) and CAT."""
        from enade_bench.benchmarks.enem.figures import psychometric_figures  # noqa: PLC0415
        from enade_bench.benchmarks.enem.steps import STEPS, enem_analysis  # noqa: PLC0415
        from enade_bench.benchmarks.enem.tables import psychometric_tables, question_details  # noqa: PLC0415
        from enade_bench.metrics.prior_correction import SCORED_METHODS  # noqa: PLC0415
        from enade_bench.report.section import Section, run_steps  # noqa: PLC0415

        scored = any(r.method in SCORED_METHODS and r.permutation for e in entries for r in e.result.records)
        predictions = ("raw", "corrected") if scored else ("raw",)
        analysis, psy = enem_analysis(entries, options.data.get("enem"), options.seed, predictions)
        if not psy.exams:
            return Section(notes=list(psy.skipped))
        steps = run_steps(STEPS.values(), analysis, folder)
        return Section(
            psychometric_tables(psy) + steps.tables,
            psychometric_figures(psy, folder) + steps.figures,
            analysis.notes + steps.notes,
            steps.files,
            question_details(psy),
        )
