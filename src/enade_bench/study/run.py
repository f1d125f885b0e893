"""``enade-bench study``: check the plan, run or resume the models, write the report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from enade_bench.backends.base import Backend
from enade_bench.benchmarks.enem.study.analysis import analyse_study
from enade_bench.benchmarks.enem.study.plan import plan_study
from enade_bench.benchmarks.enem.study.report import write_study_report
from enade_bench.config import ExperimentConfig
from enade_bench.errors import UserError
from enade_bench.study.execute import ExecuteOptions, run_planned


@dataclass
class StudyResult:
    """What one ``study`` command did."""

    verdict: pd.DataFrame
    index: Path
    verdict_csv: Path
    notes: list[str]

    @property
    def verdict_text(self) -> str:
        """The verdict as a plain-text table for the terminal."""
        if self.verdict.empty:
            return "no verdict: no run has results yet"
        cols = ["model", "predictions", "area", "language", "theta", "se", "score", "aberrant_share",
                "relative_information", "verdict"]  # fmt: skip
        return self.verdict[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}")


def run_study(
    config: Path | str,
    run_models: bool = True,
    progress: bool = False,
    backend_factory: Callable[[ExperimentConfig], Backend] | None = None,
    log: Callable[[str], None] | None = None,
) -> StudyResult:
    """Run or resume a study and write its report folder.

    Everything in the config, the data and the attribute CSV is checked
    before any model is loaded (:func:`~enade_bench.benchmarks.enem.study.plan.plan_study`).
    """
    plan = plan_study(Path(config))
    if run_models:
        run_planned(plan, ExecuteOptions(progress=progress, backend_factory=backend_factory, log=log))
    study = analyse_study(plan)
    if study.verdict.empty:
        raise UserError(f"{config}: no run of the study has results under {plan.output / 'runs'}; "
                        "run without --report-only first")  # fmt: skip
    report = write_study_report(study, plan.report_dir, plan.config.verdict, plan.attributes_source,
                                f"ENEM {plan.config.year} study: {plan.config.name}")  # fmt: skip
    return StudyResult(study.verdict, report.index, report.verdict_csv, report.notes)
