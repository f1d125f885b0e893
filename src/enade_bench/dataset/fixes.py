"""The config's fixes for rows the lint flags: ``dataset.exclude`` and ``dataset.stem_in_option``.

Applied after the lint has read every row and before the filters, so a fixed row's warning
is no longer a problem for ``validate --strict`` (:attr:`LoadedDataset.set_aside`), and every
question left out or changed is counted (``removed_excluded``, ``removed_stem_in_option``,
``repaired_stem_in_option``, ``unrepaired_stem_in_option``) and listed (:class:`Fix`): a
repair moves only the text a letter shows was cut (:func:`~.lint_context.repair_cut`), and
a row it cannot repair surely stays as it is, never dropped unless the config says ``drop``.
Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from enade_bench.config import DatasetConfig
from enade_bench.dataset.lint import LintWarning
from enade_bench.dataset.lint_context import repair_cut
from enade_bench.dataset.schema import Question
from enade_bench.errors import UserError, closest

__all__ = ["Fix", "apply_fixes"]

#: How much of a stem's end a fix shows, before and after.
TAIL = 60


def _end(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= TAIL else "…" + flat[-TAIL:]


@dataclass(frozen=True)
class Fix:
    """What ``dataset.stem_in_option`` did to one question: its stem's end before and after, or why
    it left the question as it is."""

    qid: str
    before: str
    after: str | None = None
    why: str = ""
    #: Option A once repaired.
    option: str = ""

    def __str__(self) -> str:
        where = f"question '{self.qid}': dataset.stem_in_option"
        if self.after is None:
            return f"{where}: left out (drop); the stem ended '{_end(self.before)}'"
        if self.why:
            return f"{where}: left as it is ({self.why}); the stem ends '{_end(self.before)}'"
        return (
            f"{where}: repaired; the stem ended '{_end(self.before)}', now ends '{_end(self.after)}'; "
            f"option A now reads '{_end(self.option)}'"
        )


def apply_fixes(
    questions: list[Question],
    cfg: DatasetConfig,
    warnings: list[LintWarning],
    counts: dict[str, int],
    fixes: list[Fix],
) -> list[Question]:
    """``questions`` without ``dataset.exclude``'s ids, with ``stem_in_option`` applied (module
    docstring); each question it changes, leaves out or cannot repair is appended to ``fixes``."""
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
    for q in questions:
        if q.id not in cut:
            out.append(q)
            continue
        if cfg.stem_in_option == "drop":
            fixes.append(Fix(q.id, q.stem))
            continue
        fixed, why = repair_cut(q)
        fixes.append(Fix(q.id, q.stem, fixed.stem, why, fixed.options[0]))
        out.append(fixed)
    done = [f for f in fixes if f.after is not None and not f.why]
    counts["removed_stem_in_option"] = len(questions) - len(out)
    if cfg.stem_in_option == "repair":
        counts["repaired_stem_in_option"] = len(done)
        counts["unrepaired_stem_in_option"] = len(fixes) - len(done)
    return out
