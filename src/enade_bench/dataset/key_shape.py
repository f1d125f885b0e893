"""Answer keys whose shape makes a join by id give wrong answers without any id failing.

Two shapes turn a join by id into a quiet disaster (issue 50):

*alternating blanks*
    A key extracted from a PDF table often holds a blank entry after almost every answer
    (``{"1": "B", "2": " ", "3": "D", …}``: 195 entries for 100 questions).  Skipping the
    blanks and joining by id gives question 3 the answer of question 2.  Found when at
    least :data:`MIN_BLANKS` entries and :data:`BLANK_SHARE` of all are blank, and
    :data:`ISOLATED_SHARE` of the blanks sit alone between two answers (an exam's few
    annulled items, left blank, are neither that many nor that regular).
*ids shifted by one*
    The key numbers its entries one above (or below) the questions' numbers.  All but one
    id still match, so with ``allow_extra`` and ``skip_invalid`` every question silently
    takes its neighbour's answer.  Found, per id prefix (the id without its trailing
    number), when shifting the key's numbers by ±1 matches more questions than the ids as
    written and at least :data:`SHIFTED_SHARE` of the prefix's questions.

Either is an error naming the shape ("blank" or "shift") with three example pairs, unless
``answer_key.match: position`` (the k-th non-blank entry answers the k-th question) or
``answer_key.accept_shape: true``.  Pure: no I/O.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from enade_bench.errors import UserError

__all__ = ["blank_shape_error", "shift_error"]

MIN_BLANKS = 4
BLANK_SHARE = 0.25
ISOLATED_SHARE = 0.75
SHIFTED_SHARE = 0.9
_TRAILING = re.compile(r"^(.*?)(\d+)(\D*)$")
_FIX = (
    "if the k-th answer of the key belongs to the k-th question, set dataset.answer_key.match: "
    "position; if the key is right as it is, set dataset.answer_key.accept_shape: true"
)


def _isolated_blanks(blank: Sequence[bool]) -> int:
    """How many blank entries have an answer (or the file's edge) on both sides."""
    n = len(blank)
    return sum(
        1
        for i, b in enumerate(blank)
        if b and (i == 0 or not blank[i - 1]) and (i == n - 1 or not blank[i + 1])
    )


def blank_shape_error(path: Path, entries: Sequence[tuple[str, str]]) -> UserError | None:
    """The error for a key whose answers alternate with blanks (module docstring), or ``None``.

    ``entries``: the key's (id, answer) pairs in file order, a blank answer as ``""``.
    """
    blank = [not answer.strip() for _, answer in entries]
    n_blank = sum(blank)
    if n_blank < MIN_BLANKS or n_blank < BLANK_SHARE * len(entries):
        return None
    isolated = _isolated_blanks(blank)
    if isolated < ISOLATED_SHARE * n_blank:
        return None
    first = next(i for i, b in enumerate(blank) if b)
    shown = entries[max(0, first - 1) : first + 2]
    example = ", ".join(f"key '{k}' = " + (f"'{a}'" if a.strip() else "blank") for k, a in shown)
    return UserError(
        f"{path}: dataset.answer_key: the key alternates answers and blank entries ({n_blank} of its "
        f"{len(entries)} entries are blank, {isolated} of them between two answers: {example}); joined by "
        "id, skipping the blanks would give questions their neighbours' answers; " + _FIX
    )


def _split(qid: str) -> tuple[str, int, str, int] | None:
    """(prefix, number, suffix, width of the number) of an id ending in a number."""
    found = _TRAILING.match(qid)
    if found is None:
        return None
    digits = found.group(2)
    return found.group(1), int(digits), found.group(3), len(digits) if digits.startswith("0") else 0


def _moved(qid: str, step: int) -> str | None:
    parts = _split(qid)
    if parts is None or parts[1] + step < 0:
        return None
    prefix, number, suffix, width = parts
    return f"{prefix}{number + step:0{width}d}{suffix}"


def shift_error(path: Path, question_ids: Iterable[str], key_ids: Iterable[str]) -> UserError | None:
    """The error for a key whose ids are shifted by ±1 against the questions' (module docstring).

    ``key_ids``: the key's ids with an answer (blank entries left out).
    """
    questions = list(dict.fromkeys(question_ids))
    keys = list(dict.fromkeys(key_ids))
    key_set = set(keys)
    groups: dict[str, list[str]] = defaultdict(list)
    for qid in questions:
        parts = _split(qid)
        groups[parts[0] if parts else qid].append(qid)
    for prefix, ids in groups.items():
        as_written = sum(q in key_set for q in ids)
        if as_written == len(ids):
            continue  # every question of the group finds its id: nothing to shift
        for step in (1, -1):
            pairs = [(q, k) for q in ids if (k := _moved(q, step)) is not None and k in key_set]
            if len(pairs) > as_written and len(pairs) >= SHIFTED_SHARE * len(ids):
                shown = ", ".join(f"question '{q}' ↔ key '{k}'" for q, k in pairs[:3])
                where = f" (ids '{prefix}…')" if prefix else ""
                return UserError(
                    f"{path}: dataset.answer_key: the key's ids look shifted by {step:+d} against the "
                    f"questions' ids{where}: {len(pairs)} of {len(ids)} questions match the key's id "
                    f"{'one above' if step > 0 else 'one below'} their own ({shown}), against "
                    f"{as_written} as written; joined by id, each question would take its neighbour's "
                    "answer; fix the key's ids, or " + _FIX
                )
    return None
