"""Cost of ``compare`` with the number of models: 50, 200 and 500 models on 40 questions.

Each model answers 40 questions once (one binary record each, the exact unconditional test
of every pair); models differ in ability (0.3 to 0.7), answers drawn with a fixed seed.
For each size, one JSON line: the pairs, the seconds of
:func:`~enade_bench.compare.analysis.compare_table` (every pair's test, Holm's adjusted
intervals, the detectable differences) and of
:func:`~enade_bench.compare.render.write_comparison` (the CSVs, the LaTeX tables, the figures
and the page, into a temporary folder), the flips' rows, the process's peak memory and the
machine's load average, and ``--digest`` the SHA-256 of ``pairs.csv``, ``scores.csv`` and
``flips.csv`` (every value at 17 digits), which a checkout of another commit reproduces to
compare the numbers.  A size whose projected time (pairs times the seconds per pair of the
sizes measured before it) is over ``--budget-s`` is printed as projected and not run.

    PYTHONPATH=.:src .venv/bin/python bench/compare_models.py [--models 50 200 500] [--budget-s 900] [--digest]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from enade_bench.compare.analysis import compare_table
from enade_bench.compare.comparison import Comparison


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


def digests(comparison: Comparison) -> dict[str, str]:
    """SHA-256 of the comparison's pairs, scores and flips as CSV, every float at 17 digits."""
    frames = {
        "pairs": comparison.pairs_frame(),
        "scores": comparison.scores_frame(),
        "flips": comparison.flips,
    }
    return {
        name: hashlib.sha256(frame.to_csv(index=False, float_format="%.17g").encode()).hexdigest()
        for name, frame in frames.items()
    }


def measure(models: int, digest: bool) -> dict[str, object]:
    """One size's line: the seconds of the analysis and of the writing, and what they made."""
    from enade_bench.compare.render import write_comparison  # noqa: PLC0415 (matplotlib, timed apart)
    from enade_bench.report.browser import BrowserData  # noqa: PLC0415 (matplotlib, timed apart)

    table = long_table(models)
    start = time.perf_counter()
    comparison = compare_table(table)
    analysis = time.perf_counter() - start
    assert len(comparison.pairs) == models * (models - 1) // 2
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        files = write_comparison(comparison, Path(folder), BrowserData())
        writing = time.perf_counter() - start
        size = sum(f.stat().st_size for f in files)
    line: dict[str, object] = {
        "analysis_s": round(analysis, 1),
        "write_s": round(writing, 1),
        "ms_per_pair": round(1000 * (analysis + writing) / len(comparison.pairs), 2),
        "flips_rows": len(comparison.flips),
        "files_mb": round(size / 1e6, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
    return line | ({"sha256": digests(comparison)} if digest else {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, nargs="+", default=[50, 200, 500])
    parser.add_argument("--budget-s", type=float, default=900.0)
    parser.add_argument("--digest", action="store_true", help="the SHA-256 of pairs, scores and flips")
    args = parser.parse_args()
    per_pair = None
    for models in args.models:
        pairs = models * (models - 1) // 2
        line: dict[str, object] = {"models": models, "pairs": pairs}
        if per_pair is not None and pairs * per_pair > args.budget_s:
            line["projected_s"] = round(pairs * per_pair)
        else:
            start = time.perf_counter()
            line |= measure(models, args.digest)
            per_pair = (time.perf_counter() - start) / pairs
        line["load_average"] = os.getloadavg()[0]
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
