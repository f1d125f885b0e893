"""What must be said before models are ranked: errors, unpaired items, replicates in item ids.

* **Errors are never scores.** A model × strategy with records that ended in an error
  (:data:`~enade_bench.compare.table.ERROR_COLUMN`) is *incomplete*; the comparison
  refuses to rank it unless ``allow_errors``, and then scores only its answers and shows
  ``n_errors`` beside ``n``.
* **Unpaired items**: an item one model answered and another did not is left out of
  their pair and listed (``unpaired.csv``).
* **Replicates folded into item ids** (``q00_r0``, ``q00_r1``…) make every replicate a
  "question": the pairing, the test and the interval then treat repeated measures as
  independent questions.  A common stem with a varying replicate-like suffix, or a cell
  in which more than 90 % of the items are answered by one model only, gives a warning
  with the fix (a ``replicate`` column).
* **Items nested in strata**: one item id that is several questions of a cell (``i00`` of
  area X and of area Y without ``--by area``) is refused, naming the ``--by`` that
  separates them (:func:`check_nested`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from enade_bench.compare.table import ERROR_COLUMN, grouping_fields
from enade_bench.errors import UserError

__all__ = ["ErrorCounts", "check_errors", "check_nested", "replicate_warnings", "unpaired_items"]

#: ``<stem><sep><marker><digits>``: ``q00_r0``, ``q12-rep3``, ``item.sample2``, ``q1_run04``.
_REPLICATE_SUFFIX = re.compile(
    r"^(?P<stem>.+?)[_\-.:](?:r|rep|replicate|run|sample|seed|shuffle|perm|trial)(?P<k>\d+)$", re.IGNORECASE
)
_ONE_MODEL_SHARE = 0.9


@dataclass(frozen=True)
class ErrorCounts:
    """Records that ended in an error, per model and strategy (and in total)."""

    errors: dict[tuple[str, str], int]
    records: dict[tuple[str, str], int]

    def describe(self) -> str:
        """``model 'a' strategy S1: 28 errors of 28 records; …``."""
        return "; ".join(
            f"model {m!r}"
            + ("" if s == "-" else f" strategy {s}")
            + f": {n} error(s) of {self.records[(m, s)]} records"
            for (m, s), n in self.errors.items()
        )


def check_errors(table: pd.DataFrame, allow_errors: bool) -> ErrorCounts:
    """Count error records; refuse an incomplete run unless ``allow_errors``.

    Raises
    ------
    UserError
        Some model × strategy has error records and ``allow_errors`` is false.
    """
    if ERROR_COLUMN not in table.columns:
        return ErrorCounts({}, {})
    failed = table[ERROR_COLUMN].fillna("").astype(str) != ""
    records = table.groupby(["model", "strategy"], sort=False).size()
    errors = table[failed].groupby(["model", "strategy"], sort=False).size()
    counts = ErrorCounts(_keyed(errors), _keyed(records))
    if counts.errors and not allow_errors:
        raise UserError(
            f"incomplete runs (records that ended in an error are no answers): {counts.describe()}; "
            "rerun them to completion (finished answers are kept), or pass --allow-errors to "
            "compare the answered questions only"
        )
    return counts


def _keyed(sizes: pd.Series) -> dict[tuple[str, str], int]:
    return {(str(key[0]), str(key[1])): int(n) for key, n in sizes.items() if isinstance(key, tuple)}


def unpaired_items(strategy: str, stratum: str, answered: dict[str, pd.Index]) -> pd.DataFrame:
    """Items some models of a cell answered and others did not: one row per missing model × item."""
    every = pd.Index(sorted(set().union(*(set(items) for items in answered.values()))))
    rows = []
    for model, items in answered.items():
        for item in every.difference(items):
            others = [m for m, mine in answered.items() if item in mine]
            rows.append(
                {
                    "strategy": strategy,
                    "stratum": stratum,
                    "item": item,
                    "missing_for": model,
                    "answered_by": " | ".join(others),
                }
            )
    return pd.DataFrame(rows, columns=["strategy", "stratum", "item", "missing_for", "answered_by"])


def _folded(items: pd.Series) -> tuple[str, str] | None:
    """Two item ids of one stem with different replicate-like suffixes, if most ids look so."""
    unique = items.drop_duplicates()
    found = unique.str.extract(_REPLICATE_SUFFIX)
    matched = found.dropna()
    if len(unique) < 4 or len(matched) < 0.5 * len(unique):
        return None
    per_stem = matched.groupby("stem")["k"].nunique()
    if len(per_stem) < 2 or (per_stem >= 2).mean() < 0.5:
        return None
    stem = str(per_stem[per_stem >= 2].index[0])
    pair = unique[found["stem"] == stem].head(2).tolist()
    return str(pair[0]), str(pair[1])


def replicate_warnings(table: pd.DataFrame, cells: list[tuple[str, str, dict[str, pd.Index]]]) -> list[str]:
    """Warnings (with the fix) that replicate ids seem folded into item ids, or items do not pair."""
    warnings = []
    fix = (
        "give the question id in 'item' and the replicate (shuffle, sample, run) in a 'replicate' column: "
        "replicates are repeated measures of one question, not new questions"
    )
    for model, rows in table.groupby("model", sort=False):
        folded = _folded(rows["item"].astype(str))
        if folded is not None:
            warnings.append(
                f"model {model!r}: item ids {folded[0]!r} and {folded[1]!r} look like replicates of "
                f"one question folded into the id; {fix}"
            )
    for strategy, stratum, everything in cells:
        answered = {
            m: items for m, items in everything.items() if len(items)
        }  # all-error models are said apart
        if len(answered) < 2:
            continue
        counts = pd.Series([i for items in answered.values() for i in items]).value_counts()
        alone = float((counts == 1).mean()) if len(counts) else 0.0
        if alone > _ONE_MODEL_SHARE:
            cell = strategy if stratum == "all" else f"{strategy} ({stratum})"
            warnings.append(
                f"{cell}: {alone:.0%} of the items are answered by one model only, so few pairs "
                f"can be formed; check that the models' item ids match, and {fix}"
            )
    return warnings


def check_nested(rows: pd.DataFrame, by: list[str], cell: str) -> None:
    """Refuse a cell where one item id is several questions: items nested in a field not in ``--by``.

    Raises
    ------
    UserError
        Naming the item, the model and the field values it spans, with the ``--by`` that separates them.
    """
    dupes = rows.duplicated(["model", "item", "replicate"], keep=False)
    if not dupes.any():
        return
    first = rows[dupes].iloc[0]
    same = rows[dupes & (rows["model"] == first["model"]) & (rows["item"] == first["item"])]
    fields = [f for f in grouping_fields(rows) if f not in by and same[f].astype(str).nunique() > 1]
    spans = "; ".join(f"{f}: {', '.join(sorted(same[f].astype(str).unique()))}" for f in fields)
    fix = (
        f"compare them apart with {' '.join(f'--by {f}' for f in fields)}"
        if fields
        else "give each question its own id"
    )
    raise UserError(
        f"{cell}: item {first['item']!r} of model {first['model']!r} (replicate {first['replicate']!r}) "
        f"is several questions ({spans or 'the same fields'}): items are nested in those fields; {fix}"
    )
