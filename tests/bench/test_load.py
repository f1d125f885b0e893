"""The benchmark's fixed competing load and its options (no model)."""

import argparse
import time

import pytest

from bench.speed.cli import add_arguments, options_from
from bench.speed.load import WORKLOAD, CompetingLoad


def test_competing_load_runs_counts_and_stops() -> None:
    with CompetingLoad(1) as load:
        time.sleep(1.5)
        assert all(worker.is_alive() for worker in load._workers)
    assert not any(worker.is_alive() for worker in load._workers)
    assert load.summary is not None
    assert load.summary["processes"] == 1 and load.summary["workload"] == WORKLOAD
    assert load.summary["products_per_second_per_process"] > 0


def test_no_load_is_a_no_op() -> None:
    with CompetingLoad(0) as load:
        pass
    assert load.summary is None and load._workers == []


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args([*argv, "--no-lmeval"])


def test_bench_options_methods_and_load() -> None:
    opts = options_from(_parse("--methods", "log_prob_one_shot, first_token", "--competing-load", "2"))
    assert opts.methods == ("log_prob_one_shot", "first_token") and opts.competing_load == 2
    assert opts.prefix_cache and opts.tree
    opts = options_from(_parse("--no-prefix-cache", "--no-tree"))
    assert not opts.prefix_cache and not opts.tree


@pytest.mark.parametrize(
    ("argv", "message"),
    [(("--methods", "log_prob,s9"), "--methods: expected"), (("--competing-load", "-1"), "--competing-load")],
)
def test_bad_bench_options(argv: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        options_from(_parse(*argv))
