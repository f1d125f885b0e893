"""The generation arm's results per strategy (:mod:`.generation`), written to the report as their fields."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class GenerationSide:
    """One engine's totals over a strategy's questions."""

    questions: int = 0
    seconds: float = 0.0
    #: lm-eval: time inside ``generate_until``; ours: the executor calls (= ``seconds``).
    model_seconds: float = 0.0
    #: Positions fed to the model (prompt and generated tokens, padding included).
    tokens: int = 0
    model_calls: int = 0
    peak_rss_mb: float = 0.0


@dataclass(frozen=True)
class GenerationDifference:
    """A question where the engines' texts differ."""

    id: str
    ours: str
    lm_eval: str
    ours_letter: str | None
    lm_eval_letter: str | None


@dataclass(frozen=True)
class GenerationStrategyResult:
    """Both engines on one strategy: agreement, tokens and time."""

    strategy: str
    n: int
    text_agreement: float
    letter_agreement: float
    contexts_identical: int
    prompt_tokens_identical: int
    #: Prompt tokens of the questions (our encoding; the same text lm-eval encodes).
    prompt_tokens: int
    ours: GenerationSide
    lm_eval: GenerationSide
    #: lm-eval model time / our time (the speed-up), and end to end.
    speedup_model_time: float | None
    speedup_end_to_end: float | None
    differences: list[GenerationDifference] = field(default_factory=list)
