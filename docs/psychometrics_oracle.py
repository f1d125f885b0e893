"""Agreement with the R oracle (mirt θ/SE, PerFit l_z) on the 2,400 published rows.

Quoted in docs/psychometrics.md. Run from the repository root:

    PYTHONPATH=src:. python docs/psychometrics_oracle.py

Prints the largest absolute difference between our estimates and the
columns of ``reference_llm_responses_mirt.parquet`` (the rows whose booklet
has parameters in ``inep_items.csv``), scored in one vectorised call, and
the time that call takes. The tests (tests/psychometrics/test_estimation.py,
test_personfit.py) assert the same comparisons against the 1e-3 contract.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
from tests.psychometrics.oracle import load_oracle

from enade_bench.benchmarks.enem.inep import load_inep_items
from enade_bench.psychometrics.estimation import MIRT, Quadrature, eap
from enade_bench.psychometrics.personfit import lz

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ENADE_BENCH_SHARED_DATA", REPO.parent / "shared" / "data"))


def main() -> None:
    enem = SHARED / "enem"
    oracle = load_oracle(enem, load_inep_items(enem / "inep_items.csv"))
    rows = oracle.rows
    n, k = oracle.responses.shape
    start = time.perf_counter()
    est = eap(oracle.responses, oracle.items, MIRT)
    seconds = time.perf_counter() - start
    old = eap(oracle.responses, oracle.items, Quadrature(npts=61, lim=6.0))
    got_lz = lz(oracle.responses, rows["IRT_SCORE"].to_numpy(), oracle.items)

    def diff(a: np.ndarray, column: str) -> float:
        return float(np.max(np.abs(np.asarray(a) - rows[column].to_numpy())))

    print(f"{n} rows x {k} items (mixed booklets), one EAP call: {seconds:.2f} s")
    print(f"theta (mirt preset, 121 points) vs IRT_SCORE   max abs diff {diff(est.theta, 'IRT_SCORE'):.1e}")
    print(f"SE vs IRT_SCORE_SE                             max abs diff {diff(est.se, 'IRT_SCORE_SE'):.1e}")
    print(f"l_z at the supplied theta vs LZ_SCORE          max abs diff {diff(got_lz, 'LZ_SCORE'):.1e}")
    print(
        f"theta / SE with 61 points (older mirt)         max abs diff "
        f"{diff(old.theta, 'IRT_SCORE'):.1e} / {diff(old.se, 'IRT_SCORE_SE'):.1e}"
    )


if __name__ == "__main__":
    main()
