"""One model of a study (``enade-bench study``): an experiment YAML or an inline block.

Every exam's study names its models the same way, so the block and its reading
(:func:`model_parts`) live here, and both the study every exam has
(:mod:`enade_bench.benchmarks.generic_study`) and ENEM's (:mod:`enade_bench.benchmarks.enem.study`)
read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from enade_bench.config import (
    ExperimentConfig,
    ModelConfig,
    PromptsConfig,
    StrictModel,
    load_config,
    resolve_input,
)
from enade_bench.errors import UserError, as_given
from enade_bench.file_names import SafeName
from enade_bench.results.summary import JsonObject

#: Names that label models and studies in tables and folder names.
NAME_PATTERN = r"^[A-Za-z0-9_.\-]+$"


class StudyModel(StrictModel):
    """One model of the study: an experiment YAML (``config``) or an inline ``model`` block."""

    config: str | None = Field(default=None, description="experiment YAML whose model/prompts are used")
    name: SafeName | None = Field(
        default=None, pattern=NAME_PATTERN, description="label in tables (default: derived)"
    )
    model: ModelConfig | None = None
    prompts: PromptsConfig | None = None
    batch_size: int | None = Field(default=None, ge=1, description="default: the experiment's, else 8")

    @model_validator(mode="before")
    @classmethod
    def _path_shorthand(cls, data: Any) -> Any:
        return {"config": data} if isinstance(data, str) else data

    @model_validator(mode="after")
    def _one_source(self) -> StudyModel:
        if (self.config is None) == (self.model is None):
            raise ValueError("give exactly one of 'config' (an experiment YAML) or 'model' (an inline block)")
        if self.model is not None and self.name is None:
            raise ValueError("an inline model needs a 'name' (its label in the report)")
        if self.model is not None and (problem := one_copy(self.model)):
            raise ValueError(problem)
        return self


def one_copy(model: ModelConfig) -> str | None:
    """Why a study cannot run ``model`` (``None``: it can): a study task runs one vLLM engine in
    one process, one copy of the model, so ``data_parallel_size`` above 1 is refused, never
    counted in the GPUs a task asks for; the executor runs several tasks at once instead."""
    vllm = model.vllm if model.type == "vllm" else None
    if vllm is None or vllm.data_parallel_size == 1:
        return None
    return (
        f"model.vllm.data_parallel_size: {vllm.data_parallel_size}, but a study task runs one model copy "
        "(one vLLM engine in one process); expected 1: the study's executor runs the tasks in parallel"
    )


def prompts_block(block: PromptsConfig | None, source: Path) -> JsonObject | None:
    """A prompts block with its own folder made absolute (the runs' configs live elsewhere)."""
    if block is None:
        return None
    data = block.model_dump()
    if block.dir is not None:
        data["dir"] = str(resolve_input(block.dir, source).resolve())
    return data


def read_model_config(entry: StudyModel, index: int, study_path: Path) -> ExperimentConfig:
    """The experiment YAML a study's model entry names (``models.<index>.config``), read and checked."""
    path = Path(as_given(resolve_input(str(entry.config), study_path).resolve()))  # messages: as given
    if not path.is_file():
        raise UserError(f"{study_path}: key 'models.{index}.config': experiment config {path} not found")
    exp = load_config(path)
    problem = one_copy(exp.model)
    if problem:
        raise UserError(f"{path}: {problem}")
    return exp


@dataclass(frozen=True)
class ModelParts:
    """What a study's model entry gives the experiment config of each of its runs.

    Attributes
    ----------
    label
        The model's label: its ``name``, else the experiment's.
    model
        The ``model`` block (secrets stay ``SecretStr``: masked only when written).
    prompts
        The ``prompts`` block, its folder made absolute (``None``: the exam's default prompt).
    batch_size
        The entry's ``batch_size``, else the experiment's (``None``: an inline model without one).
    experiment
        The experiment YAML the entry names, read and checked (``None``: an inline model).
    source
        Where the entry's paths resolve from: the experiment YAML, or the study file.
    """

    label: str
    model: JsonObject
    prompts: JsonObject | None
    batch_size: int | Literal["auto"] | None
    experiment: ExperimentConfig | None
    source: Path


def model_parts(entry: StudyModel, index: int, study_path: Path, entry_prompts: bool = True) -> ModelParts:
    """Read a study's model entry ``models.<index>``: inline, or the experiment YAML it names.

    An experiment's own ``prompts`` block wins; without one, the entry's ``prompts`` serve
    (``entry_prompts``; else the exam's default prompt).
    """
    if entry.model is not None:
        return ModelParts(
            str(entry.name),
            entry.model.model_dump(mode="python"),
            prompts_block(entry.prompts, study_path),
            entry.batch_size,
            None,
            study_path,
        )
    exp = read_model_config(entry, index, study_path)
    source = resolve_input(str(entry.config), study_path).resolve()
    own = exp.prompts if "prompts" in exp.model_fields_set else entry.prompts if entry_prompts else None
    return ModelParts(
        entry.name or exp.name,
        exp.model.model_dump(mode="python"),
        prompts_block(own, source),
        entry.batch_size or exp.evaluation.batch_size,
        exp,
        source,
    )
