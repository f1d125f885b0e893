"""The config's fixes for rows the lint flags: ``dataset.exclude`` and ``dataset.stem_in_option``.

Applied after the lint has read every row and before the filters, so a fixed row's warning
is no longer a problem for ``validate --strict`` (:attr:`LoadedDataset.set_aside`), and every
question left out or changed is counted (``removed_excluded``, ``removed_stem_in_option``,
``repaired_stem_in_option``).  Pure: no I/O.
"""

from __future__ import annotations

from enade_bench.config import DatasetConfig
from enade_bench.dataset.lint import LintWarning
from enade_bench.dataset.lint_context import repair_cut
from enade_bench.dataset.schema import Question
from enade_bench.errors import UserError, closest

__all__ = ["apply_fixes"]


def apply_fixes(
    questions: list[Question], cfg: DatasetConfig, warnings: list[LintWarning], counts: dict[str, int]
) -> list[Question]:
    """``questions`` without ``dataset.exclude``'s ids, with ``stem_in_option`` applied (module docstring)."""
    ids = {q.id for q in questions}
    unknown = [qid for qid in cfg.exclude or () if qid not in ids]
    if unknown:
        raise UserError(
            f"dataset.exclude: no question has the id(s) {unknown}{closest(unknown, ids)} "
            "(ids as validate prints them, after dataset.id_template)"
        )
    excluded = set(cfg.exclude or ())
    if excluded:
        questions = [q for q in questions if q.id not in excluded]
        counts["removed_excluded"] = len(excluded)
    if cfg.stem_in_option == "warn":
        return questions
    cut = {w.qid for w in warnings if w.check == "stem_in_option"}
    out: list[Question] = []
    repaired = dropped = 0
    for q in questions:
        fixed = q if q.id not in cut else (repair_cut(q) if cfg.stem_in_option == "repair" else None)
        if fixed is None:
            dropped += 1
            continue
        repaired += fixed is not q
        out.append(fixed)
    counts["removed_stem_in_option"] = dropped
    if cfg.stem_in_option == "repair":
        counts["repaired_stem_in_option"] = repaired
    return out
