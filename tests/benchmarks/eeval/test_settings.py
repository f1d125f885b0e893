"""Setting ids: ao<k> / cot<k>, the answer-only method, the leaderboard default."""

from __future__ import annotations

import pytest

from enade_bench.benchmarks.eeval.settings import LEADERBOARD_SETTINGS, parse_setting, plan_settings
from enade_bench.config import EvaluationConfig
from enade_bench.errors import UserError


def test_leaderboard_settings_by_default() -> None:
    settings = plan_settings(None, EvaluationConfig())
    assert [s.id for s in settings] == list(LEADERBOARD_SETTINGS) == ["ao0", "ao5", "cot5"]
    assert [(s.kind, s.k, s.chain_of_thought) for s in settings] == [
        ("ao", 0, False),
        ("ao", 5, False),
        ("cot", 5, True),
    ]
    assert [s.n_examples for s in settings] == [0, 5, 5]


def test_answer_only_method_comes_from_config_or_suffix() -> None:
    first_token = EvaluationConfig(method="first_token")
    assert parse_setting("ao5", first_token).method == "first_token"
    assert parse_setting("ao5_gen", first_token).method == "generation"
    assert parse_setting("ao3_ft", EvaluationConfig()).method == "first_token"
    assert parse_setting("cot2", first_token).method == "generation"
    assert "benchmark" in parse_setting("ao0", first_token).__dict__


@pytest.mark.parametrize("bad", ["ao6", "cot", "S1", "cot5_ft", "ao-1"])
def test_bad_setting_is_a_user_error(bad: str) -> None:
    with pytest.raises(UserError, match="setting"):
        parse_setting(bad, EvaluationConfig())


def test_log_prob_is_not_an_answer_only_method() -> None:
    with pytest.raises(UserError, match="log_prob"):
        parse_setting("ao0", EvaluationConfig(method="log_prob"))
