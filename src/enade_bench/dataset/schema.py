"""The canonical ENADE-QA question schema.

Every loader turns its rows into :class:`Question` objects with these fields:

=============  =========================================================
field          meaning
=============  =========================================================
``id``         stable question id (unique in the file)
``year``       exam year (int) or ``None``
``course``     program, e.g. ``Medicina``, ``Enfermagem``
``component``  ``Formação Geral`` or ``Componente Específico``
``stem``       question text (non-empty)
``A``..``E``   option texts; trailing options may be empty (4-option items)
``answer``     correct letter, one of the non-empty options
``has_image``  the item depends on an image (filtered by default)
``cannot_fix`` the item has a known, unfixable flaw (filtered by default)
=============  =========================================================

Besides these, each question carries its exam's own typed grouping ``fields``
(ENADE: ``year, course, component``; ENEM: ``year, area, booklet, language,
question_number``; E-EVAL: ``subject, level``), declared by the exam's
:class:`~enade_bench.dataset.presets.DatasetPreset`. Records and breakdowns
carry these fields under their own names.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from enade_bench.results.summary import FieldValue

LETTERS = "ABCDE"
CANONICAL_FIELDS = (
    "id",
    "year",
    "course",
    "component",
    "stem",
    "A",
    "B",
    "C",
    "D",
    "E",
    "answer",
    "has_image",
    "cannot_fix",
    "cluster",
)
REQUIRED_FIELDS = ("id", "stem", "A", "B", "answer")


@dataclass(frozen=True)
class Question:
    """One multiple-choice item in the canonical schema."""

    id: str
    stem: str
    options: tuple[str, ...]
    answer: str
    year: int | None = None
    course: str = ""
    component: str = ""
    has_image: bool = False
    cannot_fix: bool = False
    extra: tuple[tuple[str, str], ...] = field(default=())
    #: The shared stimulus (a text several questions are asked about): questions with the same
    #: non-empty ``cluster`` are one cluster in the comparisons' standard errors
    #: (:mod:`enade_bench.dataset.clusters`).
    cluster: str = ""
    #: The exam's declared grouping fields, in declared order (see the module docstring).
    fields: dict[str, FieldValue] = field(default_factory=dict, hash=False)

    @property
    def letters(self) -> str:
        """Valid letters for this item, e.g. ``ABCD`` for a 4-option item."""
        return LETTERS[: len(self.options)]

    @property
    def n_options(self) -> int:
        return len(self.options)

    @property
    def answer_index(self) -> int:
        return LETTERS.index(self.answer)

    def content_hash(self) -> str:
        """sha256 of the stem, options and key: two runs can be compared item by item."""
        payload = json.dumps(
            {"stem": self.stem, "options": list(self.options), "answer": self.answer},
            ensure_ascii=False,
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()
