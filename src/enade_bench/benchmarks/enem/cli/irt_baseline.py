"""``enade-bench irt baseline``: the uniform random guesser on the same shuffles (paper's Table 1).

::

    enade-bench irt baseline --year 2022 [--area CH CN LC MT] [--enem-data DIR]
        [--shuffles 30] [--seed 0] [--seeds K [--shuffle-counts 5,10,...]] [--out DIR]
    enade-bench irt baseline --items ITEMS.csv [--shuffles 30] ...

Prints, per area, accuracy, θ (EAP, mirt preset), SE, l_z and the ENEM score of
a respondent that picks one of the 5 options uniformly at random (mean and
2.5-97.5 % range over the shuffles; exam ``i`` draws from
``default_rng([seed, i])``). ``--seeds K`` adds the seed-to-seed
spread of the mean against the number of shuffles and the number of shuffles
after which the mean stops depending on the seed (SD over seeds of the mean
accuracy < ``--threshold``, default 0.5 percentage points). ``--out`` writes
``baseline.csv`` (per area), ``baseline_shuffles.csv`` (per shuffle) and
``baseline_seed_spread.csv`` / ``.json`` atomically.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from enade_bench.benchmarks.enem.data import find_enem_data
from enade_bench.benchmarks.enem.files import AREAS
from enade_bench.errors import UserError
from enade_bench.results.csv_safe import write_csv
from enade_bench.results.safe_write import write_text
from enade_bench.results.writable import check_output_dir

if TYPE_CHECKING:
    import pandas as pd


def register(sub: Any) -> None:
    p = sub.add_parser("baseline", help="random-guessing baseline on the same shuffles (Table 1 layout)")
    p.add_argument("--year", type=int, help="ENEM year with INEP parameters (2019, 2022, 2023)")
    p.add_argument("--area", nargs="+", help="areas (default: CH CN LC MT)")
    p.add_argument("--booklet", type=int, nargs="+", help="INEP booklet code(s) instead of --year/--area")
    p.add_argument("--items", type=Path, help="ITEMS.csv (item_id,a,b[,c]) instead of ENEM data")
    p.add_argument("--enem-data", type=Path, help="folder with inep_items.csv (default ../shared/data/enem)")
    p.add_argument("--options", type=int, default=5, help="options per item (default 5)")
    p.add_argument(
        "--shuffles", type=int, default=30, help="shuffles (response patterns) per area (default 30)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--seeds", type=int, help="also run seeds 0..K-1 and report the seed-to-seed spread")
    p.add_argument(
        "--shuffle-counts",
        default="5,10,20,30,50,100,200,300",
        help="numbers of shuffles for the spread (default 5,10,20,30,50,100,200,300)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=0.005,
        help="spread criterion: SD of mean accuracy below this (default 0.005)",
    )
    p.add_argument("--out", type=Path, help="folder for the CSV/JSON results")
    p.set_defaults(handler=run_baseline)


def _exams(args: argparse.Namespace) -> list[tuple[str, Any]]:
    """(label, ItemParams) per exam to score."""
    from enade_bench.benchmarks.enem.inep import area_exams, booklet_exams  # noqa: PLC0415
    from enade_bench.psychometrics.io import read_items  # noqa: PLC0415

    if args.items is not None:
        if args.year or args.booklet or args.area:
            raise UserError("irt baseline: --items excludes --year, --area and --booklet")
        return [(args.items.stem, read_items(args.items))]
    folder = find_enem_data(args.enem_data)
    if args.booklet:
        if args.year or args.area:
            raise UserError("irt baseline: --booklet excludes --year and --area")
        return booklet_exams(folder, args.booklet)
    if args.year is None:
        raise UserError("irt baseline: give --year (with INEP parameters), --booklet or --items")
    areas = [a.upper() for a in (args.area or AREAS)]
    bad = [a for a in areas if a not in AREAS]
    if bad:
        raise UserError(f"--area {bad[0]}: expected one of {', '.join(AREAS)}")
    return area_exams(folder, args.year, areas)


def _check(args: argparse.Namespace) -> list[int]:
    if args.shuffles < 1:
        raise UserError(f"--shuffles {args.shuffles}: expected an integer >= 1")
    if args.options < 2:
        raise UserError(f"--options {args.options}: expected an integer >= 2")
    if args.seeds is not None and args.seeds < 2:
        raise UserError(f"--seeds {args.seeds}: expected an integer >= 2")
    if not (0 < args.threshold < 1):
        raise UserError(f"--threshold {args.threshold}: expected a number in (0, 1)")
    try:
        counts = sorted({int(v) for v in str(args.shuffle_counts).split(",") if v.strip()})
    except ValueError:
        raise UserError(
            f"--shuffle-counts {args.shuffle_counts!r}: expected integers separated by commas"
        ) from None
    if not counts or counts[0] < 1:
        raise UserError(f"--shuffle-counts {args.shuffle_counts!r}: expected integers >= 1")
    if args.out is not None:
        check_output_dir(args.out, "--out")  # before any work: creatable and writable
    return counts


def _fmt(values: pd.Series, digits: int) -> str:
    import numpy as np  # noqa: PLC0415 (not at --help)

    v = values.to_numpy(dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return "—"
    lo, hi = np.quantile(v, [0.025, 0.975])
    return f"{v.mean():.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def run_baseline(args: argparse.Namespace) -> int:
    """Handler of ``irt baseline``."""
    import numpy as np  # noqa: PLC0415 (not at --help)
    import pandas as pd  # noqa: PLC0415 (the command's own imports: not at --help)

    from enade_bench.benchmarks.enem.inep import enem_score  # noqa: PLC0415
    from enade_bench.psychometrics.baseline import random_baseline, seed_spread  # noqa: PLC0415

    counts = _check(args)
    exams = _exams(args)
    per_area, per_shuffle, spreads = [], [], []
    for index, (label, items) in enumerate(exams):
        # one stream per exam, so areas with as many items do not get the same draws
        per = random_baseline(items, np.random.default_rng([args.seed, index]), args.shuffles, args.options)
        area = label.split(" ")[0]
        per["score"] = enem_score(per["theta"].to_numpy(), area) if area in AREAS else np.nan
        per.insert(0, "exam", label)
        per_shuffle.append(per)
        per_area.append(
            {
                "exam": label,
                "items": len(items),
                "K": args.shuffles,
                "accuracy": _fmt(per["accuracy"], 3),
                "θ (EAP)": _fmt(per["theta"], 2),
                "SE": f"{per['se'].mean():.2f}",
                "l_z": _fmt(per["lz"], 2),
                "ENEM score": _fmt(per["score"], 0),
            }
        )
        if args.seeds:
            spread = seed_spread(items, range(args.seeds), counts, args.options, args.threshold, stream=index)
            spreads.append((label, spread))
    table = pd.DataFrame(per_area)
    print(
        f"Random baseline (uniform guessing among {args.options} options), seed {args.seed}: "
        "mean [2.5%, 97.5%] over shuffles"
    )
    print(table.to_string(index=False))
    for label, spread in spreads:
        print(f"\n{label}: seed-to-seed spread of the mean over K shuffles ({args.seeds} seeds)")
        show = spread.table[
            [
                "n_shuffles",
                "accuracy_mean",
                "accuracy_sd",
                "accuracy_sd_expected",
                "accuracy_range",
                "theta_sd",
                "lz_sd",
            ]
        ]
        print(show.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        stable = spread.stable_at if spread.stable_at is not None else f"> {counts[-1]}"
        print(
            f"  SD of mean accuracy < {100 * spread.threshold:g} pp from K = {stable} shuffles "
            f"(binomial: K >= {spread.required_expected})"
        )
    if args.out is not None:
        _write(args.out, table, pd.concat(per_shuffle, ignore_index=True), spreads)
    return 0


def _write(folder: Path, table: pd.DataFrame, per: pd.DataFrame, spreads: list[tuple[str, Any]]) -> None:
    import pandas as pd  # noqa: PLC0415 (the command's own imports: not at --help)

    try:
        write_csv(folder / "baseline.csv", table, index=False)
        write_csv(folder / "baseline_shuffles.csv", per, index=False, float_format="%.6g")
        if spreads:
            frames = [s.table.assign(exam=label) for label, s in spreads]
            write_csv(
                folder / "baseline_seed_spread.csv", pd.concat(frames), index=False, float_format="%.6g"
            )
            summary = {
                label: {
                    "threshold": s.threshold,
                    "stable_at": s.stable_at,
                    "required_expected": s.required_expected,
                }
                for label, s in spreads
            }
            write_text(folder / "baseline_seed_spread.json", json.dumps(summary, indent=2) + "\n")
    except OSError as exc:
        raise UserError(f"{folder}: cannot write ({exc.strerror})") from None
    print(
        f"\nwrote {folder}/baseline.csv, baseline_shuffles.csv"
        + (", baseline_seed_spread.csv/.json" if spreads else "")
    )
