"""``enade-bench study``: check the plan, run or resume the models, write the report.

One command for many models on every benchmark.  The study YAML's ``benchmark`` decides
what runs and which analyses follow: ENEM (``benchmark: enem``, or a study with a
``year``) keeps its own study (option shuffles, θ, person fit, the verdict); every other
benchmark runs its study strategies per model and ends with the comparison across
models (:mod:`enade_bench.compare`: Table 1 with compact letters, the pairwise table and the
item flips).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from enade_bench.backends.base import Backend
from enade_bench.benchmarks.enem.study.analysis import analyse_study
from enade_bench.benchmarks.enem.study.plan import plan_study
from enade_bench.benchmarks.enem.study.report import write_study_report
from enade_bench.config import ExperimentConfig, read_yaml
from enade_bench.errors import UserError
from enade_bench.report.folder import check_report_folder, report_folder
from enade_bench.results.safe_write import output_root
from enade_bench.study.execute import ExecuteOptions, run_planned
from enade_bench.study.generic import GenericOptions, plan_generic
from enade_bench.study.generic import run_models as run_each_model
from enade_bench.study.report import write_generic_report

_VERDICT_COLUMNS = ["model", "predictions", "area", "language", "theta", "se", "score", "aberrant_share",
                    "relative_information", "verdict"]  # fmt: skip


@dataclass
class StudyResult:
    """What one ``study`` command did.

    Attributes
    ----------
    summary
        The study's main table as plain text (ENEM: the verdict; otherwise Table 1 across models).
    index
        The report's ``index.html``.
    notes
        What the reader should know (skipped analyses, excluded questions).
    failed
        ``model: reason`` of each model that failed to load or run (the others ran).
    warnings
        What the reader must see first: runs with records in error, stale results files.
    """

    summary: str
    index: Path
    notes: list[str]
    failed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def study_benchmark(path: Path, data: Any) -> str:
    """The benchmark a study YAML names (``enem`` for a study with a ``year`` and no ``benchmark``)."""
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a YAML mapping at the top level")
    name = data.get("benchmark", "enem" if "year" in data else None)
    if name is None:
        raise UserError(f"{path}: missing required key 'benchmark' (the exam: enade, eeval, generic, enem, "
                        "a plug-in's name or folder)")  # fmt: skip
    return str(name)


def run_study(
    config: Path | str,
    run_models: bool = True,
    progress: bool = False,
    backend_factory: Callable[[ExperimentConfig], Backend] | None = None,
    log: Callable[[str], None] | None = None,
    allow_errors: bool = False,
    limit: int | None = None,
) -> StudyResult:
    """Run or resume a study and write its report folder.

    Everything in the config, the data and the prompts is checked before any model is
    loaded.  With ``run_models=False`` the report is written from the runs on disk.
    ``allow_errors`` compares runs with error records (``compare.allow_errors``).
    ``limit``: only the first N questions (``--limit``, in place of the config's ``limit``).
    """
    path = Path(config)
    data = read_yaml(path, "study config")
    if study_benchmark(path, data) == "enem":
        return _enem_study(path, run_models, progress, backend_factory, log, limit, allow_errors)
    if limit is not None:
        data = {**data, "limit": limit}
    plan = plan_generic(path, data, progress=progress)
    if allow_errors:
        compare = plan.config.compare.model_copy(update={"allow_errors": True})
        plan = dataclasses.replace(plan, config=plan.config.model_copy(update={"compare": compare}))
    check_report_folder(plan.report_dir, f"{path}: the study's report folder", plan.output)
    with output_root(plan.output):  # the runs' files: never through a linked folder of the study
        runs = run_each_model(plan, GenericOptions(backend_factory, log)) if run_models else []
    failed = [f"{r.label}: {r.error}" for r in runs if r.error is not None]
    report = write_generic_report(plan)
    if report is None:
        raise UserError(f"{path}: no model of the study has results under {plan.output / 'runs'}"
                        + ("; failures: " + "; ".join(failed) if failed else "; run without --report-only first"))  # fmt: skip
    return StudyResult(report.summary, report.index, report.notes, failed, report.warnings)


def _enem_study(
    path: Path,
    run_models: bool,
    progress: bool,
    backend_factory: Callable[[ExperimentConfig], Backend] | None,
    log: Callable[[str], None] | None,
    limit: int | None,
    allow_errors: bool,
) -> StudyResult:
    plan = plan_study(path)
    check_report_folder(plan.report_dir, f"{path}: the study's report folder", plan.output)
    if limit is not None:
        plan = dataclasses.replace(plan, config=plan.config.model_copy(update={"limit": limit}))
    allow_errors = allow_errors or plan.config.allow_errors
    if run_models:
        with output_root(plan.output):  # the runs' files: never through a linked folder of the study
            run_planned(plan, ExecuteOptions(progress=progress, backend_factory=backend_factory, log=log))
    study = analyse_study(plan)
    if study.verdict.empty:
        raise UserError(f"{path}: no run of the study has results under {plan.output / 'runs'}; "
                        "run without --report-only first")  # fmt: skip
    with report_folder(plan.report_dir, f"{path}: the study's report folder"):
        report = write_study_report(study, plan.report_dir, plan.config.verdict, plan.attributes_source,
                                    f"ENEM {plan.config.year} study: {plan.config.name}", allow_errors,
                                    family=plan.config.family)  # fmt: skip
    summary = study.verdict[_VERDICT_COLUMNS].to_string(index=False, float_format=lambda v: f"{v:.3f}")
    return StudyResult(summary, report.index, report.notes, [], report.warnings)
