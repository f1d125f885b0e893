"""The study YAML of any benchmark but ENEM (``enade-bench study STUDY.yaml``).

A study names its models (experiment YAMLs or inline blocks), one benchmark and its
questions (a ``dataset`` block, as in an experiment) or several exams (``exams:``, each a
``name``, its ``dataset`` and its ``benchmark`` where it differs), and optionally the strategies;
the benchmark decides the default strategies (ENADE and your own exams: S1–S6;
E-EVAL: the leaderboard settings ``ao0``, ``ao5``, ``cot5``).  Every model is put the
same questions with the same ``evaluation`` settings (only ``batch_size`` may differ
per model), so its runs can be compared question by question.

An ENEM study (``year:`` and areas, option shuffles, the verdict) keeps its own
config: :mod:`enade_bench.benchmarks.enem.study.config`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from enade_bench.config import DatasetConfig, EvaluationConfig, StrictModel, validate_mapping
from enade_bench.file_names import SafeName
from enade_bench.results.summary import JsonObject
from enade_bench.study.executors import ExecutorSettings, LocalSettings
from enade_bench.study.models import NAME_PATTERN, StudyModel


class CompareSettings(StrictModel):
    """The comparison across models that ends the study (``enade-bench compare``)."""

    adjust: Literal["holm", "bonferroni", "bh"] = Field(
        default="holm", description="multiplicity adjustment within the family (default holm)"
    )
    family: Literal["all", "strategy", "stratum"] = Field(
        default="strategy",
        description="pairs adjusted together, chosen before the results: the whole table (all), one strategy "
        "with all its strata (strategy, the default), or one cell (stratum); recorded in every output",
    )
    allow_errors: bool = Field(default=False, description="compare runs with error records (else refused)")
    alpha: float = Field(default=0.05, gt=0, lt=1, description="level of the tests and letters")
    by: list[str] = Field(
        default_factory=list, description="grouping fields compared separately (e.g. [year])"
    )


def _checked_dataset(value: JsonObject) -> JsonObject:
    """An experiment's dataset block without its benchmark (named once, beside it)."""
    if "benchmark" in value or "preset" in value:
        raise ValueError("name the benchmark once, at the top level ('benchmark:'), not in 'dataset'")
    DatasetConfig.model_validate({**value, "path": value.get("path", ".")})
    return value


class StudyExam(StrictModel):
    """One exam of a study listing several (``exams:``): its questions, and its benchmark where it
    differs from the study's."""

    name: SafeName = Field(pattern=NAME_PATTERN, description="the exam's label: runs/<model>/<name>/")
    dataset: JsonObject = Field(description="the questions: an experiment's dataset block")
    benchmark: str | None = Field(default=None, description="default: the study's 'benchmark'")

    @field_validator("dataset")
    @classmethod
    def _dataset(cls, value: JsonObject) -> JsonObject:
        return _checked_dataset(value)


class StudyConfig(StrictModel):
    """Many models on one or more exams: run or resume each model × exam, then compare the models."""

    name: SafeName = Field(pattern=NAME_PATTERN)
    description: str = ""
    benchmark: str = Field(description="the exam: enade, eeval, generic, a plug-in's name or folder")
    dataset: JsonObject | None = Field(
        default=None, description="the questions: an experiment's dataset block"
    )
    exams: list[StudyExam] | None = Field(
        default=None,
        min_length=1,
        description="several exams in place of 'dataset': each a name and its dataset (and benchmark)",
    )
    models: list[StudyModel] = Field(min_length=1)
    strategies: list[str] | None = Field(
        default=None, description="strategy or setting ids; default: the benchmark's study strategies"
    )
    evaluation: JsonObject = Field(
        default_factory=dict, description="evaluation settings shared by every model (an experiment's block)"
    )
    limit: int | None = Field(default=None, ge=1, description="only the first N questions (tests)")
    output: str = Field(
        description="study folder: runs/<model>/ and report/ are written below it; relative: from the study file's folder"
    )
    compare: CompareSettings = CompareSettings()
    #: Mappings validated as an experiment's blocks: an unknown key in them lists their keys.
    nested_models: ClassVar[dict[str, type[StrictModel]]] = {
        "dataset": DatasetConfig,
        "evaluation": EvaluationConfig,
    }
    executor: ExecutorSettings = Field(
        default_factory=LocalSettings,
        description="where the models run: {type: local} (default), {type: ray, ...}, {type: slurm, ...}",
    )

    @field_validator("dataset")
    @classmethod
    def _dataset(cls, value: JsonObject | None) -> JsonObject | None:
        return None if value is None else _checked_dataset(value)

    @field_validator("evaluation")
    @classmethod
    def _evaluation(cls, value: JsonObject) -> JsonObject:
        EvaluationConfig.model_validate(value)
        return value

    @model_validator(mode="after")
    def _limit_leaves_pairs(self) -> StudyConfig:
        if self.limit == 1 and len(self.models) > 1:
            raise ValueError(
                "limit: 1 question leaves no pair of models to compare (a paired comparison needs "
                "at least 2 questions); expected 2 or more"
            )
        return self

    @model_validator(mode="after")
    def _one_form(self) -> StudyConfig:
        if (self.dataset is None) == (self.exams is None):
            raise ValueError(
                "give the questions once: 'dataset' (one exam) or 'exams' (a list of name + dataset)"
            )
        names = [e.name.casefold() for e in self.exams or []]
        if len(set(names)) != len(names):
            raise ValueError(
                f"exams: names must differ (case aside); got {[e.name for e in self.exams or []]}"
            )
        return self

    @property
    def exam_list(self) -> list[StudyExam]:
        """The exams: ``exams``, or the one ``dataset`` as an exam with no name (runs/<model>/)."""
        if self.exams is not None:
            return self.exams
        assert self.dataset is not None
        return [StudyExam.model_construct(name="", dataset=self.dataset, benchmark=None)]

    @model_validator(mode="after")
    def _unique_names(self) -> StudyConfig:
        names = [m.name for m in self.models if m.name]
        if len(set(names)) != len(names):
            raise ValueError(f"model names must differ; got {names}")
        return self


def parse_study_config(data: Any, path: Path) -> StudyConfig:
    """Validate a study YAML's mapping (one ``error:`` line naming the file and key)."""
    return validate_mapping(StudyConfig, data, path)
