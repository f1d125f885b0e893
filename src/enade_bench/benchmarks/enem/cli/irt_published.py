"""``enade-bench irt published-long OUT.csv``: the published ENEM patterns as a long CSV.

The 4,800 published LLM response patterns (five models × 30 runs per booklet and
language, ENEM 2019–2022) in the long format ``enade-bench compare`` reads; the
comparison table of ``docs/comparisons.md`` is::

    enade-bench irt published-long published_long.csv
    enade-bench compare published_long.csv --by area --by language --out published_comparison/
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from enade_bench.benchmarks.enem.data import find_enem_data
from enade_bench.results.csv_safe import write_csv
from enade_bench.results.writable import check_output_file


def register(sub: Any) -> None:
    p = sub.add_parser("published-long", help="the published ENEM LLM patterns as a long CSV for `compare`")
    p.add_argument("out", type=Path, help="CSV file to write")
    p.add_argument("--enem-data", type=Path, help="ENEM data folder (default: ../shared/data/enem)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from enade_bench.benchmarks.enem.published import published_long  # noqa: PLC0415

    check_output_file(args.out, "OUT")
    frame = published_long(find_enem_data(args.enem_data))
    write_csv(args.out, frame, index=False)
    print(f"wrote {args.out} ({len(frame)} rows, {frame['model'].nunique()} models)")
    return 0
