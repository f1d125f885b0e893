"""Pydantic models of what a run writes: one record per (question, shuffle), one run file."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 1


class QuestionRecord(BaseModel):
    """The outcome of putting one question (in one option order) to the model.

    Letters in ``answer``, ``prediction`` and ``option_scores`` are the *original*
    letters of the item; ``displayed_prediction`` and ``predicted_position`` are
    in the order the model saw (they differ only when options were shuffled).
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    shuffle: int = 0
    year: int | None
    course: str
    component: str
    n_options: int
    answer: str
    prediction: str | None
    correct: bool
    method: str
    shot: str
    strategy: str | None
    permutation: list[int] | None
    answer_position: int
    predicted_position: int | None
    displayed_prediction: str | None
    option_scores: dict[str, float] | None = None
    score_details: dict[str, dict[str, float]] | None = None
    raw_output: str | None = None
    extraction_rule: str | None = None
    samples: list[dict[str, Any]] | None = None
    agreement: float | None = None
    error: str | None = None
    question_hash: str
    prompt_hash: str
    prompt: str
    #: How the prompt reached the model: ``chat_template_rendered`` (the tokenizer's chat
    #: template applied by us, prefill included), ``chat_messages`` (messages sent to a
    #: chat API, which applies its own template) or ``raw`` (plain text, no template).
    prompt_form: str | None = None
    extra: dict[str, Any] | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (self.id, self.shuffle)


class RunResult(BaseModel):
    """Everything a results file holds."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    experiment: str
    strategy: dict[str, Any]
    config: dict[str, Any]
    seed: int
    environment: dict[str, Any]
    model: dict[str, Any]
    dataset: dict[str, Any]
    prompts: dict[str, Any]
    totals: dict[str, Any]
    breakdowns: dict[str, Any]
    position_bias: dict[str, Any] | None
    records: list[QuestionRecord]
