"""Typed pieces of a results file besides the records: strategy, totals, breakdowns, BPC, data.

Each model serialises to exactly the JSON layout written since schema version 1
(same keys, same order); optional blocks that a run does not produce are left
out of the file rather than written as ``null``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue


class Closed(BaseModel):
    """A block of a results file: a key the model does not know is an error (``extra="forbid"``)."""

    model_config = ConfigDict(extra="forbid")


def _absent(value: object) -> bool:
    return value is None


class StrategyInfo(Closed):
    """How the questions were put to the model (``strategy`` in a results file).

    ``kind``, ``k`` and ``benchmark`` are written only by E-EVAL settings.
    """

    id: str | None
    label: str
    method: str
    shot: str
    shuffle: bool
    n_shuffles: int = 1
    chain_of_thought: bool = False
    kind: str | None = Field(default=None, exclude_if=_absent)
    k: int | None = Field(default=None, exclude_if=_absent)
    benchmark: str | None = Field(default=None, exclude_if=_absent)


def _zero(value: object) -> bool:
    return value == 0


class AccuracyCell(Closed):
    """Accuracy of a group of records with its 95 % Wilson interval (one breakdown cell).

    Errors are never scores: ``n`` counts the records that got an answer or none
    (unanswered), not those that ended in an error (HTTP 401, a timeout…); those are
    ``n_errors`` (written only when not 0).  Files of schema version 3 and earlier
    counted errors in ``n`` as wrong answers; the report rescores them from their records.
    """

    n: int
    correct: int
    accuracy: float
    ci95: tuple[float, float]
    n_errors: int = Field(default=0, exclude_if=_zero)


class ExtractionShare(Closed):
    """How many answers one extraction rule found, and their share of the records."""

    count: int
    share: float


class PerShuffle(Closed):
    """Accuracy of each option shuffle, their mean and 2.5–97.5 percentile interval."""

    n_shuffles: int
    accuracy: list[float]
    mean: float
    interval95: tuple[float, float]


class Totals(AccuracyCell):
    """Overall accuracy plus unanswered, errors, extraction shares and per-shuffle spread.

    ``errors`` is the same count as ``n_errors`` (the name files have used since version 1).
    """

    unanswered: int
    errors: int
    n_questions: int
    extraction: dict[str, ExtractionShare] | None = Field(default=None, exclude_if=_absent)
    per_shuffle: PerShuffle | None = Field(default=None, exclude_if=_absent)


#: The value of one grouping field of a record: text, a whole number, or ``None`` (empty cell).
FieldValue = str | int | None

#: ``breakdowns[field][value]``: accuracy per value of each of the exam's grouping fields
#: (ENADE: year, course, component; ENEM: year, area, booklet, language; E-EVAL: subject,
#: level), then per number of options.
Breakdowns = dict[str, dict[str, AccuracyCell]]


class PositionBiasStratum(Closed):
    """Position bias (BPC) of the items with one number of options."""

    n: int
    n_answered: int
    positions: list[str]
    prediction_counts: list[int]
    prediction_shares: list[float] | None
    answer_shares: list[float]
    bpc_tvd: float
    chi2: float
    df: int
    p_value: float


#: ``position_bias[k]`` for ``k`` options (``"4"``, ``"5"``…).
PositionBias = dict[str, PositionBiasStratum]


class DatasetInfo(Closed):
    """Which data files were read and what the filters kept."""

    sources: list[dict[str, str]]
    filter_counts: dict[str, int]
    invalid_rows: list[str]
    #: Each question ``dataset.stem_in_option`` changed, left out or could not repair, and how
    #: (:class:`~enade_bench.dataset.fixes.Fix`; absent from the file when none).
    fixed_rows: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)
    n_evaluated: int
    #: The exam-file lint's findings on the questions run: question id -> the checks that flagged it
    #: (:mod:`enade_bench.dataset.lint`; absent from the file when none did).
    lint: dict[str, list[str]] = Field(default_factory=dict, exclude_if=lambda v: not v)


class PromptFile(Closed):
    """A prompt file as read for the run: path, sha256 and full text."""

    path: str
    sha256: str
    text: str


class LogInfo(Closed):
    """Where a results file came from: its intermediate log, as it was when the file was written.

    ``report`` compares the log next to the results file with this: a log that changed
    afterwards (a resumed or ``--no-resume`` rerun that was killed) means the results file
    may be stale.
    """

    #: The log's file name, in the results file's folder.
    path: str
    #: The resume fingerprint of the run (the log's header holds the same).
    fingerprint: str
    #: sha256 of the log's bytes when the results were written (``None``: no log was kept,
    #: ``output.save_intermediate: false``).
    sha256: str | None


class HalvedChunk(Closed):
    """A chunk that ran out of device memory and ran again in pieces (``evaluation.batch_size: auto``)."""

    chunk: int = Field(description="the chunk's index in the plan")
    rows: int = Field(description="its items")
    pieces: list[int] = Field(description="the sizes it ran in, in order")


class LiveTiming(Closed):
    """``{name}_{strategy}_timing.json`` of a live run: how long the computed part took."""

    seconds: float
    items_computed: int
    items_per_second: float | None
    #: The batch the chunks were cut to (``evaluation.batch_size``, ``auto`` resolved).
    batch_size: int | None = None
    #: Chunks that ran out of memory and were run again in halves; None: none.
    halved: list[HalvedChunk] | None = None
    #: The HF backend's attention path at the end (``flex``, ``sdpa``, or ``flex (sdpa where flex failed:
    #: <graph>: …)`` naming each compiled graph that fell back); None: a backend without one.
    attention: str | None = None


class BatchTiming(Closed):
    """``{name}_{strategy}_timing.json`` of a batch run: what was computed, in which jobs."""

    mode: str = "batch"
    items_computed: int
    jobs: list[str]


#: Free-form JSON object (config dump, environment, model identity).
JsonObject = dict[str, JsonValue]


def as_object(value: JsonValue) -> JsonObject:
    """``value`` if it is a JSON object, else an empty one (a key a free-form block lacks)."""
    return value if isinstance(value, dict) else {}
