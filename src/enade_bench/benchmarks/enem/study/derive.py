"""``enade-bench study --derive-attributes OUT.csv --year Y``: item attributes from the ENEM files.

For every area of each year, the Portuguese question file is linked to its
INEP booklet and :func:`~enade_bench.benchmarks.enem.study.attributes.derive_attributes`
reads ``image_description`` and ``has_numbers`` from the text.  The CSV it
writes is the attribute table a study uses by default; a user table has the
same layout (``item_id`` plus 0/1 columns).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from enade_bench.benchmarks.enem.data import find_enem_data
from enade_bench.benchmarks.enem.files import AREAS
from enade_bench.benchmarks.enem.inep import load_booklets, load_inep_items
from enade_bench.benchmarks.enem.study.attributes import derive_attributes
from enade_bench.benchmarks.enem.study.exams import find_exam
from enade_bench.results.csv_safe import write_csv


def derived_attribute_table(years: Sequence[int], enem_dir: Path) -> pd.DataFrame:
    """``year, area, item_id, image_description, has_numbers`` for every scored item of ``years``."""
    inep = load_inep_items(enem_dir / "inep_items.csv")
    booklets = load_booklets(enem_dir / "inep_booklets.csv")
    frames = []
    for year in sorted(set(years)):
        exams = [
            find_exam(enem_dir, inep, booklets, year, area, "pt-br", Path(f"--year {year}")) for area in AREAS
        ]
        frames.append(derive_attributes(exams, year))
    return pd.concat(frames, ignore_index=True)


def write_derived_attributes(out: Path, years: Sequence[int], enem_dir: Path | None = None) -> int:
    """Write :func:`derived_attribute_table` to ``out`` (atomically); return the number of items."""
    table = derived_attribute_table(years, find_enem_data(enem_dir))
    write_csv(Path(out), table, index=False)
    return len(table)
