"""The ENEM benchmark: an ordinary CSV exam plus its psychometric report section and its study."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from enade_bench.benchmarks.base import CsvExam, PromptSets, ReportOptions
from enade_bench.benchmarks.enem.files import ENEM_FILE_NAME
from enade_bench.dataset.presets import DatasetPreset
from enade_bench.dataset.schema import LETTERS
from enade_bench.metrics.prior_correction import SCORED_METHODS

if TYPE_CHECKING:  # the analysis stack (pandas, scipy, matplotlib) loads only for a report or a study
    from enade_bench.benchmarks.enem.study.planned import EnemStudy
    from enade_bench.report.loader import RunEntry
    from enade_bench.report.section import Section
    from enade_bench.results.summary import JsonObject
    from enade_bench.study.plan import StudyOptions


@dataclass(frozen=True)
class EnemBenchmark(CsvExam):
    """ENEM: questions in INEP's booklets, analysed with INEP's 3PL item parameters."""

    def plan_study(self, path: Path, data: JsonObject, options: StudyOptions) -> EnemStudy:
        """The ENEM study (models × areas × languages, option shuffles, the verdict), checked and
        planned (:func:`~.study.planned.plan_enem_study`)."""
        from enade_bench.benchmarks.enem.study.planned import plan_enem_study  # noqa: PLC0415

        return plan_enem_study(path, data, options, self)

    def report_section(self, entries: Sequence[RunEntry], options: ReportOptions, folder: Path) -> Section:
        """The ENEM runs' psychometrics (θ, person fit, information, discrimination, attribute
        tests, with their figures), then every ENEM step (:data:`~.steps.STEPS`): Min-K%,
        DIF, letter-prior correction (shuffled first_token / log_prob runs) and CAT."""
        from enade_bench.benchmarks.enem.figures import psychometric_figures  # noqa: PLC0415
        from enade_bench.benchmarks.enem.steps import STEPS, enem_analysis  # noqa: PLC0415
        from enade_bench.benchmarks.enem.tables import psychometric_tables, question_details  # noqa: PLC0415
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


PROMPTS = Path(__file__).parent / "prompts"

#: The files of ``../shared/data/enem/questions``: ``area`` is the ``test`` column (CH, CN,
#: LC, MT), ``booklet`` the INEP booklet code of the file name (0 when unknown: linked by
#: answer key in the analysis), ``language`` the row's language (LC items 1-5 exist in
#: English and Spanish), ``question_number`` its booklet position.
PRESET = DatasetPreset(
    "enem",
    columns={"year": "year", "stem": "body", **{letter: letter for letter in LETTERS}, "answer": "answer"},
    id_template="{file_stem}:{question_number}:{language}",
    fields=("year", "area", "booklet", "language", "question_number"),
    field_columns={"area": "test"},
    file_fields=ENEM_FILE_NAME,
    int_fields=frozenset({"year", "booklet", "question_number"}),
    breakdowns=("year", "area", "booklet", "language"),
)

BENCHMARK = EnemBenchmark(
    name="enem",
    preset=PRESET,
    prompts=PromptSets(
        templates={f"enem_{lang}": PROMPTS / f"enem_{lang}.yaml" for lang in ("pt-BR", "en")},
        default={lang: f"enem_{lang}" for lang in ("pt-BR", "en")},
    ),
)
