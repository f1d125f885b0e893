"""Smoke test of the performance benchmark on a few ENEM 2022 questions with the real model.

No timing is asserted (the machine is shared); the test checks that the run
completes, the JSON has every section, and both engines score the same
quantities.  The lm-eval part is skipped when lm-eval is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT, require_shared

pytestmark = pytest.mark.slow

HAS_LMEVAL = importlib.util.find_spec("lm_eval") is not None


def _questions() -> str:
    folder = require_shared("enem", "questions", "pt-br")
    return str(folder / "ENEM_2022_*.csv")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One bench run for the module: our methods, shuffles and generation, and lm-eval's side where
    it is installed (each bench run spawns its engines and loads the model in each)."""
    from bench.__main__ import main

    out = tmp_path_factory.mktemp("bench") / "bench.json"
    args = [
        "--questions",
        _questions(),
        "--out",
        str(out),
        "--block",
        "2",
        "--limit",
        "2",
        "--threads",
        "1",
        "--shuffle-questions",
        "1",
        "--n-shuffles",
        "3",
        "--gen-questions",
        "2",
        "--gen-batch",
        "2",
        "--max-new-tokens",
        "2",
        *([] if HAS_LMEVAL else ["--no-lmeval"]),
    ]
    assert main(args) == 0
    return json.loads(out.read_text())


def test_bench_ours(report: dict) -> None:
    """Our methods, shuffles and generation."""
    assert report["status"] == "complete"
    assert report["machine"]["threads"] == 1  # a core per xdist worker (two threads each thrash)
    for method in ("log_prob", "first_token"):
        ours = report["scoring"][method]["ours"]
        assert ours["questions"] == 2 and ours["tokens"] > 0
    shuffles = report["shuffles"]
    assert shuffles["shared"]["items"] == shuffles["independent"]["items"] == 3
    # the stem is shared across shuffles: fewer tokens through the model
    assert shuffles["shared"]["tokens"] < shuffles["independent"]["tokens"]
    assert shuffles["prediction_agreement"] == 1.0
    assert report["generation"]["batch_1"]["items"] == report["generation"]["batch_2"]["items"] == 2
    assert report["memory"]["ours"]["max_rss_mb"] > 0
    assert "peak_memory_mb" in report["targets"]


@pytest.mark.skipif(not HAS_LMEVAL, reason="lm-eval is not installed (pip install -e '.[bench]')")
def test_bench_against_lm_eval(report: dict) -> None:
    """Both engines on the same 2 questions: same prompts, same scores, same predictions."""
    assert report["machine"]["lm_eval"] and report["lm_eval"]
    for method in ("log_prob", "first_token"):
        sides = report["scoring"][method]
        assert sides["lm_eval"]["contexts_identical"] == 2  # lm-eval saw our exact prompts
        agreement = sides["agreement"]
        assert agreement["n"] == 2
        assert agreement["max_abs_score_diff"] < 1e-2
        assert agreement["token_count_mismatches"] == 0
        assert agreement["agreement"] == 1.0
        assert sides["ours"]["tokens"] < sides["lm_eval"]["tokens"] or method == "first_token"


def test_bench_module_help() -> None:
    """``python -m bench --help`` works from the checkout's root (no sys.path editing)."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "bench", "--help"],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO_ROOT,
    )
    assert done.returncode == 0 and "--questions" in done.stdout


def test_bench_is_the_checkouts_not_the_products() -> None:
    """The benchmark is the checkout's ``bench`` folder; the installed package holds none."""
    import bench.speed as pkg

    assert Path(pkg.__file__).parent == REPO_ROOT / "bench" / "speed"
    assert not list((REPO_ROOT / "src" / "enade_bench" / "bench").glob("*.py"))  # a stale __pycache__ aside


def test_scoring_paths_agree_and_the_tree_path_makes_fewer_calls() -> None:
    """``python -m bench.speed.scoring_paths`` on 2 questions: the three HF scoring paths."""
    from bench.speed.engines import OursEngine
    from bench.speed.scoring_paths import compare

    engine = OursEngine(_questions(), threads=1, batch_size=2)
    out = compare(engine, ["log_prob", "first_token"], [0, 1], rounds=1)
    for method, entry in out.items():
        assert {p: entry[p]["identical_predictions"] for p in ("batched", "store", "store+tree")} == {
            "batched": 2,
            "store": 2,
            "store+tree": 2,
        }, method
        assert entry["store+tree"]["max_abs_score_diff"] < 1e-3
        # the same prefix handling (fixed blocks, scoring_paths clears the store) with and without the tree
        assert entry["store+tree"]["calls"] <= entry["store"]["calls"]
    assert out["log_prob"]["store+tree"]["calls"] < out["log_prob"]["store"]["calls"]  # no option batch
    assert engine.backend.prefix_store is not None and engine.backend.tree  # restored
