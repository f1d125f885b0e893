"""Time of one clustered MDD (``metrics/power_clustered.py``, both shifts) at 8, 28, 180 and 424 questions.

Two models of nearby ability on questions in texts of 1-4 questions, each scored over 30
shuffles; each size's pair gets its MDD at the first Holm level of three models (alpha/3),
with fresh draws each time (another seed: no cached alternative).  The minimum of
``--repeat`` timings is printed, one JSON line per size, with the machine's load average.

    PYTHONPATH=. .venv/bin/python bench/mdd_timing.py [--repeat 7]   # the pairs of tests/metrics/test_power.py
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from tests.metrics.test_power import observed_pair

from enade_bench.metrics.paired import paired_difference
from enade_bench.metrics.power import records_of
from enade_bench.metrics.power_clustered import clustered_mdd


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    for n in (8, 28, 180, 424):
        a, b, texts = observed_pair(n, 30, np.random.default_rng(n))
        r = paired_difference(a, b, clusters=texts)
        times = []
        for seed in range(args.repeat):
            start = time.perf_counter()
            mdd = clustered_mdd(
                r.differences, r.clusters, 0.05 / 3, bases=r.bases, records=records_of(np.r_[a, b]), seed=seed
            )
            times.append(time.perf_counter() - start)
        print(
            json.dumps(
                {
                    "questions": n,
                    "clusters": r.n_clusters,
                    "mdd_points": round(100 * mdd, 1),
                    "min_ms": round(1000 * min(times), 1),
                    "load_average": os.getloadavg()[0],
                }
            )
        )


if __name__ == "__main__":
    main()
