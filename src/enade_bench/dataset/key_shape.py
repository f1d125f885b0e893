"""Answer keys whose shape makes a join by id give wrong answers without any id failing.

Two shapes turn a join by id into a quiet disaster (issues 50 and 60):

*blanks between answers*
    A key extracted from a PDF table often holds blank entries between its answers: one after
    almost every answer (``{"1": "B", "2": " ", "3": "D", …}``: 195 entries for 100 questions),
    two after each, or runs of any length.  Skipping the blanks and joining by id gives question
    3 the answer of question 2.  Found when at least :data:`MIN_BLANKS` runs of blanks lie
    between answers, they hold :data:`BLANK_SHARE` of the entries from the first answer to the
    last, and :data:`MOVED_SHARE` of the answers come after one (the k-th answer is not the
    k-th entry): an exam's few annulled items, left blank, are neither that many nor move that
    many answers; blanks before the first answer or after the last move none.
*ids shifted*
    The key numbers its entries some fixed offset above (or below) the questions' numbers.  All
    but a few ids still match, so with ``allow_extra`` and ``skip_invalid`` every question
    silently takes another's answer.  Found, per id prefix (the id without its trailing number),
    when shifting the questions' numbers by an offset (the commonest difference between the
    two sides' numbers, in order, or ±1) matches more questions than the ids as written and at
    least :data:`SHIFTED_SHARE` of the prefix's questions; the error names that offset.

Either is an error naming the shape with three example pairs, and the form that reads such a
key, ``answer_key.match: position`` (the k-th non-blank entry answers the k-th question); a
key checked by hand and right as it is passes with ``answer_key.accept_shape: true``, which
no message suggests (it keeps every answer where it is).  Pure: no I/O.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from enade_bench.errors import UserError

__all__ = ["blank_shape_error", "shift_error"]

MIN_BLANKS = 4
BLANK_SHARE = 0.25
MOVED_SHARE = 0.5
SHIFTED_SHARE = 0.9
_TRAILING = re.compile(r"^(.*?)(\d+)(\D*)$")
_FIX = "if the k-th answer of the key belongs to the k-th question, set dataset.answer_key.match: position"


def blank_shape_error(path: Path, entries: Sequence[tuple[str, str]]) -> UserError | None:
    """The error for a key with blanks between its answers (module docstring), or ``None``.

    ``entries``: the key's (id, answer) pairs in file order, a blank answer as ``""``.
    """
    answered = [i for i, (_, answer) in enumerate(entries) if answer.strip()]
    if not answered:
        return None
    span = "".join("a" if entries[i][1].strip() else "b" for i in range(answered[0], answered[-1] + 1))
    runs = [len(run) for run in re.findall("b+", span)]
    moved = sum(i - answered[0] != k for k, i in enumerate(answered))
    if len(runs) < MIN_BLANKS or sum(runs) < BLANK_SHARE * len(span) or moved < MOVED_SHARE * len(answered):
        return None
    first = answered[0] + span.index("b")
    shown = entries[first - 1 : first + span[first - answered[0] :].index("a") + 1]
    example = ", ".join(f"key '{k}' = " + (f"'{a}'" if a.strip() else "blank") for k, a in shown)
    lengths = ", ".join(f"{n} of {length}" for length, n in sorted(Counter(runs).items())[:3])
    return UserError(
        f"{path}: dataset.answer_key: the key has blank entries between its answers ({sum(runs)} blanks "
        f"in {len(runs)} runs between two answers, runs of length: {lengths}; {example}); joined by id, "
        f"skipping the blanks would give {moved} of its {len(answered)} answers to another question than "
        "the one their rank among the answers says; " + _FIX
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


def _offsets(questions: list[int], keys: list[int]) -> list[int]:
    """The offsets worth trying: the commonest difference between the two sides' numbers in order, ±1."""
    differences = Counter(k - q for q, k in zip(sorted(questions), sorted(keys), strict=False))
    common = [d for d, _ in differences.most_common(1) if d]
    return [*common, *(d for d in (1, -1) if d not in common)]


def shift_error(path: Path, question_ids: Iterable[str], key_ids: Iterable[str]) -> UserError | None:
    """The error for a key whose ids are shifted against the questions' (module docstring).

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
        numbers = [parts[1] for k in keys if (parts := _split(k)) and parts[0] == prefix]
        best: list[tuple[str, str]] = []
        found = 0
        for step in _offsets([p[1] for q in ids if (p := _split(q))], numbers):
            pairs = [(q, k) for q in ids if (k := _moved(q, step)) is not None and k in key_set]
            if len(pairs) > max(len(best), as_written) and len(pairs) >= SHIFTED_SHARE * len(ids):
                best, found = pairs, step
        if best:
            shown = ", ".join(f"question '{q}' ↔ key '{k}'" for q, k in best[:3])
            where = f" (ids '{prefix}…')" if prefix else ""
            return UserError(
                f"{path}: dataset.answer_key: the key's ids look shifted by {found:+d} against the "
                f"questions' ids{where}: {len(best)} of {len(ids)} questions match the key's id "
                f"{abs(found)} {'above' if found > 0 else 'below'} their own ({shown}), against "
                f"{as_written} as written; joined by id, each question would take another's answer; fix "
                "the key's ids, or " + _FIX
            )
    return None
