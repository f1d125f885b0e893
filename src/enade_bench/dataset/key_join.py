"""The join of questions and a separate answer key (``dataset.answer_key``), explained when it fails.

A join fails in two ways that usually come together: key ids that match no question, and
questions left without an answer.  One error names both sides, with a few ids of each,
how many matched, and a hint when the two sides look like different id schemes:

* a column of the questions holds the key's ids (``numero`` while the id is built from
  ``{ano}_{numero}``): join on that column;
* the ids differ only in case, spaces or leading zeros (``Q01`` and ``q1``);
* one side's ids end in the other's numbers (``exame_2023_q1`` and ``1``);
* the key's ids are numbers and the questions' are not (or the reverse).

The error is the same whether ``run``, ``run --dry-run`` or ``validate`` reads the data
(:func:`join_error`); ``skip_invalid`` skips questions the key lacks only when every key
id matched a question (or ``answer_key.allow_extra``), never a join that failed wholesale.

Before those counts, :func:`finish_join` checks what would make them mislead: a question
id that ``dataset.id_template`` cannot build (the first cause, named first), a key whose
ids are shifted against the questions' (:mod:`~enade_bench.dataset.key_shape`),
and for ``answer_key.match: position`` a key with fewer (or, without ``allow_extra``,
more) non-blank entries than question rows, or whose own ids, where every question finds
its id in the key, disagree with the positions (files read in another order than the key's).  A join that holds is summed up in a
:class:`KeyJoin`, with three joined examples, which ``validate`` prints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from enade_bench.config import AnswerKeyConfig
from enade_bench.dataset.answer_key import AnswerKey, ordinal
from enade_bench.dataset.key_shape import shift_error
from enade_bench.errors import UserError

__all__ = ["SHOWN", "KeyJoin", "Unanswered", "finish_join", "join_error", "scheme_hint"]

#: How many ids of each side the error quotes.
SHOWN = 5
_TRAILING_NUMBER = re.compile(r"(\d+)\D*$")
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class Unanswered:
    """A question whose id the key lacks: its id, where it is, and its row's cells (for the hint)."""

    qid: str
    where: str
    values: dict[str, str] = field(default_factory=dict, hash=False)


def _quoted(ids: list[str]) -> str:
    shown = ", ".join(f"'{i}'" for i in ids[:SHOWN])
    return shown + (f" … ({len(ids) - SHOWN} more)" if len(ids) > SHOWN else "")


def _plain(qid: str) -> str:
    """An id without case, spaces, punctuation between parts, or leading zeros of its numbers."""
    text = re.sub(r"[\s_\-.:/]+", "", qid.casefold())
    return _DIGITS.sub(lambda m: str(int(m.group())), text)


def _number(qid: str) -> str | None:
    found = _TRAILING_NUMBER.search(qid)
    return None if found is None else str(int(found.group(1)))


