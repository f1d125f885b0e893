"""Render a question (possibly with shuffled options) into prompt parts.

A prompt is built once, as parts, and each backend turns the parts into what
its model reads: a chat template for instruct models (system + user, then the
assistant turn), plain text for base models, messages for API providers.

Layout of the user message (one-shot shown; few-shot repeats the example block)::

    {instruction}

    Exemplo:
    {example stem}
    A) …
    Resposta: C

    Agora responda:
    {stem}
    A) …
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from enade_bench.config import Method
from enade_bench.dataset.schema import LETTERS, Question
from enade_bench.errors import UserError, as_given
from enade_bench.prompts.templates import Example, PromptSet


@dataclass(frozen=True)
class PromptParts:
    """What a backend needs to render the prompt for its kind of model.

    Attributes
    ----------
    system
        System message (instruct/API models only).
    user
        The user message.
    answer_label
        ``Resposta:``; base models always end with it, instruct models only when
        ``prefill`` is set (scoring methods put it at the start of the assistant turn).
    prefill
        Start the assistant turn with ``answer_label`` (log_prob and first_token).
    base_suffix
        Text base models get after ``user`` instead of the answer label (chain of thought).
    """

    system: str | None
    user: str
    answer_label: str
    prefill: bool
    base_suffix: str | None = None

    def plain_text(self) -> str:
        """The prompt for a base model (no chat template)."""
        return f"{self.user}\n{self.base_suffix if self.base_suffix is not None else self.answer_label}"


def option_view(question: Question, permutation: Sequence[int] | None) -> tuple[str, ...]:
    """Options in display order (``permutation[i]`` = original index shown at ``i``)."""
    if permutation is None:
        return question.options
    return tuple(question.options[i] for i in permutation)


def valid_letters_text(letters: str, prompts: PromptSet) -> str:
    t = prompts.templates
    if len(letters) == 1:
        return letters
    return t.letters_separator.join(letters[:-1]) + t.letters_last_separator + letters[-1]


def _format_options(options: Sequence[str], prompts: PromptSet) -> str:
    fmt = prompts.templates.option_format
    return "\n".join(fmt.format(letter=LETTERS[i], text=text) for i, text in enumerate(options))


def _body(stem: str, options: Sequence[str] | None, prompts: PromptSet) -> str:
    """The question as shown: optional ``Questão:`` line, stem, optional ``Alternativas:``, options."""
    labels = prompts.templates.labels
    lines = [labels.question] if labels.question else []
    lines.append(stem)
    if options is not None:
        lines += [labels.options] if labels.options else []
        lines.append(_format_options(options, prompts))
    return "\n".join(lines)


def _example_block(example: Example, method: Method, prompts: PromptSet) -> str:
    labels = prompts.templates.labels
    if method == "log_prob":
        body = _body(example.stem, None, prompts)
        answer = example.options[example.answer]
    else:
        body = _body(example.stem, list(example.options.values()), prompts)
        answer = example.answer
    return f"{labels.example}\n{body}\n{labels.answer} {answer}"


def build_prompt(
    question: Question,
    options: Sequence[str],
    method: Method,
    n_examples: int,
    prompts: PromptSet,
    chain_of_thought: bool = False,
) -> PromptParts:
    """Build the prompt parts for one question as displayed (``options`` in display order)."""
    t = prompts.templates
    if n_examples > len(prompts.examples):
        where = as_given(prompts.source.get("examples", "prompts: no worked examples loaded"))
        raise UserError(f"{where}: {n_examples} worked examples needed, {len(prompts.examples)} defined")
    letters = valid_letters_text(LETTERS[: len(options)], prompts)
    if method == "log_prob":
        instruction = t.instruction_log_prob
        body = _body(question.stem, None, prompts)
    else:
        instruction = t.instruction_cot if chain_of_thought else t.instruction
        body = _body(question.stem, options, prompts)
    try:
        instruction = instruction.format(valid_letters=letters)
    except (KeyError, IndexError, ValueError) as exc:
        raise UserError(
            f"{as_given(prompts.source['templates'])}: instruction has an unknown placeholder ({exc}); "
            "allowed: {valid_letters}"
        ) from None
    blocks = [instruction.strip()] if instruction.strip() else []
    if n_examples:
        blocks += [_example_block(ex, method, prompts) for ex in prompts.examples[:n_examples]]
        blocks.append(f"{t.labels.now_answer}\n{body}")
    else:
        blocks.append(body)
    return PromptParts(
        system=t.system.strip().replace("{valid_letters}", letters) if t.system else None,
        user="\n\n".join(blocks),
        answer_label=t.labels.answer,
        prefill=method != "generation",
        base_suffix=t.labels.cot_start if chain_of_thought else None,
    )
