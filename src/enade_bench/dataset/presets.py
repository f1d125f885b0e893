"""Dataset presets: how one exam's files map onto the canonical question fields.

A benchmark (see :mod:`enade_bench.benchmarks`) declares its preset; the loader
applies it before the config's own ``columns``, ``id_template`` and ``constants``,
which override it field by field.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
        Canonical fields constant for the whole file (e.g. ``course: ENEM``).
    """

    name: str
    columns: dict[str, str] = field(default_factory=lambda: {n: n for n in CANONICAL_FIELDS})
    id_template: str | None = None
    constants: dict[str, str | int] = field(default_factory=dict)


#: ENADE-QA's canonical layout (the columns are the canonical field names).
ENADE = DatasetPreset("enade")
#: The ENEM files of ``../shared/data/enem/questions``.
ENEM = DatasetPreset(
    "enem",
    columns={
        "year": "year",
        "component": "test",
        "stem": "body",
        **{letter: letter for letter in LETTERS},
        "answer": "answer",
    },
    id_template="{file_stem}:{question_number}:{language}",
    constants={"course": "ENEM"},
)
#: Presets the loader knows without a benchmark (configs and tests that load data directly).
BUILTIN: dict[str, DatasetPreset] = {p.name: p for p in (ENADE, ENEM)}
