"""The study config (``enade-bench study STUDY.yaml``), validated by pydantic.

A study names one or more models (each the path of an existing experiment
YAML, whose ``model`` and ``prompts`` blocks are reused, or an inline
``model`` block), an ENEM year, the areas and languages, the number of option
shuffles and the scoring method.  Every block forbids unknown keys.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from enade_bench.config import StrictModel, read_yaml, validate_mapping
from enade_bench.file_names import SafeName
from enade_bench.psychometrics.cat import CatConfig, stop_rule
from enade_bench.study.executors import ExecutorSettings, LocalSettings
from enade_bench.study.models import NAME_PATTERN, StudyModel

Area = Literal["CH", "CN", "LC", "MT"]
StudyLanguage = Literal["pt-br", "en"]
AREAS: tuple[Area, ...] = ("CH", "CN", "LC", "MT")
_NAME = NAME_PATTERN


class VerdictRule(StrictModel):
    """Thresholds of the verdict rule (see ``docs/enem_study.md``)."""

    alpha: float = Field(default=0.05, gt=0, lt=1, description="level of the l_z* bootstrap cut-off")
    n_boot: int = Field(default=200, ge=10, description="bootstrap replications of the cut-off")
    n_respondents: int = Field(default=1000, ge=50, description="simulated patterns per replication")
    max_aberrant_share: float = Field(
        default=0.5, gt=0, le=1, description="unreliable when this share of shuffles (or more) is aberrant"
    )
    min_relative_information: float = Field(
        default=0.25, gt=0, lt=1, description="outside the range when I(θ)/max I is below this"
    )


class DifSettings(StrictModel):
    """Machine-human DIF of the study report (``psychometrics.dif.machine_human_dif``)."""

    alpha: float = Field(default=0.05, gt=0, lt=1, description="false discovery rate (Benjamini-Hochberg)")
    min_n: int = Field(default=10, ge=1, description="test items answered by at least this many patterns")
    unit: Literal["model", "pattern"] = Field(
        default="model",
        description="unit of evidence: model (shuffles collapsed per model, exact beta-binomial test) "
        "or pattern (every model × shuffle pattern a respondent, pooled G²)",
    )


class CatSettings(StrictModel):
    """Post-hoc adaptive testing of the study report (``psychometrics.cat_posthoc.simulate_cat``).

    ``rule`` names a stopping rule of ``psychometrics.cat.STOP_RULES``: ``quadrature`` (default,
    SE ≤ sqrt(SE_full² + 0.1²) after at least 15 items) or ``additive`` (SE ≤ max(0.35,
    SE_full + 0.05)); ``target_se``, ``full_se_margin`` and ``min_items`` override its values.
    """

    rule: Literal["quadrature", "additive"] = Field(default="quadrature", description="stopping rule")
    target_se: float | None = Field(default=None, ge=0, description="SE floor (default: the rule's)")
    full_se_margin: float | None = Field(default=None, ge=0, description="margin over the full-test SE")
    min_items: int | None = Field(default=None, ge=0, description="never stop before this many items")
    tolerance: float = Field(default=0.15, gt=0, description="|θ_CAT - θ_full| counted as close")

    def config(self) -> CatConfig:
        """The :class:`~enade_bench.psychometrics.cat.CatConfig` these settings describe."""
        return stop_rule(self.rule, self.target_se, self.full_se_margin, self.min_items)


class StudyConfig(StrictModel):
    """One study: models × areas × languages of one ENEM year."""

    name: SafeName = Field(pattern=_NAME)
    description: str = ""
    benchmark: Literal["enem"] = Field(default="enem", description="always enem (a study with a 'year')")
    models: list[StudyModel] = Field(min_length=1)
    year: int
    areas: list[Area] = Field(default_factory=lambda: list(AREAS), min_length=1)
    languages: list[StudyLanguage] | None = Field(
        default=None, description="default: the languages with question files for the year"
    )
    n_shuffles: int = Field(default=30, ge=1)
    method: Literal["generation", "log_prob", "first_token"] = "first_token"
    seed: int = Field(default=42, description="seed of the option shuffles")
    analysis_seed: int = Field(default=20240101, description="random baseline, humans, bootstrap")
    output: str = Field(
        description="study folder: runs/ and report/ are written below it; relative: from the study file's folder"
    )
    enem_data: str | None = Field(default=None, description="folder with inep_items.csv and questions/")
    attributes: str | None = Field(default=None, description="item-attribute CSV (item_id + 0/1 columns)")
    limit: int | None = Field(default=None, ge=1, description="only the first N questions (tests)")
    allow_errors: bool = Field(
        default=False,
        description="compare runs with error records on their answers (else refused as incomplete)",
    )
    family: Literal["all", "strategy", "stratum"] = Field(
        default="strategy",
        description="pairs of the comparison adjusted together (docs/comparisons.md): every area x language "
        "cell at once (strategy, the default, as all: a study has one strategy) or each cell alone (stratum); "
        "set before the results, recorded in every output",
    )
    n_humans: int = Field(default=1000, ge=10)
    verdict: VerdictRule = VerdictRule()
    predictions: Literal["raw", "corrected", "both"] = Field(
        default="both", description="verdict, DIF and CAT on raw and/or letter-prior corrected predictions"
    )
    prior_scope: Literal["question", "model"] = Field(
        default="question", description="letter prior per question (default) or one per model"
    )
    dif: DifSettings = DifSettings()
    cat: CatSettings = CatSettings()
    executor: ExecutorSettings = Field(
        default_factory=LocalSettings,
        description="where the models run: {type: local} (default), {type: ray, ...}, {type: slurm, ...}",
    )

    @field_validator("areas", "languages")
    @classmethod
    def _unique(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and len(set(value)) != len(value):
            raise ValueError("list the same value once")
        return value

    @model_validator(mode="after")
    def _unique_names(self) -> StudyConfig:
        names = [m.name for m in self.models if m.name]
        if len(set(names)) != len(names):
            raise ValueError(f"model names must differ; got {names}")
        return self

    @field_validator("predictions")
    @classmethod
    def _scored_method(cls, value: str, info: ValidationInfo) -> str:
        if value == "corrected" and info.data.get("method") == "generation":
            raise ValueError("'corrected' needs method first_token or log_prob (letter scores)")
        return value

    @property
    def prediction_sets(self) -> tuple[str, ...]:
        """``("raw",)``, ``("corrected",)`` or ``("raw", "corrected")``."""
        return ("raw", "corrected") if self.predictions == "both" else (self.predictions,)


def load_study_config(path: str | Path) -> StudyConfig:
    """Read and validate a study YAML (one ``error:`` line on bad input)."""
    path = Path(path)
    return validate_mapping(StudyConfig, read_yaml(path, "study config"), path)
