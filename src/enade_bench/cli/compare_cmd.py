"""``enade-bench compare RESULTS… --out DIR``: models side by side, paired and clustered.

RESULTS are results folders (every ``*_results.json`` under them), results files, or
long-format CSVs (``model,item,[replicate],correct[,cluster,<fields>…]``) exported by
any harness; with ``--from lm-eval|inspect|helm`` they are that harness's own output
(``compare/importers/``).  Writes ``scores.csv``, ``pairs.csv``, ``flips.csv``, ``unpaired.csv``,
``tables/*.tex``, ``figures/comparison_clustered.png``/``.pdf`` and ``index.html``, whose
question browser shows every answer read (docs/comparisons.md).

The folder is a report folder (:mod:`enade_bench.report.folder`): a second comparison into
it first removes every file the first one wrote (an ``unpaired.csv`` that no longer
applies included), and a folder that holds other files and no manifest is refused.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from enade_bench.compare.importers import SOURCES, read_from
from enade_bench.errors import UserError
from enade_bench.results.writable import check_output_dir

if TYPE_CHECKING:
    import pandas as pd

    from enade_bench.report.browser import BrowserData
    from enade_bench.report.loader import RunEntry


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "compare",
        help="compare models question by question: clustered intervals, "
        "paired tests, compact letters, item flips",
    )
    parser.add_argument(
        "results",
        nargs="*",
        type=Path,
        metavar="RESULTS",
        help="results folders or files, or long-format CSVs",
    )
    parser.add_argument("--out", type=Path, help="folder to write")
    parser.add_argument(
        "--from",
        dest="source",
        choices=SOURCES,
        metavar="HARNESS",
        help="read RESULTS as this harness's output: lm-eval (--log_samples folders), inspect "
        "(.eval/.json logs), helm (run folders) or long (CSVs); default: our results, "
        ".csv as long",
    )
    parser.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="[TASK=]NAME",
        help="with --from: the harness's right/wrong measure (lm-eval metric, inspect scorer, "
        "HELM stat) for every task, or TASK=NAME for one task (repeatable); default acc / "
        "exact_match (docs/comparisons.md)",
    )
    parser.add_argument(
        "--by",
        action="append",
        default=[],
        metavar="FIELD",
        help="compare separately per value of this field (repeatable), e.g. --by area",
    )
    parser.add_argument(
        "--adjust",
        choices=["holm", "bonferroni", "bh"],
        default="holm",
        help="multiplicity adjustment (default holm) over the pairs of one --family; each pair's "
        "interval is adjusted alike (docs/comparisons.md)",
    )
    parser.add_argument(
        "--family",
        choices=["all", "strategy", "stratum"],
        default="strategy",
        help="which pairs are adjusted together: every pair of the table (all), of one strategy "
        "with all its --by strata (strategy, default), or of one cell (stratum)",
    )
    parser.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="level of the tests and letters; intervals cover 1 - alpha (default 0.05)",
    )
    parser.add_argument(
        "--allow-errors",
        action="store_true",
        help="compare runs with error records on their answers only (n_errors shown) "
        "instead of refusing them as incomplete",
    )
    parser.add_argument(
        "--calibration",
        action="store_true",
        help="print the simulated error rates of the paired tests (docs/comparisons.md) and exit",
    )
    parser.add_argument(
        "--replications",
        type=int,
        default=2000,
        metavar="N",
        help="with --calibration: replications per row (default 2000, as in the docs)",
    )
    parser.set_defaults(handler=handle)


def _read(
    paths: list[Path], source: str | None = None, metrics: Sequence[str] = ()
) -> tuple[pd.DataFrame, list[RunEntry], BrowserData]:
    """The long table, the runs among ``paths`` (results folders and files) and the page's
    question browser over every answer read (our records; a harness's rows; a long CSV's)."""
    from enade_bench.compare.browse import add_rows  # noqa: PLC0415 (the command's own imports)
    from enade_bench.report.browser import browser_data  # noqa: PLC0415

    if source is not None:
        table, rows = read_from(source, paths, metrics)
        data = browser_data([])
        add_rows(data, rows, source)
        return _one_spelling(table), [], data
    if metrics:
        raise UserError("--metric: name the harness too (--from lm-eval, inspect or helm)")
    import pandas as pd  # noqa: PLC0415

    from enade_bench.compare.table import from_entries  # noqa: PLC0415
    from enade_bench.report.loader import RunEntry, load_results  # noqa: PLC0415
    from enade_bench.results.store import read_result  # noqa: PLC0415

    frames, entries, rows = [], [], []
    for path in paths:
        if path.suffix.lower() == ".csv":
            frame, more = read_from("long", [path])
            frames.append(frame)
            rows += more
            continue
        runs = [RunEntry(path, read_result(path))] if path.is_file() else load_results([path])
        frames.append(from_entries(runs))
        entries += runs
    data = browser_data(entries)
    add_rows(data, rows, "long")
    return _one_spelling(pd.concat(frames, ignore_index=True)), entries, data


def _one_spelling(table):  # type: ignore[no-untyped-def]
    """``table``, unless two model names are one name after trimming spaces and ignoring case
    (``m1``, ``m1 ``, ``M1``: one model by a reader's eye, three by the program's): an error."""
    spellings: dict[str, list[str]] = {}
    for name in dict.fromkeys(table["model"].astype(str)):
        spellings.setdefault(name.strip().casefold(), []).append(name)
    clash = next((names for names in spellings.values() if len(names) > 1), None)
    if clash is not None:
        shown = ", ".join(repr(n) for n in clash)
        raise UserError(
            f"RESULTS: the model names {shown} differ only in spaces or case: name them alike (one model) "
            "or distinctly (several)"
        )
    return table


def _calibration(replications: int) -> int:
    from enade_bench.compare.calibration import (  # noqa: PLC0415
        BYTES_PER_REPLICATION,
        calibration_lines,
        max_replications,
    )

    if replications < 10:
        raise UserError(f"--replications: expected at least 10, got {replications}")
    most = max_replications()
    if most is not None and replications > most:
        raise UserError(
            f"--replications: {replications} replications need about "
            f"{replications * BYTES_PER_REPLICATION / 2**30:.1f} GiB of memory; this machine has room for "
            f"at most {most} now (the docs' tables use 2000)"
        )
    print("\n".join(calibration_lines(replications)))
    return 0


#: The options of a comparison, with their defaults: ``--calibration`` uses none of them.
_COMPARISON_DEFAULTS: dict[str, object] = {
    "results": [],
    "out": None,
    "source": None,
    "metric": [],
    "by": [],
    "adjust": "holm",
    "family": "strategy",
    "alpha": 0.05,
    "allow_errors": False,
}
_SPELLED = {"results": "RESULTS", "source": "--from", "allow_errors": "--allow-errors"}


def _unused_options(args: argparse.Namespace) -> list[str]:
    """The comparison options given with ``--calibration`` (which prints a table and exits)."""
    return [
        _SPELLED.get(k, f"--{k}")
        for k, default in _COMPARISON_DEFAULTS.items()
        if getattr(args, k) != default
    ]


def handle(args: argparse.Namespace) -> int:
    if args.calibration:
        unused = _unused_options(args)
        if unused:
            raise UserError(
                f"--calibration prints the simulated error rates of the paired tests and exits; it does not "
                f"use {', '.join(unused)} (run the comparison without --calibration)"
            )
        return _calibration(args.replications)
    if args.replications != 2000:
        raise UserError("--replications: used only with --calibration")
    if not args.results or args.out is None:
        raise UserError("compare: give RESULTS (folders, results files or long CSVs) and --out DIR")
    if not 0 < args.alpha < 1:
        raise UserError(f"--alpha: expected a number between 0 and 1, got {args.alpha}")
    from enade_bench.report.folder import ReportFolder  # noqa: PLC0415 (matplotlib)

    check_output_dir(args.out, "--out")
    folder = ReportFolder.open(args.out, "--out")
    from enade_bench.compare.analysis import MANY_PAIRS, CompareOptions, compare_table  # noqa: PLC0415
    from enade_bench.compare.render import table1, unreadable_forests, write_comparison  # noqa: PLC0415

    table, entries, browser = _read(list(args.results), args.source, args.metric)
    options = CompareOptions(tuple(args.by), args.adjust, args.alpha, args.family, args.allow_errors)
    comp = compare_table(table, options)
    if len(comp.pairs) >= MANY_PAIRS:  # seconds more: said (issue 61)
        print(f"compare: writing the tables and figures of {len(comp.pairs):,} pairs", file=sys.stderr)
    with folder:
        written = write_comparison(comp, args.out, browser, entries, [p for p in args.results if p.is_dir()])
    for warning in comp.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(
        f"note: multiplicity family: {comp.family_label} (--family {args.family}); intervals beside adjusted "
        f"p: {comp.interval_name}"
    )
    for note in [*comp.notes, *unreadable_forests(comp)]:
        print(f"note: {note}")
    print(table1(comp).display.to_string())
    print(f"wrote {len(written)} files to {args.out}")
    return 0
