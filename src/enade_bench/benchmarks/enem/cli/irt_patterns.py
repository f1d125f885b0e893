"""``enade-bench irt patterns``: per-shuffle response patterns of ENEM runs, as ``irt score`` input.

For every ENEM exam answered by the runs under RESULTS_DIR (linked to its INEP
booklet by its code or by the answer key), writes

* ``<exam>_responses.csv`` — ``respondent_id`` (``<run>#s<shuffle>``) and one column per
  scored item (1, 0, or empty when the item was not answered in that run);
* ``<exam>_items.csv`` — ``item_id,a,b,c``, INEP's official 3PL parameters;

so ``enade-bench irt score --items … --responses …`` (or any IRT package) runs on
real model output.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from enade_bench.errors import UserError
from enade_bench.results.csv_safe import write_csv
from enade_bench.results.safe_write import file_stem
from enade_bench.results.writable import check_output_dir


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "patterns", help="write per-shuffle response patterns of ENEM runs (irt score input)"
    )
    parser.add_argument("results", nargs="+", type=Path, help="results folder(s)")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--enem-data", type=Path, help="folder with inep_items.csv (default: found)")
    parser.set_defaults(handler=run_patterns)


def run_patterns(args: argparse.Namespace) -> int:
    from enade_bench.benchmarks.enem.analysis import RANDOM, analyse  # noqa: PLC0415 (pandas, matplotlib: loaded only for this command)
    from enade_bench.psychometrics.tidy import to_wide  # noqa: PLC0415 (pandas, matplotlib: loaded only for this command)
    from enade_bench.report.loader import load_results  # noqa: PLC0415 (pandas, matplotlib: loaded only for this command)

    check_output_dir(args.out, "--out")
    entries = load_results(args.results)
    result = analyse(entries, args.enem_data)
    if not result.exams:
        reasons = "; ".join(result.skipped) or "no run answered an ENEM exam"
        raise UserError(f"{', '.join(map(str, args.results))}: no ENEM response patterns ({reasons})")
    args.out.mkdir(parents=True, exist_ok=True)
    for exam in result.exams:
        tidy = exam.tidy[exam.tidy["respondent"] != RANDOM]
        wide = to_wide(tidy, items=list(exam.items.item_ids))
        wide.index = [f"{name}#s{shuffle}" for name, shuffle in wide.index]
        wide = wide.astype("Int64")
        wide.index.name = "respondent_id"
        # year, area and booklet come from the runs and --enem-data: one safe name, as any results name
        stem = file_stem(f"enem_{exam.exam.year}_{exam.exam.area}_{exam.booklet}", "ENEM exam name")
        write_csv(args.out / f"{stem}_responses.csv", wide, na_rep="", lineterminator="\n")
        items = exam.items.to_frame()[["item_id", "a", "b", "c"]]
        write_csv(
            args.out / f"{stem}_items.csv", items, index=False, lineterminator="\n", float_format="%.10g"
        )
        print(
            f"wrote {args.out / stem}_responses.csv ({len(wide)} patterns × {wide.shape[1]} items) and _items.csv"
        )
    for note in result.skipped:
        print(f"note: {note}")
    return 0
