"""Null behaviour of l_z and l_z* per θ estimator on a real ENEM booklet.

Quoted in docs/psychometrics.md. Run from the repository root:

    PYTHONPATH=.:src python docs/psychometrics_lz_simulation.py [--n 2000] [--seed 2024]

Model-conforming response patterns are simulated at fixed true θ with INEP's
3PL parameters of the ENEM 2022 mathematics booklet 1078 (Cinza); θ is
estimated with each estimator and the share of patterns that l_z (and l_z*)
flags at the nominal 5% normal cut-off (-1.645) is reported.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from bench.lz_null_study import lz_null_study

from enade_bench.benchmarks.enem.inep import booklet_items, load_inep_items, scored_params

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "enem"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="patterns per true theta")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--booklet", type=int, default=1078)
    args = parser.parse_args()
    items = scored_params(booklet_items(load_inep_items(SHARED / "inep_items.csv"), args.booklet))
    rng = np.random.default_rng(args.seed)
    table = lz_null_study(items, [-1.0, 0.0, 1.0, 2.0, 3.0], args.n, rng, methods=("eap", "ml", "map", "wle"))
    table["estimator"] = table["method"] + ":" + table["statistic"]
    wide = table.pivot(index="true_theta", columns="estimator", values="flag_rate")
    order = ["eap:lz", "ml:lz", "ml:lz_star", "map:lz", "map:lz_star", "wle:lz", "wle:lz_star"]
    print(f"booklet {args.booklet}: {len(items)} scored items; {args.n} patterns per theta; seed {args.seed}")
    print("share flagged at l < -1.645 (nominal 0.05)")
    with pd.option_context("display.width", 120, "display.precision", 3):
        print(wide[order])
    sd = table.pivot(index="true_theta", columns="estimator", values="sd")[["eap:lz", "ml:lz_star"]]
    print("\nSD of the statistic (nominal 1)")
    with pd.option_context("display.width", 120, "display.precision", 3):
        print(sd)


if __name__ == "__main__":
    main()
