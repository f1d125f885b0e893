"""Item attributes for the χ² tests: derived from the question texts, or a user CSV.

The CSV has one row per INEP item (``item_id`` = ``CO_ITEM``) and one 0/1
column per attribute; optional ``year``, ``area`` and ``language`` columns are
kept for reading and used only to pick the rows of the study's year.
:func:`derive_attributes` gives the two attributes that can be read from the
shared ENEM files: ``image_description`` (the stem carries the accessible
version's description of a figure) and ``has_numbers`` (a digit in the stem
or an option), detected by
:func:`~enade_bench.psychometrics.classical.item_attributes` on the
Portuguese text.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from enade_bench.benchmarks.enem.study.exams import ExamSource
from enade_bench.errors import UserError
from enade_bench.psychometrics.classical import item_attributes

#: Columns of an attribute CSV that are not attributes.
KEY_COLUMNS = ("item_id", "year", "area", "language")
_TRUE = {"1", "true", "yes"}
_FALSE = {"0", "false", "no"}


def derive_attributes(exams: Sequence[ExamSource], year: int | None = None) -> pd.DataFrame:
    """``year, area, item_id, image_description, has_numbers`` for the scored items of ``exams``.

    One row per item: when an area is given in several languages, the first
    exam listed (pt-br in a study's order) supplies the text.
    """
    frames = []
    for exam in exams:
        rows = exam.items[exam.items["scored"]]
        attrs = item_attributes(rows.reset_index(drop=True))
        frames.append(
            pd.DataFrame(
                {
                    "year": year if year is not None else 0,
                    "area": exam.area,
                    "item_id": rows["item_id"].astype(str).to_numpy(),
                    "image_description": attrs["image_description"].astype(int).to_numpy(),
                    "has_numbers": (attrs["numbers_in_stem"] | attrs["numbers_in_options"])
                    .astype(int)
                    .to_numpy(),
                }
            )
        )
    if not frames:
        return pd.DataFrame(columns=["year", "area", "item_id", "image_description", "has_numbers"])
    out = pd.concat(frames, ignore_index=True).drop_duplicates(subset="item_id", keep="first")
    return out.reset_index(drop=True)


def read_attribute_csv(path: Path, known: set[str], year: int) -> pd.DataFrame:
    """Read a user's attribute CSV and check it against the study's items.

    Raises
    ------
    UserError
        On a missing ``item_id`` column, a value other than 0/1/true/false, no
        attribute column, or an item id (of the study's year) not in ``known``
        (the INEP items of that year's booklets).
    """
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise UserError(f"{path}: not a readable CSV ({exc})") from None
    if "item_id" not in frame.columns:
        raise UserError(f"{path}: no 'item_id' column (expected INEP CO_ITEM ids and 0/1 attribute columns)")
    names = [c for c in frame.columns if c not in KEY_COLUMNS]
    if not names:
        raise UserError(f"{path}: no attribute column besides {', '.join(KEY_COLUMNS)}")
    if "year" in frame.columns:
        frame = frame[frame["year"].str.strip() == str(year)]
    out: dict[str, list[str] | list[int]] = {"item_id": frame["item_id"].str.strip().to_list()}
    for line, item in zip(frame.index, frame["item_id"].str.strip(), strict=True):
        if item not in known:
            raise UserError(
                f"{path}: line {line + 2}: item_id {item!r} is not an item of the ENEM {year} "
                f"booklets in inep_items.csv (expected an INEP CO_ITEM such as {sorted(known)[0]!r})"
            )
    for name in names:
        values = frame[name].str.strip().str.lower()
        bad = ~values.isin(_TRUE | _FALSE)
        if bad.any():
            line = int(frame.index[bad.to_numpy()][0]) + 2
            raise UserError(
                f"{path}: line {line}: column {name!r}: expected 0/1 or true/false, "
                f"got {frame.loc[frame.index[bad.to_numpy()][0], name]!r}"
            )
        out[name] = values.isin(_TRUE).astype(int).to_list()
    if not out["item_id"]:
        raise UserError(f"{path}: no row for ENEM {year}")
    return pd.DataFrame(out).drop_duplicates(subset="item_id", keep="last").reset_index(drop=True)


def attributes_for(items: Sequence[str], table: pd.DataFrame) -> pd.DataFrame:
    """Boolean attribute frame of the ``items`` the table lists (others are left out of the tests)."""
    names = [c for c in table.columns if c not in KEY_COLUMNS]
    indexed = table.set_index("item_id")[names]
    listed = [i for i in items if i in indexed.index]
    return indexed.loc[listed].astype(bool)
