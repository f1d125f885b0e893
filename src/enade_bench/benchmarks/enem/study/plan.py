"""From a study config to the list of runs: every check before any model loads.

:func:`plan_study` resolves the ENEM data folder, checks that the year and
every area have INEP item parameters (the booklet links by code or answer
key), finds the question file of every (area, language), reads each model's
experiment YAML (its questions must be ENEM), checks the item-attribute CSV
and returns one :class:`PlannedRun` per model × area × language.  Nothing is
written; a problem is a :class:`~enade_bench.errors.UserError` naming the
file and key.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from enade_bench.benchmarks.enem.data import find_enem_data
from enade_bench.benchmarks.enem.files import parse_exam_filename
from enade_bench.benchmarks.enem.inep import load_booklets, load_inep_items
from enade_bench.benchmarks.enem.study.attributes import derive_attributes, read_attribute_csv
from enade_bench.benchmarks.enem.study.config import StudyConfig, load_study_config
from enade_bench.benchmarks.enem.study.exams import ExamSource, find_exam
from enade_bench.config import ExperimentConfig, parse_config, resolve_input, resolve_output
from enade_bench.errors import UserError, as_given
from enade_bench.results.summary import JsonObject
from enade_bench.study.models import ModelParts, StudyModel, model_parts

#: The exam language (``dataset.language``: picks the ENEM prompt) of each study language, whose
#: question files are in its folder under ``questions/``.
LANGUAGES = {"pt-br": "pt-BR", "en": "en"}


@dataclass(frozen=True)
class PlannedRun:
    """One experiment of the study: a model on one area in one language."""

    model: str
    area: str
    language: str
    config: ExperimentConfig
    folder: Path

    @property
    def config_path(self) -> Path:
        """Where the generated experiment YAML is written."""
        return self.folder / "experiment.yaml"


@dataclass(frozen=True)
class StudyPlan:
    """Everything :func:`run_study` needs, checked."""

    config: StudyConfig
    source: Path
    enem_dir: Path
    output: Path
    exams: list[ExamSource]
    runs: list[PlannedRun]
    attributes: pd.DataFrame
    attributes_source: str
    scale: dict[str, tuple[float, float]]

    @property
    def report_dir(self) -> Path:
        """The one report folder."""
        return self.output / "report"


def read_scale(enem_dir: Path) -> dict[str, tuple[float, float]]:
    """``area -> (k, d)`` from ``inep_scale_constants.csv`` (score = k·θ + d)."""
    path = enem_dir / "inep_scale_constants.csv"
    try:
        frame = pd.read_csv(path, dtype={"area": str, "k": float, "d": float})
        return {
            str(a): (float(k), float(d))
            for a, k, d in zip(frame["area"], frame["k"], frame["d"], strict=True)
        }
    except (OSError, KeyError, ValueError) as exc:
        raise UserError(f"{as_given(path)}: expected columns area, d, k ({exc})") from None


def _model_parts(entry: StudyModel, index: int, study_path: Path) -> ModelParts:
    """A model entry read (:func:`~enade_bench.study.models.model_parts`); an experiment YAML's
    questions must be ENEM's, and its prompts are its own or the ENEM default."""
    parts = model_parts(entry, index, study_path, entry_prompts=False)
    exp = parts.experiment
    if exp is not None and (exp.dataset.benchmark != "enem" or not _is_enem_file(exp.dataset.path)):
        raise UserError(
            f"{as_given(parts.source)}: key 'dataset': questions {exp.dataset.path!r} (benchmark {exp.dataset.benchmark!r}) "
            "are not ENEM; expected benchmark 'enem' and a file named ENEM_<year>_<area>_CO_PROVA_<code>.csv "
            "(or give the model inline in the study)"
        )
    return parts


def _is_enem_file(path: str) -> bool:
    try:
        parse_exam_filename(path)
    except ValueError:
        return False
    return True


