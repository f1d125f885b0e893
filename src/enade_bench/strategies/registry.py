"""The strategy table: which method, how many worked examples, whether to shuffle.

| id | method     | shot | shuffle | reasoning |
|----|------------|------|---------|-----------|
| S1 | generation | zero | no      | no        |
| S2 | generation | one  | no      | no        |
| S3 | generation | few  | no      | no        |
| S4 | generation | zero | yes     | no        |
| S5 | log_prob   | zero | no      | no        |
| S6 | log_prob   | one  | no      | no        |
| S7 | generation | zero | no      | yes (chain of thought) |
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from enade_bench.config import EvaluationConfig, Method
from enade_bench.errors import UserError

Shot = Literal["zero", "one", "few"]
SHOT_COUNT: dict[str, int] = {"zero": 0, "one": 1, "few": 2}


@dataclass(frozen=True)
class Strategy:
    """One way of putting a question to a model."""

    id: str | None
    method: Method
    shot: Shot
    shuffle: bool
    n_shuffles: int = 1
    chain_of_thought: bool = False

    @property
    def n_examples(self) -> int:
        return SHOT_COUNT[self.shot]

    @property
    def label(self) -> str:
        """Human-readable description, e.g. ``generation, zero-shot, shuffled``."""
        parts = [self.method, f"{self.shot}-shot"]
        if self.shuffle:
            parts.append("shuffled" if self.n_shuffles == 1 else f"{self.n_shuffles} shuffles")
        if self.chain_of_thought:
            parts.append("chain of thought")
        return ", ".join(parts)


STRATEGIES: dict[str, Strategy] = {
    "S1": Strategy("S1", "generation", "zero", False),
    "S2": Strategy("S2", "generation", "one", False),
    "S3": Strategy("S3", "generation", "few", False),
    "S4": Strategy("S4", "generation", "zero", True),
    "S5": Strategy("S5", "log_prob", "zero", False),
    "S6": Strategy("S6", "log_prob", "one", False),
    "S7": Strategy("S7", "generation", "zero", False, chain_of_thought=True),
}
#: The six strategies run by ``--all-strategies`` (S7 is opt-in: it is slow).
ALL_STRATEGIES = ("S1", "S2", "S3", "S4", "S5", "S6")


def get_strategy(strategy_id: str, evaluation: EvaluationConfig) -> Strategy:
    """Look up a strategy; shuffled strategies take ``n_shuffles`` from the config."""
    key = strategy_id.upper()
    if key not in STRATEGIES:
        raise UserError(f"unknown strategy '{strategy_id}' (allowed: {', '.join(STRATEGIES)})")
    strategy = STRATEGIES[key]
    if strategy.shuffle:
        strategy = replace(strategy, n_shuffles=evaluation.n_shuffles)
    return strategy


def from_config(evaluation: EvaluationConfig) -> Strategy:
    """The strategy a config describes when no ``--strategy`` is named."""
    n_shuffles = evaluation.n_shuffles if evaluation.shuffle_alternatives else 1
    return Strategy(
        None,
        evaluation.resolved_method,
        evaluation.shot_type,
        evaluation.shuffle_alternatives,
        n_shuffles,
    )
