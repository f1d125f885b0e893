"""The paired test's error rate on simulated clustered exams (2,000 replications each)."""

from __future__ import annotations

import pytest

from enade_bench.compare.calibration import simulate_rejections


@pytest.mark.parametrize("n_questions", [60, 150])
def test_equal_models_are_rejected_about_five_percent_of_the_time(n_questions: int) -> None:
    """30 shuffles per question, clusters of 2-4 questions, equal skill: rate within [0.03, 0.07];
    the naive pooled test (every record an independent question) rejects far more often."""
    row = simulate_rejections(0.0, n_questions=n_questions, replications=2000)
    assert 0.03 <= row.clustered <= 0.07, row
    assert row.naive > 0.2, row


def test_a_planted_difference_is_found_more_often_with_more_questions() -> None:
    small = simulate_rejections(0.4, n_questions=60, replications=2000)
    large = simulate_rejections(0.4, n_questions=240, replications=2000)
    assert small.mean_accuracy_diff > 0.04
    assert 0.07 < small.clustered < large.clustered
    assert large.clustered > 0.7