def _experiment(cfg: StudyConfig, parts: ModelParts, exam: ExamSource) -> ExperimentConfig:
    label = parts.label
    evaluation: JsonObject = {
        "method": cfg.method,
        "shot_type": "zero",
        "shuffle_alternatives": True,
        "n_shuffles": cfg.n_shuffles,
        "seed": cfg.seed,
        "batch_size": parts.batch_size or 8,
    }
    if parts.experiment is not None:
        evaluation["letter_variants"] = parts.experiment.evaluation.letter_variants
    data = {
        "name": f"{label}_{cfg.year}_{exam.area}_{exam.language}",
        "description": f"study {cfg.name}: {label} on ENEM {cfg.year} {exam.area} ({exam.language})",
        "dataset": {"path": str(exam.path), "benchmark": "enem", "language": LANGUAGES[exam.language]},
        "model": parts.model,
        "evaluation": evaluation,
        **({"prompts": parts.prompts} if parts.prompts else {}),
    }
    return parse_config(data, f"study {cfg.name}, model {label}")


def available_languages(enem_dir: Path, year: int, areas: list[str]) -> list[str]:
    """Study languages with a question file of ``year`` for every area."""
    out = []
    for language in LANGUAGES:
        files = [
            list((enem_dir / "questions" / language).glob(f"ENEM_{year}_{a}_CO_PROVA_*.csv")) for a in areas
        ]
        if all(files):
            out.append(language)
    return out


def plan_study(study_path: Path | str, cfg: StudyConfig | None = None) -> StudyPlan:
    """Check a study and list its runs (nothing is written, no model is loaded)."""
    study_path = Path(study_path)
    cfg = cfg or load_study_config(study_path)
    explicit = resolve_input(cfg.enem_data, study_path).resolve() if cfg.enem_data is not None else None
    enem_dir = find_enem_data(explicit, [study_path], what=f"{study_path}: key 'enem_data'")
    inep = load_inep_items(enem_dir / "inep_items.csv")
    booklets = load_booklets(enem_dir / "inep_booklets.csv")
    years = sorted({int(y) for y in booklets.loc[booklets["CO_PROVA"].isin(inep["CO_PROVA"]), "ano"]})
    if cfg.year not in years:
        raise UserError(
            f"{study_path}: key 'year': ENEM {cfg.year} has no INEP item parameters in "
            f"{enem_dir / 'inep_items.csv'} (years with parameters: {', '.join(map(str, years))})"
        )
    languages = cfg.languages or available_languages(enem_dir, cfg.year, list(cfg.areas))
    if not languages:
        raise UserError(
            f"{study_path}: key 'languages': no question files of ENEM {cfg.year} under "
            f"{enem_dir / 'questions'}"
        )
    exams = [
        find_exam(enem_dir, inep, booklets, cfg.year, area, lang, study_path)
        for area in cfg.areas
        for lang in languages
    ]
    scale = read_scale(enem_dir)
    for area in cfg.areas:
        if area not in scale:
            raise UserError(f"{enem_dir / 'inep_scale_constants.csv'}: no scale constants for area {area}")
    models = [_model_parts(m, k, study_path) for k, m in enumerate(cfg.models)]
    labels = [parts.label for parts in models]
    if len(set(labels)) != len(labels):
        raise UserError(
            f"{study_path}: key 'models': two models share the label(s) "
            f"{sorted({x for x in labels if labels.count(x) > 1})}; set 'name'"
        )
    output = resolve_output(cfg.output, study_path).resolve()  # relative: from the study file's folder
    runs = [
        PlannedRun(
            parts.label,
            exam.area,
            exam.language,
            _experiment(cfg, parts, exam),
            output / "runs" / parts.label / f"{cfg.year}_{exam.area}_{exam.language}",
        )
        for parts in models
        for exam in exams
    ]
    if cfg.attributes is not None:
        path = resolve_input(cfg.attributes, study_path).resolve()
        year_booklets = booklets.loc[booklets["ano"] == cfg.year, "CO_PROVA"]
        known = set(inep.loc[inep["CO_PROVA"].isin(year_booklets), "CO_ITEM"].dropna().astype(str))
        attributes = read_attribute_csv(path, known, cfg.year)
        source = str(path)
    else:
        attributes = derive_attributes(exams)
        source = "derived from the question texts (enade-bench study --derive-attributes)"
    return StudyPlan(cfg, study_path, enem_dir, output, exams, runs, attributes, source, scale)
