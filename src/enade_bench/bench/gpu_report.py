"""The GPU arm's JSON: each strategy's figures, the report, and its atomic write (:mod:`.gpu`)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from enade_bench.bench.gpu_checks import ChunkProfile, Float32Check
from enade_bench.results.store import atomic_write_text


@dataclass
class StrategyFigures:
    """One strategy in one order: both engines' time, questions/s, ratio and agreement."""

    strategy: str
    questions: int
    ours_seconds: float
    ours_qps: float
    ours_tokens: int
    ours_model_calls: int
    lm_eval_seconds: float | None = None
    lm_eval_qps: float | None = None
    lm_eval_tokens: int | None = None
    #: ours questions/s over lm-eval's (its time inside the model methods).
    ratio: float | None = None
    #: Share of questions with the same prediction (generation: the same extracted letter).
    agreement: float | None = None
    #: Generation: share of questions whose generated texts are equal (after stripping).
    text_agreement: float | None = None
    max_abs_score_diff: float | None = None


@dataclass
class GpuReport:
    """The JSON of the GPU arm."""

    card: str
    dtype: str
    batch_size: int
    lmeval_batch_size: int | None
    model: dict[str, object]
    options: dict[str, object]
    n_questions: int
    started: str
    orders: dict[str, list[StrategyFigures]] = field(default_factory=dict)
    #: Table 1 (S1–S6) strategy time per order, ours, seconds.
    table1_seconds: dict[str, float] = field(default_factory=dict)
    float32_check: Float32Check | None = None
    profile: list[ChunkProfile] = field(default_factory=list)
    status: str = "running"


def write_report(path: Path, report: GpuReport) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(asdict(report), indent=2, default=str) + "\n")
