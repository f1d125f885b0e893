"""The two E-EVAL prompt templates (answer-only, chain-of-thought) and the prompt builder.

The templates live in YAML files (``prompts/eeval/answer_only.yaml`` and
``prompts/eeval/chain_of_thought.yaml``).  A prompt is::

    {header}{sep}{demo 1}{sep}…{demo k}{sep}{query}

where a demonstration is ``{question}\\n{answer_prefix}{demo_answer}`` and the query
is ``{question}``; the model's turn then starts with ``answer_prefix`` (``答案：``, or
``答案：让我们一步一步思考，\\n1. `` for chain of thought).  In core terms the
query is :attr:`PromptParts.user` and ``answer_prefix`` is the answer label,
always prefilled: base models read ``user + "\\n" + answer_prefix`` (the
benchmark's text exactly), chat models get ``user`` as the user turn and
``answer_prefix`` at the start of the assistant turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, field_validator

from enade_bench.benchmarks.eeval.loader import Demo
from enade_bench.benchmarks.eeval.subjects import Subject
from enade_bench.dataset.schema import LETTERS
from enade_bench.errors import UserError
from enade_bench.prompts.builder import PromptParts
from enade_bench.prompts.templates import _read_yaml, _validate

TEMPLATE_FILES = {"ao": "answer_only.yaml", "cot": "chain_of_thought.yaml"}
MAX_SHOTS = 5


class EEvalTemplate(BaseModel):
    """One E-EVAL prompt file (unknown keys are an error)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system: str | None = None
    header: str
    question: str = "{stem}\n{options}"
    option: str = "{letter}. {text}"
    answer_prefix: str
    demo_answer: str
    separator: str = "\n\n"

    @field_validator("option")
    @classmethod
    def _option_placeholders(cls, value: str) -> str:
        if "{letter}" not in value or "{text}" not in value:
            raise ValueError("option must contain {letter} and {text}")
        return value


def prompts_folder(directory: Path) -> Path:
    """The folder holding the E-EVAL templates: ``directory`` or its ``eeval`` subfolder."""
    if (directory / TEMPLATE_FILES["ao"]).exists():
        return directory
    return directory / "eeval"


def load_templates(directory: Path) -> tuple[dict[str, EEvalTemplate], dict[str, str]]:
    """Both templates (keys ``ao``, ``cot``) and the path of each file."""
    folder = prompts_folder(directory)
    templates: dict[str, EEvalTemplate] = {}
    paths: dict[str, str] = {}
    for kind, name in TEMPLATE_FILES.items():
        path = folder / name
        templates[kind] = _validate(EEvalTemplate, _read_yaml(path), path)  # type: ignore[arg-type]
        paths[f"eeval_{kind}"] = str(path)
        _check_placeholders(templates[kind], path)
    return templates, paths


def _fill(template: str, where: str, **values: str) -> str:
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        raise UserError(f"{where}: unknown placeholder {exc} (allowed: {', '.join(values)})") from None


def _check_placeholders(t: EEvalTemplate, path: Path) -> None:
    _fill(t.header, f"{path}: key 'header'", subject="")
    _fill(t.question, f"{path}: key 'question'", stem="", options="")
    _fill(t.option, f"{path}: key 'option'", letter="", text="")
    _fill(t.demo_answer, f"{path}: key 'demo_answer'", answer="", explanation="")


def format_question(t: EEvalTemplate, stem: str, options: Sequence[str]) -> str:
    """A question with its lettered options (an empty stem shows the options alone)."""
    lines = "\n".join(t.option.format(letter=LETTERS[i], text=text) for i, text in enumerate(options))
    block = t.question.format(stem=stem, options=lines)
    return block if stem else block.lstrip("\n")


def format_demo(t: EEvalTemplate, demo: Demo) -> str:
    """One worked demonstration: question, options, answer prefix and answer (or reasoning)."""
    answer = t.demo_answer.format(answer=demo.answer, explanation=" ".join(demo.explanation.split()))
    return f"{format_question(t, demo.stem, demo.options)}\n{t.answer_prefix}{answer}"


def build_eeval_prompt(
    t: EEvalTemplate,
    subject: Subject,
    stem: str,
    options: Sequence[str],
    demos: Sequence[Demo],
    k: int,
) -> PromptParts:
    """The prompt for one question with ``k`` demonstrations of the same subject.

    Parameters
    ----------
    t
        The answer-only or chain-of-thought template.
    subject
        The question's subject (its Chinese name fills ``{subject}``).
    stem, options
        The question as displayed.
    demos
        The subject's dev-split demonstrations; the first ``k`` are used.
    k
        Number of demonstrations, 0 to 5.
    """
    if not 0 <= k <= MAX_SHOTS:
        raise UserError(f"E-EVAL k-shot: k must be 0..{MAX_SHOTS}, got {k}")
    if k > len(demos):
        raise UserError(f"E-EVAL {subject.key}: {k} demonstrations needed, {len(demos)} in its dev split")
    blocks = [t.header.format(subject=subject.name_zh)]
    blocks += [format_demo(t, demo) for demo in demos[:k]]
    blocks.append(format_question(t, stem, options))
    return PromptParts(
        system=t.system.strip() if t.system else None,
        user=t.separator.join(blocks),
        answer_label=t.answer_prefix,
        prefill=True,
    )
