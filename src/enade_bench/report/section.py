"""What an analysis hands the report: a section of tables, figures, notes and CSV files.

Every analysis (ENEM's psychometrics and its IRT steps, the model comparison, E-EVAL's
leaderboard) is a pure function plus one :class:`Step` that turns its result into a
:class:`Section`.  The commands that show an analysis — its own command, ``report`` and
``study`` — call that one step; ``report`` only renders sections.  A step that cannot
run raises :class:`StepSkipped` with the reason, which the report prints instead of a
made-up result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

import pandas as pd

from enade_bench.report.figures import FigureFile
from enade_bench.report.table import Table

T = TypeVar("T")


class StepSkipped(Exception):
    """A step that cannot give a result here; the message says why (shown in the report)."""


@dataclass
class Section:
    """Tables, figures and notes for the report, and CSV files for its root folder.

    Attributes
    ----------
    tables, figures
        Rendered in order (tables as CSV/LaTeX/HTML, figures as PNG/PDF/HTML).
    notes
        One line each, shown under the tables (and printed by commands).
    files
        CSV name -> frame, written at the report folder's root with full precision.
    questions
        Question id -> label -> text: what the question browser shows of each question
        beside its records (ENEM: the INEP item's parameters and information).
    """

    tables: list[Table] = field(default_factory=list)
    figures: list[FigureFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: dict[str, pd.DataFrame] = field(default_factory=dict)
    questions: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def combine(cls, sections: Iterable[Section]) -> Section:
        """One section holding every part of ``sections``, in order."""
        out = cls()
        for part in sections:
            out.tables += part.tables
            out.figures += part.figures
            out.notes += part.notes
            out.files.update(part.files)
            for qid, shown in part.questions.items():
                out.questions.setdefault(qid, {}).update(shown)
        return out


@dataclass(frozen=True)
class Step(Generic[T]):
    """A named analysis step: ``run(data, figures_folder) -> Section``."""

    name: str
    title: str
    run: Callable[[T, Path], Section]


def run_steps(steps: Iterable[Step[T]], data: T, folder: Path) -> Section:
    """Run every step on ``data``; a skipped step adds its reason to the notes."""
    parts = []
    for step in steps:
        try:
            parts.append(step.run(data, folder))
        except StepSkipped as exc:
            parts.append(Section(notes=[f"{step.title}: {exc}"]))
    return Section.combine(parts)
