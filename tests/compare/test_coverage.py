"""Joint coverage of the shown statements (issue 43): a seeded, small run of docs/holm_coverage.py."""

from __future__ import annotations

import math

from bench.holm_coverage_sim import DESIGNS, covers, simulate_coverage
from enade_bench.metrics.simultaneous import ABOVE, INTERVAL, Statement


def test_statements_cover_jointly_on_both_designs() -> None:
    """150 exams each (the docs run 1,000): the Monte-Carlo interval of the joint coverage of Holm's
    statements reaches 0.95; with several rejections the old step-level display covered less."""
    small, several = (simulate_coverage(design, 150, seed=43) for design in DESIGNS)
    for result in (small, several):
        low, high = result.interval()
        assert low <= result.rate <= high and high >= 0.95 and result.rate >= 0.93, result
    assert several.mean_rejected > 3 and several.all_rejected == 0  # several, never all
    assert small.mean_rejected < 1
    assert several.covered >= several.step_covered


def test_covers_reads_each_kind_of_statement() -> None:
    bound = Statement(ABOVE, 0.0, 0.2, 0.99, 0.01, True)
    assert covers(bound, 0.1) and not covers(bound, 0.0) and not covers(bound, 0.3)
    interval = Statement(INTERVAL, -0.1, 0.2, 0.99, 0.01, False)
    assert covers(interval, 0.0) and covers(interval, -0.1) and not covers(interval, math.inf)
