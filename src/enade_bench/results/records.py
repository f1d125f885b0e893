"""Pydantic models of what a run writes: one record per (question, shuffle), one run file."""

from __future__ import annotations

from typing import TypeVar

from pydantic import Field, JsonValue, field_validator

from enade_bench.masking import mask_config, mask_json
from enade_bench.results.identity import ModelIdentity
from enade_bench.results.summary import (
    Breakdowns,
    Closed,
    DatasetInfo,
    FieldValue,
    JsonObject,
    LogInfo,
    PositionBias,
    PromptFile,
    StrategyInfo,
    Totals,
)

#: 2: the exam's own grouping ``fields`` replace ``year``/``course``/``component``.
#: 3: ``model`` is a typed :class:`~enade_bench.results.identity.ModelIdentity`.
#: 4: errors are not scored (``n`` leaves them out, ``n_errors`` counts them), ``complete``
#: says whether every record got an answer or none, ``log`` names the intermediate log.
SCHEMA_VERSION = 4
_N = TypeVar("_N", int, float)


class Sample(Closed):
    """One sampled generation of a record (several samples: majority vote)."""

    text: str
    prediction: str | None
    rule: str


class Truncation(Closed):
    """How a prompt longer than the model's context was cut (``evaluation.truncate``)."""

    #: The policy that cut it (``left``: the start dropped, the end with the question kept).
    policy: str
    #: Tokens of the whole prompt, and the tokens the model read of it.
    prompt_tokens: int
    kept_tokens: int
    #: The model's context window (``evaluation.context_limit`` when smaller).
    context: int


class Usage(Closed):
    """Tokens and seconds of one record, as far as its backend measured them (absent: not measured).

    API backends read the provider's documented counts from each response (OpenAI's
    ``usage.prompt_tokens`` / ``completion_tokens``, Anthropic's ``usage.input_tokens`` (with
    its cache reads and writes) / ``output_tokens``, Gemini's ``usage_metadata.prompt_token_count``
    / ``candidates_token_count`` + ``thoughts_token_count``) and time each request; a record of
    several samples adds its requests' counts and seconds.  Local backends count the prompt's
    tokens as the model reads it (once per record) and every token generated, an end-of-sequence
    token included; they record no seconds (a batched chunk has no per-record time: the run's
    wall time is in ``{stem}_timing.json``).
    """

    input_tokens: int | None = Field(default=None, exclude_if=lambda v: v is None)
    output_tokens: int | None = Field(default=None, exclude_if=lambda v: v is None)
    #: The wall time of the record's successful requests, sent to answer received, added over
    #: its samples (retries, waits for the rate budget and concurrency not counted).
    seconds: float | None = Field(default=None, exclude_if=lambda v: v is None)

    def __add__(self, other: Usage) -> Usage:
        """The counts of two requests of one record added (``None`` where neither measured it)."""
        return Usage(
            input_tokens=_add(self.input_tokens, other.input_tokens),
            output_tokens=_add(self.output_tokens, other.output_tokens),
            seconds=_add(self.seconds, other.seconds),
        )


def _add(a: _N | None, b: _N | None) -> _N | None:
    return b if a is None else a if b is None else a + b


class QuestionRecord(Closed):
    """The outcome of putting one question (in one option order) to the model.

    Letters in ``answer``, ``prediction`` and ``option_scores`` are the *original*
    letters of the item; ``displayed_prediction`` and ``predicted_position`` are
    in the order the model saw (they differ only when options were shuffled).
    """

    id: str
    shuffle: int = 0
    #: The exam's grouping fields under their own names, in the order its preset declares
    #: (ENADE ``year, course, component``; ENEM ``year, area, booklet, language,
    #: question_number``; E-EVAL ``subject, level``).
    fields: dict[str, FieldValue]
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
    samples: list[Sample] | None = None
    agreement: float | None = None
    error: str | None = None
    #: Which try this record is (absent: the first). A record that ended in an error is asked
    #: again by a resumed run, up to :data:`enade_bench.runner.retry.MAX_ATTEMPTS` tries.
    attempt: int | None = Field(default=None, exclude_if=lambda v: v is None)
    #: The errors of the earlier tries, oldest first (absent: there were none).
    error_history: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    #: Set when the prompt was cut to fit the context (``evaluation.truncate: left``).
    truncation: Truncation | None = Field(default=None, exclude_if=lambda v: v is None)
    question_hash: str
    #: The question's stem as the data gives it (absent in files written before issue 32).
    stem: str | None = Field(default=None, exclude_if=lambda v: v is None)
    #: Its option texts in the original order, A first (absent in files written before issue 62).
    options: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    prompt_hash: str
    prompt: str
    #: How the prompt reached the model: ``chat_template_rendered`` (the tokenizer's chat
    #: template applied by us, prefill included), ``chat_messages`` (messages sent to a
    #: chat API, which applies its own template) or ``raw`` (plain text, no template).
    prompt_form: str | None = Field(default=None, exclude_if=lambda v: v is None)
    #: The question's shared stimulus (:mod:`enade_bench.dataset.clusters`); absent: none.
    cluster: str | None = Field(default=None, exclude_if=lambda v: v is None)
    #: Tokens and seconds where the backend measured them (absent: not measured).
    usage: Usage | None = Field(default=None, exclude_if=lambda v: v is None)
    extra: dict[str, JsonValue] | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (self.id, self.shuffle)

    @field_validator("error", "error_history")
    @classmethod
    def _no_secret_in_errors(cls, value: str | list[str] | None) -> str | list[str] | None:
        """An error echoed by a server never shows a secret (:func:`~enade_bench.masking.mask`)."""
        return mask_json(value)


class RunResult(Closed):
    """Everything a results file holds."""

    schema_version: int = SCHEMA_VERSION
    experiment: str
    strategy: StrategyInfo
    #: False when some record ended in an error (``totals.errors``): the run is incomplete,
    #: its accuracy covers only the questions that got an answer (or none).
    complete: bool = True
    #: The intermediate log the results were made from (absent in files before version 4).
    log: LogInfo | None = Field(default=None, exclude_if=lambda v: v is None)
    config: JsonObject
    seed: int
    environment: JsonObject
    model: ModelIdentity
    dataset: DatasetInfo
    prompts: dict[str, PromptFile]
    totals: Totals
    breakdowns: Breakdowns
    position_bias: PositionBias | None
    records: list[QuestionRecord]

    @field_validator("config")
    @classmethod
    def _no_credentials(cls, value: JsonObject) -> JsonObject:
        """Secrets masked (:func:`~enade_bench.masking.mask_config`), also in files made elsewhere.

        An older version, or another program, may have written ``api_key: sk-…`` or a URL with
        its password into the config: the values of secret-looking keys and every credential
        shown by its shape are ``***`` once read.
        """
        return mask_config(value)
