"""ENEM's file names and record ids, and its areas: what a command line or a results reader
needs of ENEM without its data stack (no pandas, no numpy).

* An exam file is named ``ENEM_<year>_<area>_CO_PROVA_<booklet>.csv`` (booklet 0: unknown,
  linked by answer key in the analysis).
* A record's id is ``<file stem>:<question_number>:<language>``; a version-1 results file
  kept the booklet, position and language only there (:func:`v1_fields`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: ENEM's four areas: human sciences, natural sciences, languages and codes, mathematics.
AREAS = ("CH", "CN", "LC", "MT")

#: ENEM file names: ``ENEM_<year>_<area>_CO_PROVA_<booklet>.csv`` (booklet 0: unknown).
ENEM_FILE_NAME = r"ENEM_\d{4}_[A-Za-z]{2}_CO_PROVA_(?P<booklet>\d+)"
_EXAM_FILE = re.compile(r"ENEM_(\d{4})_([A-Z]{2})_CO_PROVA_(\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class ExamFile:
    """What an exam file's name says: year, area and booklet (0 = unknown)."""

    year: int
    area: str
    co_prova: int


def parse_exam_filename(name: str | Path) -> ExamFile:
    """Parse ``ENEM_<year>_<area>_CO_PROVA_<code>.csv``.

    Raises
    ------
    ValueError
        If the name does not follow the pattern.
    """
    match = _EXAM_FILE.search(Path(name).name)
    if match is None:
        raise ValueError(f"{name}: expected a name like ENEM_2019_MT_CO_PROVA_522.csv")
    return ExamFile(int(match.group(1)), match.group(2).upper(), int(match.group(3)))


_ENEM_ID = re.compile(
    r"^ENEM_\d{4}_[A-Za-z]{2}_CO_PROVA_(?P<booklet>\d+):(?P<number>\d+):(?P<language>[^:]*)$"
)


def v1_fields(record: Mapping[str, object]) -> dict[str, object]:
    """ENEM fields of a version-1 record: the area was ``component``; booklet, position and
    language were only in the id (``<file stem>:<question_number>:<language>``)."""
    match = _ENEM_ID.match(str(record.get("id", "")))
    return {
        "year": record.get("year"),
        "area": record.get("component"),
        "booklet": int(match["booklet"]) if match else None,
        "language": match["language"] if match else None,
        "question_number": int(match["number"]) if match else None,
    }
