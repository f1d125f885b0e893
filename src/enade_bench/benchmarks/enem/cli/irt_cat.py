"""``enade-bench irt cat``: post-hoc adaptive testing over response patterns.

::

    enade-bench irt cat [--items ITEMS.csv --responses RESPONSES.csv | --enem-data DIR]
        [--rule quadrature|additive] [--target-se S] [--full-se-margin M] [--margin-kind additive|quadrature]
        [--max-shift S] [--max-items N]
        [--min-items N] [--randomesque K] [--seed S] [--tolerance 0.15] [--out DIR]

Without ``--items/--responses`` it replays the 2,400 published patterns of the
shared ENEM data that have INEP parameters. The default stopping rule is
``quadrature`` (SE ≤ sqrt(SE_full² + 0.1²) after at least 15 items); ``--rule additive``
is issue 12's SE ≤ max(0.35, SE_full + 0.05) (``psychometrics.cat.STOP_RULES``). Prints the target check and the
curve of items against SE and error; ``--out`` writes ``cat_patterns.csv``
(one row per pattern), ``cat_curve.csv`` and ``cat_curve.png/.pdf``.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from enade_bench.benchmarks.enem.data import find_enem_data
from enade_bench.errors import UserError
from enade_bench.results.csv_safe import write_csv
from enade_bench.results.writable import check_output_dir

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


#: The names of ``psychometrics.cat.STOP_RULES``, written here so that ``irt --help`` imports no
#: psychometrics (pandas); tests/cli/test_cli_start.py keeps them equal.
CAT_RULES = ("quadrature", "additive")


def register(sub: Any) -> None:
    p = sub.add_parser("cat", help="post-hoc adaptive testing (max information, EAP) over response patterns")
    p.add_argument("--items", type=Path, help="ITEMS.csv: item_id,a,b[,c] (with --responses)")
    p.add_argument("--responses", type=Path, help="RESPONSES.csv: respondent_id + one column per item")
    p.add_argument("--enem-data", type=Path, help="folder with inep_items.csv and the published patterns")
    p.add_argument(
        "--rule",
        choices=CAT_RULES,
        default="quadrature",
        help="stopping rule: quadrature (default; SE <= sqrt(full SE² + 0.1²), at least 15 items) "
        "or additive (SE <= max(0.35, full SE + 0.05))",
    )
    p.add_argument("--target-se", type=float, help="SE floor (default: the rule's; negative: no SE rule)")
    p.add_argument(
        "--full-se-margin",
        type=float,
        help="margin over the full-test SE (default: the rule's; negative = off)",
    )
    p.add_argument(
        "--margin-kind",
        choices=("additive", "quadrature"),
        help="full SE + margin or sqrt(full SE² + margin²) (default: the rule's)",
    )
    p.add_argument("--max-shift", type=float, help="also require the predicted θ shift SD <= this")
    p.add_argument("--max-items", type=int, help="item budget (default: all)")
    p.add_argument("--min-items", type=int, help="never stop before this many items (default: the rule's)")
    p.add_argument(
        "--randomesque", type=int, default=1, help="choose among the k most informative (default 1)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the randomesque draw")
    p.add_argument("--tolerance", type=float, default=0.15, help="|θ_CAT - θ_full| tolerance (default 0.15)")
    p.add_argument("--out", type=Path, help="folder for cat_patterns.csv, cat_curve.csv and the figure")
    p.set_defaults(handler=run_cat_command)


def _patterns(args: argparse.Namespace) -> tuple[list[str], Any, np.ndarray]:
    import numpy as np  # noqa: PLC0415 (not at --help)

    from enade_bench.benchmarks.enem.published import PUBLISHED_FILE, load_published  # noqa: PLC0415
    from enade_bench.psychometrics.io import read_items, read_responses  # noqa: PLC0415

    if (args.items is None) != (args.responses is None):
        raise UserError("irt cat: --items and --responses go together")
    if args.items is not None:
        items = read_items(args.items)
        ids, x = read_responses(args.responses, items)
        empty = np.flatnonzero(np.isnan(x).all(axis=1))
        if empty.size:
            raise UserError(f"{args.responses}: respondent {ids[int(empty[0])]!r} answered no item")
        return ids, items, x
    folder = find_enem_data(args.enem_data)
    if not (folder / PUBLISHED_FILE).is_file():
        raise UserError(f"{folder / PUBLISHED_FILE}: file not found")
    pub = load_published(folder)
    return [str(i) for i in pub.rows["ID"]], pub.items, pub.responses


def _config(args: argparse.Namespace) -> Any:
    from enade_bench.psychometrics.cat import stop_rule  # noqa: PLC0415 (the command's own imports: not at --help)

    for name in ("max_items", "randomesque"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UserError(f"--{name.replace('_', '-')} {value}: expected an integer >= 1")
    if args.min_items is not None and args.min_items < 0:
        raise UserError(f"--min-items {args.min_items}: expected an integer >= 0")
    for name in ("max_shift", "tolerance"):
        value = getattr(args, name)
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise UserError(f"--{name.replace('_', '-')} {value}: expected a number >= 0")
    for name in ("target_se", "full_se_margin"):
        value = getattr(args, name)
        if value is not None and not math.isfinite(value):
            raise UserError(f"--{name.replace('_', '-')} {value}: expected a number")
    base = stop_rule(args.rule, min_items=args.min_items)
    target = base.target_se if args.target_se is None else (args.target_se if args.target_se >= 0 else None)
    margin = (
        base.full_se_margin
        if args.full_se_margin is None
        else (args.full_se_margin if args.full_se_margin >= 0 else None)
    )
    return replace(
        base,
        target_se=target,
        full_se_margin=margin,
        margin_kind=args.margin_kind or base.margin_kind,
        max_shift=args.max_shift,
        max_items=args.max_items,
        randomesque=args.randomesque,
    )


def run_cat_command(args: argparse.Namespace) -> int:
    """Handler of ``irt cat``."""
    import numpy as np  # noqa: PLC0415 (not at --help)

    from enade_bench.psychometrics.cat import CatConfig, rule_text  # noqa: PLC0415 (the command's own imports: not at --help)
    from enade_bench.psychometrics.cat_posthoc import simulate_cat  # noqa: PLC0415
    from enade_bench.psychometrics.cat_summary import cat_curve, cat_summary  # noqa: PLC0415

    config = _config(args)
    if args.out is not None:
        check_output_dir(args.out, "--out")  # before any work: creatable and writable
    ids, items, x = _patterns(args)
    rng = np.random.default_rng(args.seed)
    sim = simulate_cat(x, items, config, rng)
    # The curve: the same selection run to the end (stopping does not change the path).
    full_path = (
        sim
        if config.max_items is None
        else simulate_cat(
            x,
            items,
            CatConfig(target_se=None, randomesque=config.randomesque),
            np.random.default_rng(args.seed),
        )
    )
    curve = cat_curve(full_path, args.tolerance)
    s = cat_summary(sim, args.tolerance)
    rule = rule_text(config)
    print(
        f"CAT over {s.n_patterns} patterns; stop at {rule}"
        + (f", budget {config.max_items}" if config.max_items else "")
        + (f", randomesque {config.randomesque}" if config.randomesque > 1 else "")
    )
    print(
        f"  items used: median {s.median_items:g} (full test {s.median_full_items:g}); "
        f"quartiles {np.quantile(sim.n_items, 0.25):g}-{np.quantile(sim.n_items, 0.75):g}"
    )
    print(f"  final SE: median {s.median_se:.3f} (full test {s.median_se_full:.3f})")
    print(
        f"  |θ_CAT - θ_full| <= {s.tolerance:g}: {100 * s.share_within:.1f}% of patterns; "
        f"median |error| {np.median(np.abs(sim.error)):.3f}"
    )
    print(
        f"  target (median items <= {s.max_median_items:g}, >= {100 * s.min_share_within:.0f}% within "
        f"{s.tolerance:g}): {'met' if s.passed else 'NOT met'}"
    )
    print("\nitems  SE(median)  SE(q25-q75)   |err| median  |err| mean  within  stopped")
    for _, r in curve.iterrows():
        k = int(r["k"])
        if k <= 10 or k % 5 == 0 or k == len(curve):
            print(
                f"{k:5d}  {r['se_median']:10.3f}  {r['se_q25']:.3f}-{r['se_q75']:.3f}  "
                f"{r['abs_error_median']:12.3f}  {r['abs_error_mean']:10.3f}  {r['within_tol']:6.2f}  "
                f"{r['stopped']:7.2f}"
            )
    if args.out is not None:
        _write(args.out, ids, sim, curve, args.tolerance, config.target_se)
    return 0


def _write(
    folder: Path, ids: list[str], sim: Any, curve: pd.DataFrame, tol: float, target: float | None
) -> None:
    import pandas as pd  # noqa: PLC0415 (the command's own imports: not at --help)

    from enade_bench.report.cat_figures import cat_curve_figure  # noqa: PLC0415
    from enade_bench.report.figures import save  # noqa: PLC0415

    per = pd.DataFrame(
        {
            "respondent_id": ids,
            "n_items": sim.n_items,
            "n_available": sim.n_available,
            "theta_cat": sim.theta,
            "se_cat": sim.se,
            "theta_full": sim.theta_full,
            "se_full": sim.se_full,
            "error": sim.error,
            "target_se": sim.target_se,
            "stopped_by": sim.stopped_by,
        }
    )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_csv(folder / "cat_patterns.csv", per, index=False, float_format="%.6g")
        write_csv(folder / "cat_curve.csv", curve, index=False, float_format="%.6g")
        save(
            cat_curve_figure(curve, tol, target),
            folder,
            "cat_curve",
            "CAT: items administered against SE and error to the full-test θ",
        )
    except OSError as exc:
        raise UserError(f"{folder}: cannot write ({exc.strerror})") from None
    print(f"\nwrote {folder / 'cat_patterns.csv'}, cat_curve.csv, cat_curve.png/.pdf")
