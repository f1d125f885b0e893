"""Prompt sets from YAML (validated, strict): templates, worked examples, the set a config asks for."""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from enade_bench.config import resolve_input
from enade_bench.dataset.schema import LETTERS
from enade_bench.errors import UserError, as_given
from enade_bench.regular_file import read_text
from enade_bench.yaml_io import safe_load

if TYPE_CHECKING:
    from enade_bench.config import ExperimentConfig
    from enade_bench.strategies.registry import Strategy


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
    #: Why the instructions do not name the valid letters ({valid_letters}); without it, an
    #: instruction that asks for a letter without saying which ones is an error.
    without_valid_letters: str | None = None

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


#: The placeholders each template text may hold (``{{`` and ``}}`` write a literal brace).
PLACEHOLDERS: dict[str, frozenset[str]] = {
    "instruction": frozenset({"valid_letters"}),
    "instruction_log_prob": frozenset({"valid_letters"}),
    "instruction_cot": frozenset({"valid_letters"}),
    "option_format": frozenset({"letter", "text"}),
}


def _placeholders(text: str, key: str, path: Path) -> set[str]:
    """The placeholders ``text`` holds; an error for one not allowed under ``key``."""
    allowed = PLACEHOLDERS[key]
    shown = ", ".join(f"{{{name}}}" for name in sorted(allowed))
    hint = "to write a literal brace (e.g. JSON), double it: {{ and }}"
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]
    except ValueError as exc:
        raise UserError(
            f"{as_given(path)}: key '{key}': {exc} (allowed placeholders: {shown}); {hint}"
        ) from None
    for name in fields:
        if name.split(".")[0].split("[")[0] not in allowed:
            looks_json = not name.isidentifier()
            raise UserError(
                f"{as_given(path)}: key '{key}': unknown placeholder {{{name.strip()[:40]}}} (allowed: {shown}); "
                + (hint if looks_json else f"{hint}, or use one of the allowed names")
            )
    return set(fields)


def check_templates(templates: Templates, path: Path) -> None:
    """Placeholders a prompt file's texts hold, checked before any model loads.

    Every placeholder must be one the builder fills (:data:`PLACEHOLDERS`); JSON or
    other literal braces must be doubled. An instruction that asks for a letter
    (``instruction``, and ``instruction_cot`` when set) must name the valid letters with
    ``{valid_letters}`` (here or in ``system``) unless ``without_valid_letters`` says why.
    """
    for key in PLACEHOLDERS:
        _placeholders(getattr(templates, key), key, path)
    if templates.without_valid_letters is not None and templates.without_valid_letters.strip():
        return
    in_system = "{valid_letters}" in (templates.system or "")
    for key in ("instruction", "instruction_cot"):
        text = getattr(templates, key)
        if (
            (key == "instruction" or text.strip())
            and not in_system
            and "valid_letters" not in _placeholders(text, key, path)
        ):
            raise UserError(
                f"{as_given(path)}: key '{key}': the instruction does not name the valid letters; add "
                "{valid_letters} (e.g. 'A, B, C, D ou E'), or say why not in "
                "without_valid_letters: <reason>"
            )


