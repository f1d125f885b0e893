"""``enade-bench irt cat-live``: adaptive test of a model, asking only the selected ENEM items.

::

    enade-bench irt cat-live CONFIG.yaml [--target-se 0.35] [--max-items 20] [--min-items 1]
        [--randomesque K] [--seed S] [--enem-data DIR] [--out DIR]

CONFIG is an experiment whose dataset is one ENEM exam file (any backend and
method). Prints every step (item, answer, θ, SE) and the final θ, SE and ENEM
score; ``--out`` writes ``cat_live.csv`` atomically.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from pathlib import Path
from typing import Any

from enade_bench.benchmarks.enem.data import find_enem_data
from enade_bench.benchmarks.enem.files import AREAS, parse_exam_filename
from enade_bench.errors import UserError
from enade_bench.results.csv_safe import write_csv
from enade_bench.results.writable import check_output_dir


def register(sub: Any) -> None:
    p = sub.add_parser(
        "cat-live", help="adaptive test of a model on an ENEM exam (only selected items asked)"
    )
    p.add_argument("config", type=Path, help="experiment YAML whose dataset is one ENEM exam file")
    p.add_argument("--target-se", type=float, default=0.35, help="stop at SE <= this (default 0.35)")
    p.add_argument("--max-items", type=int, default=20, help="item budget (default 20)")
    p.add_argument("--min-items", type=int, default=1, help="never stop before this many items")
    p.add_argument(
        "--randomesque", type=int, default=1, help="choose among the k most informative (default 1)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the randomesque draw")
    p.add_argument("--enem-data", type=Path, help="folder with inep_items.csv (default ../shared/data/enem)")
    p.add_argument("--out", type=Path, help="folder for cat_live.csv")
    p.set_defaults(handler=run_cat_live)


def run_cat_live(args: argparse.Namespace) -> int:
    """Handler of ``irt cat-live``."""
    import numpy as np  # noqa: PLC0415 (not at --help)
    import pandas as pd  # noqa: PLC0415 (the command's own imports: not at --help)

    from enade_bench.benchmarks.enem.bank import enem_item_bank  # noqa: PLC0415
    from enade_bench.benchmarks.enem.inep import enem_score  # noqa: PLC0415
    from enade_bench.benchmarks.load import load_experiment  # noqa: PLC0415
    from enade_bench.config import load_config, resolve_input  # noqa: PLC0415
    from enade_bench.psychometrics.cat import CatConfig  # noqa: PLC0415
    from enade_bench.runner.adaptive import live_cat  # noqa: PLC0415
    from enade_bench.runner.execute import ChunkExecutor  # noqa: PLC0415
    from enade_bench.runner.plan import RunOptions, plan_strategy  # noqa: PLC0415
    from enade_bench.runner.run import load_backend  # noqa: PLC0415

    if args.out is not None:
        check_output_dir(args.out, "--out")  # before the model loads
    if args.max_items < 1 or args.randomesque < 1 or args.min_items < 0:
        raise UserError("irt cat-live: --max-items and --randomesque must be >= 1, --min-items >= 0")
    if not (math.isfinite(args.target_se) and args.target_se >= 0):
        raise UserError(f"--target-se {args.target_se}: expected a number >= 0")
    cfg = load_config(args.config)  # cheap checks before the model is loaded
    csv = resolve_input(cfg.dataset.path, args.config)
    folder = find_enem_data(args.enem_data, [csv])
    try:
        exam = parse_exam_filename(csv)
    except ValueError as exc:
        raise UserError(f"{args.config}: dataset.path: {exc}") from None
    options = RunOptions()
    _, exp = load_experiment(args.config, options)
    try:
        bank = enem_item_bank(exp.dataset.questions, csv, folder)
    except ValueError as exc:
        raise UserError(f"{args.config}: dataset.path: {exc}") from None
    exp = load_backend(exp, options)
    # Each selected question is asked once, in its original option order.
    plan = plan_strategy(exp, dataclasses.replace(exp.strategies[0], shuffle=False, n_shuffles=1))
    executor = ChunkExecutor(exp.model, plan, exp.config.evaluation, exp.extract_fn)
    config = CatConfig(
        target_se=args.target_se,
        max_items=args.max_items,
        min_items=args.min_items,
        randomesque=args.randomesque,
    )
    result = live_cat(executor, bank, config, np.random.default_rng(args.seed))
    trace = result.trace
    rows = pd.DataFrame(
        {
            "step": np.arange(1, trace.n_items + 1),
            "item_id": [bank.items.item_ids[j] for j in trace.items],
            "question": [r.id for r in result.records],
            "prediction": [r.prediction for r in result.records],
            "correct": list(trace.responses),
            "theta": trace.theta,
            "se": trace.se,
        }
    )
    print(
        f"{exp.config.name}: ENEM {exam.year} {exam.area} booklet {bank.booklet}, {len(bank.items)} items in the bank"
    )
    print(rows.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    score = enem_score(trace.theta[-1], exam.area) if exam.area in AREAS else float("nan")
    print(
        f"stopped by {trace.stopped_by} after {trace.n_items} items: θ {trace.theta[-1]:.3f}, "
        f"SE {trace.se[-1]:.3f}, ENEM score {float(score):.0f}"
    )
    if args.out is not None:
        try:
            write_csv(args.out / "cat_live.csv", rows, index=False, float_format="%.6g")
        except OSError as exc:
            raise UserError(f"{args.out}: cannot write ({exc.strerror})") from None
        print(f"wrote {args.out / 'cat_live.csv'}")
    return 0
