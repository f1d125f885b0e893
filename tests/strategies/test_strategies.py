import pytest

from enade_bench.config import EvaluationConfig
from enade_bench.errors import UserError
from enade_bench.strategies.registry import STRATEGIES, from_config, get_strategy
from enade_bench.strategies.shuffle import permutation_for


def test_strategy_table_matches_the_design() -> None:
    table = {k: (s.method, s.shot, s.shuffle) for k, s in STRATEGIES.items() if k != "S7"}
    assert table == {
        "S1": ("generation", "zero", False),
        "S2": ("generation", "one", False),
        "S3": ("generation", "few", False),
        "S4": ("generation", "zero", True),
        "S5": ("log_prob", "zero", False),
        "S6": ("log_prob", "one", False),
    }
    assert STRATEGIES["S3"].n_examples == 2


def test_unknown_strategy_is_a_user_error() -> None:
    with pytest.raises(UserError, match="allowed: S1"):
        get_strategy("S9", EvaluationConfig())


def test_config_strategy_uses_shuffle_count() -> None:
    s = from_config(EvaluationConfig(method="first_token", shuffle_alternatives=True, n_shuffles=30))
    assert (s.method, s.shuffle, s.n_shuffles) == ("first_token", True, 30)


def test_permutations_are_seeded_per_question_and_shuffle() -> None:
    p = permutation_for(42, "q1", 5, 0)
    assert sorted(p) == [0, 1, 2, 3, 4]
    assert p == permutation_for(42, "q1", 5, 0)
    perms = {tuple(permutation_for(42, "q1", 5, k)) for k in range(30)}
    assert len(perms) > 15  # different shuffles differ
    assert {tuple(permutation_for(s, "q1", 5)) for s in range(20)} != {tuple(p)}
    assert sorted(permutation_for(7, "q2", 4, 3)) == [0, 1, 2, 3]