def _share(matches: int, total: int) -> bool:
    """Enough of one side matched to suggest a rule (half, at least one)."""
    return total > 0 and matches >= max(1, total // 2)


def scheme_hint(missing: list[Unanswered], extra: list[str]) -> str | None:
    """What the unmatched ids of the two sides suggest (module docstring), or ``None``."""
    if not missing or not extra:
        return None
    extra_set = set(extra)
    columns: dict[str, int] = {}
    for item in missing:
        for column, value in item.values.items():
            if value.strip() in extra_set:
                columns[column] = columns.get(column, 0) + 1
    if columns:
        column, n = max(columns.items(), key=lambda kv: kv[1])
        if _share(n, len(missing)):
            return (
                f"column '{column}' of the questions holds the key's ids ({n} of the {len(missing)} "
                f"unanswered rows): join on it with dataset.columns: {{id: {column}}}, or put "
                f"{{{column}}} in dataset.id_template"
            )
    plain_extra = {_plain(e) for e in extra}
    n = sum(_plain(m.qid) in plain_extra for m in missing)
    if _share(n, len(missing)):
        return (
            "the ids differ only in case, spaces, separators or leading zeros "
            f"('{missing[0].qid}' and '{extra[0]}'): write them alike in both files"
        )
    example = f"questions' ids look like '{missing[0].qid}', the key's like '{extra[0]}'"
    numbers = {_number(m.qid) for m in missing} - {None}
    if _share(len(numbers & ({_number(e) for e in extra} - {None})), len(missing)):
        if all(e.isdigit() for e in extra):
            return (
                f"different id schemes ({example}): the key is numbered by question number; give the "
                "questions the same ids, e.g. dataset.columns: {id: <the column holding the number>}"
            )
        return (
            f"different id schemes ({example}): both end in the same numbers; write the ids alike "
            "(dataset.id_template builds the questions' ids from their columns)"
        )
    if all(e.isdigit() for e in extra) != all(m.qid.isdigit() for m in missing):
        return f"different id schemes? ({example}); does dataset.columns.id name the column the key's ids come from?"
    return None


def join_error(
    key: AnswerKey, missing: list[Unanswered], allow_extra: bool, skip_missing: bool
) -> UserError | None:
    """One error naming both sides of a failed join, or ``None`` when the join holds.

    ``missing``: the questions without an answer in the key.  Key ids matching no question
    are an error unless ``allow_extra``; then the questions without an answer are listed
    too, whatever ``skip_missing`` (``dataset.skip_invalid``) says.  Questions without an
    answer alone are an error unless ``skip_missing``.
    """
    extra = [
        kid
        for kid in key.answers
        if kid not in key.used and not (key.match == "position" and kid in key.blank)
    ]
    failed_extra = bool(extra) and not allow_extra
    if not failed_extra and (not missing or skip_missing):
        return None
    parts: list[str] = []
    if missing:
        parts.append(
            f"{len(missing)} question(s) have no answer in the key: {_quoted([m.qid for m in missing])} "
            f"(first at {missing[0].where})"
        )
    if failed_extra:
        parts.append(
            f"{len(extra)} key id(s) match no question: {_quoted(extra)} (a key for several booklets: "
            "set dataset.answer_key.allow_extra: true)"
        )
    if skip_missing and missing:
        parts.append(
            "dataset.skip_invalid skips questions without an answer only when every key id matches a question"
        )
    hint = scheme_hint(missing, extra)
    return UserError(
        f"{key.path}: dataset.answer_key: {'; '.join(parts)}; {len(key.used)} id(s) matched "
        "(ids are compared as text: the question's id, after dataset.id_template, with the key's)"
        + (f"; hint: {hint}" if hint else "")
    )


@dataclass(frozen=True)
class KeyJoin:
    """A join that holds: how it matched, what each side left over, and three joined examples."""

    key: str
    match: str
    answered: int
    #: Key entries (with an answer) that answer no question (``allow_extra``).
    unused: int
    #: Questions the key lacks, skipped (``skip_invalid``).
    unanswered: int
    #: ``question 'id' → B (key '1')``, the first three questions joined.
    examples: tuple[str, ...]

    def __str__(self) -> str:
        how = "by position (the k-th non-blank entry)" if self.match == "position" else "by id"
        parts = [f"{self.answered} question(s) answered"]
        if self.unused:
            parts.append(f"{self.unused} key entr(ies) unused (answer_key.allow_extra)")
        if self.unanswered:
            parts.append(f"{self.unanswered} question(s) without an answer skipped (dataset.skip_invalid)")
        return f"answer key {self.key}, joined {how}: {', '.join(parts)}; e.g. {'; '.join(self.examples)}"


def _position_error(key: AnswerKey, rows: list[tuple[str, str]], allow_extra: bool) -> UserError | None:
    """``match: position``: the key has an entry for every question row (and, unless ``allow_extra``, no more)."""
    entries = key.entries
    counts = f"the key has {len(entries)} non-blank entries and the questions {len(rows)} row(s)"
    if len(rows) > len(entries):
        qid, where = rows[len(entries)]
        return UserError(
            f"{key.path}: dataset.answer_key.match: position: {counts}; question '{qid}' ({where}) and "
            "those after it have no entry (is an annulled item's entry blank? write a marker, e.g. '-', "
            "and add it to dataset.annulled_answers)"
        )
    if len(entries) > len(rows) and not allow_extra:
        return UserError(
            f"{key.path}: dataset.answer_key.match: position: {counts}; entries from "
            f"{key.where[entries[len(rows)]].removeprefix(f'{key.path}: ')} on answer no question (set "
            "dataset.answer_key.allow_extra: true if the key covers more than this file)"
        )
    # every question's own id has an answer in the key: the key's ids can be read, and must agree
    if all(key.answers.get(qid) for qid, _ in rows):
        wrong = [(qid, where) for qid, where in rows if key.bound.get(qid) != qid]
        if wrong:
            qid, where = wrong[0]
            return UserError(
                f"{key.path}: dataset.answer_key.match: position: question '{qid}' ({where}) is the "
                f"{ordinal(rows.index(wrong[0]) + 1)} row read and takes key '{key.bound.get(qid)}' by "
                f"position, but the key holds an entry of its own id '{qid}' ({len(wrong)} of "
                f"{len(rows)} questions disagree so): the rows are not in the key's order; join by id "
                "(leave out dataset.answer_key.match)"
            )
    return None


def finish_join(
    key: AnswerKey,
    cfg: AnswerKeyConfig,
    rows: list[tuple[str, str]],
    missing: list[Unanswered],
    skip_missing: bool,
    loaded: list[str],
    unfilled: list[UserError],
) -> KeyJoin:
    """Check the join once every question row is read (module docstring), first cause first.

    ``rows``: (question id, where) of every row read, annulled ones included, in file order;
    ``missing``: the questions the key lacks; ``loaded``: the ids of the questions loaded;
    ``unfilled``: the rows whose id ``dataset.id_template`` cannot build, the first cause of a
    failed join (raised instead of its counts).  Raises the first error found.
    """
    if cfg.match == "position":
        problem = _position_error(key, rows, cfg.allow_extra)
    elif not cfg.accept_shape:
        problem = shift_error(key.path, [qid for qid, _ in rows], key.entries)
    else:
        problem = None
    problem = problem or join_error(key, missing, cfg.allow_extra, skip_missing)
    if problem is not None and unfilled:
        more = f"; and {len(unfilled) - 1} more row(s) like it" if len(unfilled) > 1 else ""
        raise UserError(f"{unfilled[0]}{more} (so the answer key cannot be joined)")
    if problem is not None:
        raise problem
    answered = [qid for qid in loaded if key.key_id(qid) in key.used]
    examples = tuple(
        f"question '{qid}' → {key.answers[key.key_id(qid)]} "
        f"({key.where_of(qid).removeprefix(f'{key.path}: ')})"
        for qid in answered[:3]
    )
    used = {key.key_id(qid) for qid in answered}
    return KeyJoin(
        key=key.path.name,
        match=cfg.match,
        answered=len(answered),
        unused=sum(kid not in used for kid in key.entries),
        unanswered=len(missing),
        examples=examples,
    )
