import math

import pytest

from enade_bench.scoring.choice import choose_first_token, choose_log_prob


def test_log_prob_uses_the_mean_not_the_sum() -> None:
    # A long option with a lower sum but a higher mean per token wins.
    result = choose_log_prob([-8.0, -3.0], [8, 1])
    assert result.letter == "A"
    assert result.scores == {"A": -1.0, "B": -3.0}
    assert result.details["A"] == {"sum_logprob": -8.0, "n_tokens": 8.0}


def test_log_prob_ties_take_the_first_option() -> None:
    assert choose_log_prob([-2.0, -2.0, -5.0], [1, 1, 1]).letter == "A"


def test_first_token_renormalises_over_valid_letters() -> None:
    lps = [math.log(0.1), math.log(0.3), math.log(0.05), math.log(0.05)]
    result = choose_first_token(lps)
    assert result.letter == "B"
    assert result.scores["B"] == pytest.approx(0.6)
    assert sum(result.scores.values()) == pytest.approx(1.0)


def test_bad_inputs_raise() -> None:
    with pytest.raises(ValueError):
        choose_log_prob([-1.0], [1, 2])
    with pytest.raises(ValueError):
        choose_first_token([])
