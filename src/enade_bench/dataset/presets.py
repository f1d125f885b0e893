"""Dataset presets: how one exam's files map onto the canonical question fields.

A benchmark (see :mod:`enade_bench.benchmarks`) declares its preset; the loader
applies it before the config's own ``columns``, ``id_template`` and ``constants``,
which override it field by field.

A preset also declares the exam's own grouping ``fields`` (ENADE: ``year,
course, component``; ENEM: ``year, area, booklet, language, question_number``).
The loader fills :attr:`~enade_bench.dataset.schema.Question.fields` with them,
each record carries them under their own names, and the results break accuracy
down by the preset's ``breakdowns`` (default: every field). Where each field's
value comes from, first match wins:

1. a named group of the ``file_fields`` regular expression, matched against the
   file name (ENEM's booklet code is part of its file names);
2. ``constants``;
3. the file column that ``field_columns`` names;
4. the canonical field of that name (``year``, ``course``, ``component``);
5. the file column of the same name.

Fields in ``int_fields`` are whole numbers (an empty cell is ``None``); the
others are text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from enade_bench.dataset.schema import CANONICAL_FIELDS, LETTERS


@dataclass(frozen=True)
class DatasetPreset:
    """Column mapping, id template and constant fields of one exam's files.

    Attributes
    ----------
    name
        The ``dataset.preset`` value that selects it.
    columns
        Canonical field -> column in the file.
    id_template
        Builds the question id from columns (``{file_stem}`` is the file name
        without extension), or ``None`` to read the ``id`` column.
    constants
        Canonical or grouping fields constant for the whole file.
    fields
        The exam's grouping fields, in the order records and reports show them.
    field_columns
        Grouping field -> column in the file, where the names differ.
    file_fields
        Regular expression searched in the file name; its named groups are fields.
    int_fields
        Fields whose values are whole numbers.
    breakdowns
        Fields the results break accuracy down by (``None``: all of ``fields``).
    """

    name: str
    columns: dict[str, str] = field(default_factory=lambda: {n: n for n in CANONICAL_FIELDS})
    id_template: str | None = None
    constants: dict[str, str | int] = field(default_factory=dict)
    fields: tuple[str, ...] = ("year", "course", "component")
    field_columns: dict[str, str] = field(default_factory=dict)
    file_fields: str | None = None
    int_fields: frozenset[str] = frozenset({"year"})
    breakdowns: tuple[str, ...] | None = None

    @property
    def breakdown_fields(self) -> tuple[str, ...]:
        """The fields accuracy is broken down by."""
        return self.fields if self.breakdowns is None else self.breakdowns


#: ENADE-QA's canonical layout (the columns are the canonical field names).
ENADE = DatasetPreset("enade")
#: ENEM file names: ``ENEM_<year>_<area>_CO_PROVA_<booklet>.csv`` (booklet 0: unknown).
ENEM_FILE_NAME: Final = r"ENEM_\d{4}_[A-Za-z]{2}_CO_PROVA_(?P<booklet>\d+)"
#: The ENEM files of ``../shared/data/enem/questions``: ``area`` is the ``test`` column
#: (CH, CN, LC, MT), ``booklet`` the INEP ``CO_PROVA`` code of the file name (0 when
#: unknown: linked by answer key in the analysis), ``language`` the row's language
#: (LC items 1-5 exist in English and Spanish), ``question_number`` its booklet position.
ENEM = DatasetPreset(
    "enem",
    columns={
        "year": "year",
        "stem": "body",
        **{letter: letter for letter in LETTERS},
        "answer": "answer",
    },
    id_template="{file_stem}:{question_number}:{language}",
    fields=("year", "area", "booklet", "language", "question_number"),
    field_columns={"area": "test"},
    file_fields=ENEM_FILE_NAME,
    int_fields=frozenset({"year", "booklet", "question_number"}),
    breakdowns=("year", "area", "booklet", "language"),
)
#: Presets the loader knows without a benchmark (configs and tests that load data directly).
BUILTIN: dict[str, DatasetPreset] = {p.name: p for p in (ENADE, ENEM)}
