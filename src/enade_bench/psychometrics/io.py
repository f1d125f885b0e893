"""Reading and writing the CSV files of the ``irt`` command line.

* ITEMS.csv: ``item_id,a,b[,c]`` (extra columns ignored; empty ``c`` = 0).
* RESPONSES.csv, wide: ``respondent_id`` and one column per item id holding
  1, 0 or empty (not administered).
* RESPONSES.csv, tidy (calibration only): ``respondent,shuffle,item_id,correct``.

Bad input raises :class:`~enade_bench.errors.UserError` naming the file, the
line (1 = header) and column, and what was expected.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np
import pandas as pd

from enade_bench.errors import UserError
from enade_bench.psychometrics.irt import FloatArray, ItemParams
from enade_bench.regular_file import NotRegularFile, open_regular
from enade_bench.results import csv_safe


def read_csv_text(path: str | Path) -> pd.DataFrame:
    """Read a CSV as strings (no NA guessing); ``UserError`` if unreadable."""
    try:
        with open_regular(path) as handle:
            return pd.read_csv(handle, dtype=str, keep_default_na=False, skipinitialspace=True)
    except NotRegularFile as exc:
        raise UserError(str(exc)) from None
    except FileNotFoundError:
        raise UserError(f"{path}: file not found") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, IsADirectoryError) as exc:
        raise UserError(f"{path}: not a readable CSV file ({exc})") from None


def raw_header(path: str | Path) -> list[str]:
    """The header fields exactly as written (pandas renames repeated names)."""
    with io.TextIOWrapper(open_regular(path), encoding="utf-8-sig", newline="") as handle:
        return [field.strip() for field in next(csv.reader(handle), [])]


def _number(path: str | Path, line: int, column: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{path}: line {line}, column {column}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise UserError(f"{path}: line {line}, column {column}: {text!r} is not a finite number")
    return value


def read_items(path: str | Path) -> ItemParams:
    """Read ITEMS.csv into :class:`ItemParams`.

    Raises
    ------
    UserError
        Missing column, empty or repeated ``item_id``, non-numeric value,
        ``a <= 0`` or ``c`` outside [0, 1).
    """
    frame = read_csv_text(path)
    frame.columns = [str(c).strip() for c in frame.columns]
    for col in ("item_id", "a", "b"):
        if col not in frame.columns:
            raise UserError(f"{path}: missing column {col!r}; expected item_id,a,b[,c]")
    if frame.empty:
        raise UserError(f"{path}: no item rows; expected item_id,a,b[,c]")
    ids: list[str] = []
    first_line: dict[str, int] = {}
    a: list[float] = []
    b: list[float] = []
    c: list[float] = []
    for k, record in enumerate(frame.to_dict("records")):
        line = k + 2
        item = str(record["item_id"]).strip()
        if not item:
            raise UserError(f"{path}: line {line}, column item_id: empty item id")
        if item in first_line:
            raise UserError(
                f"{path}: line {line}, column item_id: item {item!r} appears twice "
                f"(first at line {first_line[item]})"
            )
        first_line[item] = line
        ids.append(item)
        a_val = _number(path, line, "a", str(record["a"]).strip())
        if a_val <= 0:
            raise UserError(f"{path}: line {line}, column a: {a_val} must be > 0")
        a.append(a_val)
        b.append(_number(path, line, "b", str(record["b"]).strip()))
        c_text = str(record.get("c", "")).strip()
        c_val = _number(path, line, "c", c_text) if c_text else 0.0
        if not 0 <= c_val < 1:
            raise UserError(f"{path}: line {line}, column c: {c_val} must be in [0, 1)")
        c.append(c_val)
    return ItemParams.from_arrays(a, b, c, ids)


_VALUES = {"1": 1.0, "0": 0.0, "1.0": 1.0, "0.0": 0.0, "": np.nan}


def _binary_column(frame: pd.DataFrame, col: str, path: str | Path) -> FloatArray:
    """A response column as floats: 1, 0, or NaN for empty; anything else is an ``error:``."""
    values = frame[col].str.strip()
    mapped = values.map(_VALUES)
    bad = mapped.isna() & (values != "")
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise UserError(
            f"{path}: line {row + 2}, column {col!r}: {values.iloc[row]!r}; expected 1, 0 or empty"
        )
    result: FloatArray = np.asarray(mapped.to_numpy(dtype=np.float64), dtype=np.float64)
    return result


def _respondent_ids(frame: pd.DataFrame, path: str | Path) -> list[str]:
    """The ``respondent_id`` column, stripped; an empty or repeated id is an ``error:``.

    A repeated id would be scored twice (or, in calibration, count as two
    examinees) without anyone noticing, so it is refused like a repeated item id.
    """
    ids: list[str] = frame["respondent_id"].str.strip().tolist()
    first_line: dict[str, int] = {}
    for k, rid in enumerate(ids):
        line = k + 2
        if not rid:
            raise UserError(f"{path}: line {line}, column respondent_id: empty respondent id")
        if rid in first_line:
            raise UserError(
                f"{path}: line {line}, column respondent_id: respondent {rid!r} appears twice "
                f"(first at line {first_line[rid]})"
            )
        first_line[rid] = line
    return ids


def read_responses(path: str | Path, items: ItemParams) -> tuple[list[str], FloatArray]:
    """Read wide RESPONSES.csv; return respondent ids and the matrix over ``items``.

    Items of ``items`` without a column are not administered to anyone.

    Raises
    ------
    UserError
        No ``respondent_id`` column, an empty or repeated respondent id, a
        column naming an unknown item, a repeated column, or a value other
        than 1, 0 or empty.
    """
    frame = read_csv_text(path)
    columns = [str(col).strip() for col in frame.columns]
    if "respondent_id" not in columns:
        raise UserError(
            f"{path}: missing column 'respondent_id'; expected respondent_id and one column per item"
        )
    known = set(items.item_ids)
    seen: set[str] = set()
    for col in raw_header(path):
        if not col or col in seen:
            raise UserError(f"{path}: line 1: column {col!r} is empty or repeated in the header")
        seen.add(col)
        if col != "respondent_id" and col not in known:
            raise UserError(f"{path}: line 1: column {col!r} is not an item of the items file")
    frame.columns = columns
    ids = _respondent_ids(frame, path)
    x = np.full((len(frame), len(items)), np.nan)
    position = {item: k for k, item in enumerate(items.item_ids)}
    for col in columns:
        if col == "respondent_id":
            continue
        x[:, position[col]] = _binary_column(frame, col, path)
    return ids, x


def read_calibration_responses(path: str | Path) -> pd.DataFrame:
    """Read responses for calibration: wide (``respondent_id`` + items) or tidy.

    A tidy file (``respondent, shuffle, item_id, correct``) is returned as
    is for shuffle aggregation; a wide one as a respondents × items float
    frame (index ``respondent_id``).
    """
    frame = read_csv_text(path)
    frame.columns = [str(c).strip() for c in frame.columns]
    if {"respondent", "shuffle", "item_id", "correct"} <= set(frame.columns):
        bad = ~frame["correct"].str.strip().isin(["0", "1", "0.0", "1.0"])
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise UserError(
                f"{path}: line {row + 2}, column 'correct': {frame['correct'].iloc[row]!r}; expected 1 or 0"
            )
        return frame.assign(correct=frame["correct"].astype(float))
    if "respondent_id" not in frame.columns:
        raise UserError(
            f"{path}: expected respondent_id plus item columns, or respondent,shuffle,item_id,correct"
        )
    items = [c for c in frame.columns if c != "respondent_id"]
    if not items:
        raise UserError(f"{path}: no item columns")
    out = pd.DataFrame(index=pd.Index(_respondent_ids(frame, path), name="respondent_id"))
    for col in items:
        out[col] = _binary_column(frame, col, path)
    return out


def write_csv(frame: pd.DataFrame, path: str | Path) -> None:
    """Write ``frame`` without index (NaN as empty); ``UserError`` if the folder is missing."""
    target = Path(path)
    if not target.parent.exists():
        raise UserError(f"{path}: folder {target.parent} does not exist")
    csv_safe.write_csv(target, frame, index=False, float_format="%.10g", na_rep="")
