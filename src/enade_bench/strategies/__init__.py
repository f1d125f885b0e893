"""Evaluation strategies S1–S7 and seeded option shuffling."""

from enade_bench.strategies.registry import STRATEGIES, Strategy, from_config, get_strategy
from enade_bench.strategies.shuffle import permutation_for

__all__ = ["STRATEGIES", "Strategy", "from_config", "get_strategy", "permutation_for"]
