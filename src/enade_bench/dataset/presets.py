"""Dataset presets: how one exam's files map onto the canonical question fields.

A benchmark (see :mod:`enade_bench.benchmarks`) declares its preset (each exam's
lives in its own folder there); the loader applies it before the config's own
``columns``, ``id_template`` and ``constants``, which override it field by field.

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
others are text.  An experiment's ``dataset`` block can name its own fields
(``dataset.fields``, ``file_fields``; :func:`configured`), and a field's text can be
matched by a regular expression first (``dataset.field_patterns``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from enade_bench.config import DatasetConfig
from enade_bench.dataset.schema import CANONICAL_FIELDS


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


#: The canonical layout (the columns are the canonical field names; ENADE-QA's files).
CANONICAL = DatasetPreset("canonical")


def configured(preset: DatasetPreset, cfg: DatasetConfig) -> DatasetPreset:
    """``preset`` with the grouping fields an experiment's ``dataset`` block names.

    ``dataset.fields`` replaces the preset's fields (and its breakdowns): a list of
    names, each read from the column of that name, or a mapping name -> column;
    ``year`` among them is a whole number.  ``dataset.file_fields`` replaces the
    preset's file-name expression.
    """
    if cfg.fields is None and cfg.file_fields is None:
        return preset
    out = replace(preset, file_fields=cfg.file_fields or preset.file_fields)
    if cfg.fields is None:
        return out
    columns = cfg.fields if isinstance(cfg.fields, dict) else {n: n for n in cfg.fields}
    return replace(
        out,
        fields=tuple(columns),
        field_columns={n: c for n, c in columns.items() if n != c or n not in CANONICAL_FIELDS},
        int_fields=frozenset({"year"} & set(columns)),
        breakdowns=None,
    )
