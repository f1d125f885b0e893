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
        """θ, person fit, information, discrimination and attribute tests of the ENEM runs."""
        from enade_bench.benchmarks.enem.analysis import analyse  # noqa: PLC0415
        from enade_bench.benchmarks.enem.figures import psychometric_figures  # noqa: PLC0415
        from enade_bench.benchmarks.enem.tables import psychometric_tables  # noqa: PLC0415
        from enade_bench.report.section import Section  # noqa: PLC0415

        psy = analyse(entries, options.data.get("enem"), options.seed)
        return Section(psychometric_tables(psy), psychometric_figures(psy, folder), list(psy.skipped))