def _read_yaml(path: Path) -> Any:
    try:
        return safe_load(read_text(path))
    except FileNotFoundError:
        raise UserError(f"{as_given(path)}: prompt file not found") from None
    except UnicodeDecodeError as exc:
        raise UserError(
            f"{as_given(path)}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
            "save the prompt file as UTF-8"
        ) from None
    except OSError as exc:
        raise UserError(f"{as_given(path)}: cannot read the prompt file ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise UserError(f"{as_given(path)}: not valid YAML ({getattr(exc, 'problem', exc)})") from None


#: How a worked-examples file starts (its error messages show it).
EXAMPLES_SHAPE = "examples: [{id: ex1, stem: '…', options: {A: '…', B: '…'}, answer: A}]"


def _validate(model: type[_Strict], data: Any, path: Path) -> Any:
    if not isinstance(data, dict):
        found = {list: "a list", type(None): "an empty file"}.get(type(data), f"a {type(data).__name__}")
        expected = (
            f"a top-level 'examples:' key holding the list, e.g. {EXAMPLES_SHAPE}"
            if model is Examples
            else "a mapping of keys (instruction, option_format, …)"
        )
        raise UserError(f"{as_given(path)}: the file holds {found} at the top level; expected {expected}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        raise UserError(f"{as_given(path)}: key '{loc}': {msg.removeprefix('Value error, ')}") from None


def load_prompt_set(template_path: Path, examples_path: Path | None = None) -> PromptSet:
    """Read a template file and, when one- or few-shot strategies need them, worked examples.

    ``examples_path=None``: no worked examples (zero-shot strategies never read the file).
    """
    templates = _validate(Templates, _read_yaml(template_path), template_path)
    check_templates(templates, template_path)
    source = {"templates": str(template_path)}
    examples: tuple[Example, ...] = ()
    if examples_path is not None:
        examples = tuple(_validate(Examples, _read_yaml(examples_path), examples_path).examples)
        source["examples"] = str(examples_path)
    return PromptSet(templates=templates, examples=examples, source=source)


def prompt_set_for(
    cfg: ExperimentConfig,
    source: Path,
    strategies: Sequence[Strategy],
    shipped: Mapping[str, Path],
    default: Mapping[str, str],
    examples: Mapping[str, Path],
) -> PromptSet:
    """The prompt set a config asks for; worked examples only when a strategy uses them.

    ``prompts.dir`` names the user's own folder (template and examples there);
    otherwise ``prompts.preset`` (or ``default``, the benchmark's in the exam's language)
    picks one of the ``shipped`` templates, and the shipped ``examples`` in that language
    serve one- and few-shot strategies.

    Raises
    ------
    UserError
        A missing folder, an unknown preset, no prompt or examples shipped in the exam's
        language, fewer worked examples than a strategy needs, or a bad prompt file.
    """
    block, language = cfg.prompts, cfg.dataset.language
    needed = max((s.n_examples for s in strategies), default=0)
    if block.dir is not None:
        folder = resolve_input(block.dir, source)
        if not folder.is_dir():
            raise UserError(f"{source}: prompts.dir: folder not found '{as_given(folder)}'")
        loaded = load_prompt_set(folder / block.template, folder / block.examples if needed else None)
        return _enough_examples(loaded, strategies)
    name = block.preset or default.get(language)
    if name is None:
        raise UserError(
            f"{source}: dataset.language: this benchmark ships no prompt in '{language}' "
            f"(it has {', '.join(default) or 'none'}); set prompts.preset or prompts.dir"
        )
    if name not in shipped:
        known = ", ".join(sorted(shipped)) or "none for this benchmark"
        raise UserError(f"{source}: prompts.preset: unknown '{name}' (known: {known})")
    found = examples.get(language) if needed else None
    if needed and found is None:
        raise UserError(
            f"{source}: a strategy with {needed} worked example(s) needs examples: this benchmark "
            f"ships none in '{language}'; set prompts.dir to a folder with {block.examples}"
        )
    return _enough_examples(load_prompt_set(shipped[name], found), strategies)


def _enough_examples(prompts: PromptSet, strategies: Sequence[Strategy]) -> PromptSet:
    """``prompts``, when it holds the worked examples every strategy asked for needs."""
    short = [s for s in strategies if s.n_examples > len(prompts.examples)]
    if short:
        where = as_given(prompts.source.get("examples", "prompts: no worked examples loaded"))
        needs = ", ".join(f"{s.id or s.shot} needs {s.n_examples}" for s in short)
        raise UserError(f"{where}: {len(prompts.examples)} worked example(s) defined; {needs}")
    return prompts
