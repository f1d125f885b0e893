"""Load the prompt templates and worked examples from YAML (validated, strict)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from enade_bench.dataset.schema import LETTERS
from enade_bench.errors import UserError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Labels(_Strict):
    example: str = "Exemplo:"
    now_answer: str = "Agora responda:"
    answer: str = "Resposta:"
    cot_start: str = "Vamos pensar passo a passo."
    question: str = ""  # a line before the stem, e.g. "Questão:" (empty: none)
    options: str = ""  # a line before the options, e.g. "Alternativas:" (empty: none)


class Templates(_Strict):
    """The contents of a prompt template file (e.g. ``benchmarks/enade/prompts/team.yaml``)."""

    system: str | None = None
    instruction: str
    instruction_log_prob: str
    instruction_cot: str = ""
    option_format: str = "{letter}) {text}"
    letters_separator: str = ", "
    letters_last_separator: str = " ou "
    labels: Labels = Labels()

    @field_validator("option_format")
    @classmethod
    def _has_placeholders(cls, value: str) -> str:
        if "{letter}" not in value or "{text}" not in value:
            raise ValueError("option_format must contain {letter} and {text}")
        return value


class Example(_Strict):
    """One worked example for one/few-shot prompts."""

    id: str
    stem: str
    options: dict[str, str]
    answer: str
    rationale: str = ""

    @model_validator(mode="after")
    def _answer_is_an_option(self) -> Example:
        letters = "".join(self.options)
        if letters != LETTERS[: len(letters)] or len(letters) < 2:
            raise ValueError(f"options must be labelled A, B, C… in order, got {list(self.options)}")
        if self.answer not in self.options:
            raise ValueError(f"answer '{self.answer}' is not one of the options {letters}")
        return self


class Examples(_Strict):
    examples: list[Example]


class PromptSet(_Strict):
    """Templates plus examples, as loaded from a prompts directory."""

    templates: Templates
    examples: tuple[Example, ...]
    source: dict[str, str]


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: prompt file not found") from None
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not valid YAML ({getattr(exc, 'problem', exc)})") from None


def _validate(model: type[_Strict], data: Any, path: Path) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        raise UserError(f"{path}: key '{loc}': {msg.removeprefix('Value error, ')}") from None


def load_prompt_set(template_path: Path, examples_path: Path | None = None) -> PromptSet:
    """Read a template file and, when one- or few-shot strategies need them, worked examples.

    ``examples_path=None``: no worked examples (zero-shot strategies never read the file).
    """
    templates = _validate(Templates, _read_yaml(template_path), template_path)
    source = {"templates": str(template_path)}
    examples: tuple[Example, ...] = ()
    if examples_path is not None:
        examples = tuple(_validate(Examples, _read_yaml(examples_path), examples_path).examples)
        source["examples"] = str(examples_path)
    return PromptSet(templates=templates, examples=examples, source=source)
