"""Cost of ``compare`` with the number of models: 50, 200 and 500 models on 40 questions.

Each model answers 40 questions once (one binary record each, the exact unconditional test
of every pair); models differ in ability (0.3 to 0.7), answers drawn with a fixed seed.
For each size: the pairs, the seconds of :func:`~enade_bench.compare.analysis.compare_table`
(every pair's test, Holm's adjusted intervals, the detectable differences), its seconds per
pair and the process's peak memory, one JSON line, with the machine's load average.  A
size whose projected time (pairs times the seconds per pair of the sizes measured before
it) is over ``--budget-s`` is printed as projected and not run.

    PYTHONPATH=.:src .venv/bin/python bench/compare_models.py [--models 50 200 500] [--budget-s 900]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time

import numpy as np
import pandas as pd

from enade_bench.compare.analysis import compare_table


def long_table(models: int, questions: int = 40, seed: int = 0) -> pd.DataFrame:
    """The long table of ``models`` models on ``questions`` questions (one record each)."""
    rng = np.random.default_rng(seed)
    ability = np.linspace(0.3, 0.7, models)
    correct = (rng.random((models, questions)) < ability[:, None]).astype(int)
    return pd.DataFrame(
        {
            "model": np.repeat([f"m{k:03d}" for k in range(models)], questions),
            "item": np.tile([f"q{i}" for i in range(questions)], models),
            "replicate": "0",
            "correct": correct.ravel(),
            "cluster": "",
            "prediction": np.where(correct.ravel() == 1, "A", "B"),
            "answer": "A",
            "stem": "",
            "strategy": "-",
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, nargs="+", default=[50, 200, 500])
    parser.add_argument("--budget-s", type=float, default=900.0)
    args = parser.parse_args()
    per_pair = None
    for models in args.models:
        pairs = models * (models - 1) // 2
        line: dict[str, object] = {"models": models, "pairs": pairs}
        if per_pair is not None and pairs * per_pair > args.budget_s:
            line["projected_s"] = round(pairs * per_pair)
        else:
            table = long_table(models)
            start = time.perf_counter()
            comparison = compare_table(table)
            took = time.perf_counter() - start
            per_pair = took / pairs
            assert len(comparison.pairs) == pairs
            line |= {"seconds": round(took, 1), "ms_per_pair": round(1000 * per_pair, 1)}
            line["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        line["load_average"] = os.getloadavg()[0]
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
