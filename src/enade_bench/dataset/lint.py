"""What text extraction from a PDF leaves in an exam file, flagged before a model reads it.

Exam files made from PDFs carry debris no row check catches: the row is well formed, but
the model reads a page footer as part of option D.  :func:`lint` looks at the loaded
questions of a dataset (pure: no I/O, linear in the text) and returns one
:class:`LintWarning` per finding, naming the question:

``repeated_tail``
    A text that ends the stem or an option of many questions (at least
    :data:`MIN_REPEATS` and :data:`MIN_SHARE` of them) after varied texts: a page footer or
    header (``2023 SEGUNDA EDIÇÃO``, ``ÁREA LIVRE``), or chart labels.  It must hold no
    lower-case letter, or end options only, after a full stop (or other end of sentence)
    in most occurrences and without one of its own, so that a phrase stems or options
    share by design (``Assinale a opção correta.``, ``… está correta.``) is not flagged.
``stem_in_option``
    The stem ends mid-sentence and looks cut into option A: a stem under :data:`SHORT_STEM`
    characters with an option A over :data:`LONG_OPTION`, or an option A :data:`RATIO` times
    longer than the longest of its siblings (and :data:`LONG_OPTION` characters more).  A
    complete stem (ending ``.``, ``?``, ``:``…) is never flagged: its option A is its own.
``long_option``
    Another option :data:`RATIO` times longer than the longest of its siblings, or longer
    than :data:`HUGE_OPTION` characters (a questionnaire, a page glued on).
``numeric_residue``
    A run of numbers with equal steps (``55 60 65 70``: a chart's axis) or of
    :data:`NUMBER_RUN` numbers or more, or a page number after the last sentence of an
    option (``… correta. 17``).
``image_marker``
    ``[[…]]``, ``<img``, ``![…](…)``, ``(figura)``/``[imagem]`` and the like: the question
    points at an image the model cannot see.  ``dataset.image_markers: true`` marks such
    questions as depending on an image, so ``filter_images`` drops them (counted as
    ``removed_has_image``) whatever the file's shape.
``missing_context``, ``short_stem``, ``image_reference`` and the cut forms of ``stem_in_option``
    What a question points at but does not hold: :mod:`enade_bench.dataset.lint_context`.
``duplicate_stem``
    Two questions with the same stem (whitespace and case ignored), at least
    :data:`MIN_STEM` characters long: the same question twice, or items on one text whose
    stem lost the part that told them apart.

The thresholds are rules of thumb, chosen on the shapes users brought (issue 42); a
warning is a pointer to a row to read, not a verdict.  ``dataset.strip`` removes a
footer the lint found (:mod:`enade_bench.dataset.strip`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import pairwise

from enade_bench.dataset.lint_context import context_checks, cut_off, image_reference
from enade_bench.dataset.schema import LETTERS, Question

__all__ = ["LintWarning", "has_image_marker", "lint"]

MIN_REPEATS = 3
MIN_SHARE = 0.05
#: Longest repeated tail looked for, in words.
MAX_TAIL_WORDS = 8
#: The end of a text the tails are read from, and the words before a tail compared across texts.
_TAIL_CHARS = 400
_BEFORE_WORDS = 6
SHORT_STEM = 40
LONG_OPTION = 250
HUGE_OPTION = 1500
RATIO = 4.0
NUMBER_RUN = 8
MIN_STEM = 30

IMAGE_MARKER = re.compile(
    r"\[\[[^\]]{0,200}\]\]|<img\b|!\[[^\]]{0,200}\]\(|"
    r"[(\[]\s*(?:figura|imagem|image|figure|gr[áa]fico|ilustra[çc][ãa]o|foto)\b[^)\]]{0,40}[)\]]",
    re.IGNORECASE,
)
_NUMBER = r"\d+(?:[.,]\d+)?"
_NUMBER_RUN = re.compile(rf"(?<![\w.,]){_NUMBER}(?:\s+{_NUMBER}){{3,}}(?![\w.,])")
_PAGE_NUMBER = re.compile(r"[.!?;]\s+\d{1,3}$")
_SENTENCE_END = re.compile(r"[.!?:;)\]]$")


@dataclass(frozen=True)
class LintWarning:
    """One finding: which check, which question, what was seen."""

    check: str
    qid: str
    message: str

    def __str__(self) -> str:
        return f"question '{self.qid}': {self.message} [{self.check}]"


def has_image_marker(question: Question) -> bool:
    """Whether the stem or an option holds an image or placeholder marker, or the stem names an image
    without brackets (``a figura abaixo``: :func:`~enade_bench.dataset.lint_context.image_reference`)."""
    return any(IMAGE_MARKER.search(text) for text in (question.stem, *question.options)) or bool(
        image_reference(question.stem)
    )


def _excerpt(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _exclude(qid: str) -> str:
    """The config fix of a row that only an edit can repair."""
    return f"; fix the row, or leave it out with dataset.exclude: ['{qid}']"


def _texts(q: Question) -> list[tuple[str, str]]:
    """(where, text) of a question's stem and options."""
    return [("stem", q.stem), *((f"option {LETTERS[i]}", o) for i, o in enumerate(q.options))]


def _repeated_tails(questions: Sequence[Question]) -> list[LintWarning]:
    need = max(MIN_REPEATS, round(MIN_SHARE * len(questions)))
    order = {q.id: i for i, q in enumerate(questions)}
    by_id = {q.id: q for q in questions}
    seen: dict[str, set[str]] = defaultdict(set)  # tail -> question ids
    before: dict[str, list[str]] = defaultdict(list)  # tail -> the text before it, per occurrence
    places: dict[tuple[str, str], str] = {}
    for q in questions:
        for where, text in _texts(q):
            words = text[-_TAIL_CHARS:].split() if len(text) > _TAIL_CHARS else text.split()
            for k in range(1, min(MAX_TAIL_WORDS, len(words) - 1) + 1):
                tail = " ".join(words[-k:])
                if len(tail) < 4:
                    continue
                seen[tail].add(q.id)
                before[tail].append(" ".join(words[max(0, len(words) - k - _BEFORE_WORDS) : -k]))
                places.setdefault((tail, q.id), where)
    found: list[tuple[str, set[str]]] = []
    for tail, ids in seen.items():
        if len(ids) < need:
            continue
        prefixes = before[tail]
        if len(set(prefixes)) < 0.8 * len(prefixes):
            continue  # the text before repeats too: a phrase shared by design
        if any(c.islower() for c in tail):  # words: only a line glued after an option's last sentence
            ends = sum(bool(_SENTENCE_END.search(p)) for p in prefixes)
            in_options = all(places[(tail, qid)] != "stem" for qid in ids)
            if not in_options or ends < 0.8 * len(prefixes) or _SENTENCE_END.search(tail):
                continue
        found.append((tail, ids))
    out = []
    kept: list[str] = []
    for tail, ids in sorted(found, key=lambda f: -len(f[0])):  # the longest tail of a footer only
        if any(k.endswith(tail) and len(seen[k]) >= 0.8 * len(ids) for k in kept):
            continue
        kept.append(tail)
        for qid in sorted(ids, key=order.__getitem__):
            written = _as_written(dict(_texts(by_id[qid]))[places[(tail, qid)]], tail)
            exact = "" if written == tail else f" (as written: '{written}')"
            out.append(
                LintWarning(
                    "repeated_tail",
                    qid,
                    f"{places[(tail, qid)]} ends with '{_excerpt(tail)}'{exact}, as do texts of {len(ids)} "
                    f"questions (a page footer or header? dataset.strip: ['{_excerpt(tail)}'] removes it, "
                    "whatever the white space between its words)",
                )
            )
    return out


def _as_written(text: str, tail: str) -> str:
    """``tail`` as it ends ``text``, its white space made visible (``␣×8`` for 8 spaces, ``⏎``, ``⇥``)."""
    found = re.search(r"\s+".join(map(re.escape, tail.split())) + r"\s*$", text)
    if found is None:
        return tail
    return _VISIBLE.sub(_visible, found.group().rstrip())


_VISIBLE = re.compile(r"\s+")


def _visible(run: re.Match[str]) -> str:
    space = run.group()
    if space == " ":
        return " "
    if set(space) == {" "}:
        return f"␣×{len(space)}"
    return "".join({"\n": "⏎", "\t": "⇥", " ": "␣"}.get(c, "␣") for c in space)


def _lengths(q: Question) -> list[LintWarning]:
    out = []
    sizes = [len(o) for o in q.options]
    for i, size in enumerate(sizes):
        others = max((s for j, s in enumerate(sizes) if j != i), default=0)
        ratio_long = size >= RATIO * max(others, 1) and size - others >= LONG_OPTION
        if i == 0 and cut_off(q.stem) and ((len(q.stem) < SHORT_STEM and size > LONG_OPTION) or ratio_long):
            out.append(
                LintWarning(
                    "stem_in_option",
                    q.id,
                    f"stem of {len(q.stem)} characters ending mid-sentence, option A of {size} (the others "
                    f"at most {others}): the stem cut into option A? option A reads "
                    f"'{_excerpt(q.options[0])}'; dataset.stem_in_option: repair moves the cut text back "
                    "where option A's letter shows its end, drop leaves the question out",
                )
            )
        elif (ratio_long and i > 0) or size > HUGE_OPTION:  # a long option A after a whole stem is its own
            out.append(
                LintWarning(
                    "long_option",
                    q.id,
                    f"option {LETTERS[i]} has {size} characters, the others at most {others}: "
                    f"'{_excerpt(q.options[i])}'{_exclude(q.id)}",
                )
            )
    return out


def _steps_equal(run: str) -> bool:
    values = [float(v.replace(",", ".")) for v in run.split()]
    steps = {round(b - a, 6) for a, b in pairwise(values)}
    return len(steps) == 1 and steps != {0.0}


def _residue(q: Question) -> list[LintWarning]:
    out = []
    for where, text in _texts(q):
        for match in _NUMBER_RUN.finditer(text):
            run = match.group()
            if _steps_equal(run) or len(run.split()) >= NUMBER_RUN:
                out.append(
                    LintWarning(
                        "numeric_residue",
                        q.id,
                        f"{where} holds the numbers '{_excerpt(run)}' (a chart or table "
                        f"flattened into text?){_exclude(q.id)}",
                    )
                )
                break
        if where != "stem" and _PAGE_NUMBER.search(text):
            out.append(
                LintWarning(
                    "numeric_residue",
                    q.id,
                    f"{where} ends with a number after its last sentence: "
                    f"'…{text[-30:]}' (a page number? dataset.strip removes it){_exclude(q.id)}",
                )
            )
    return out


def _markers(q: Question) -> list[LintWarning]:
    if q.has_image:
        return []  # filtered by filter_images (and flagged by the data)
    for where, text in _texts(q):
        found = IMAGE_MARKER.search(text)
        if found:
            return [
                LintWarning(
                    "image_marker",
                    q.id,
                    f"{where} holds '{_excerpt(found.group(), 40)}': the question shows an image the model "
                    "cannot see (dataset.image_markers: true drops such questions)",
                )
            ]
    return []


def _duplicates(questions: Sequence[Question]) -> list[LintWarning]:
    first: dict[str, Question] = {}
    out = []
    for q in questions:
        stem = " ".join(q.stem.casefold().split())
        if len(stem) < MIN_STEM:
            continue
        if stem in first:
            other = first[stem]
            same = (
                "and the same options: the same question twice?"
                if other.options == q.options
                else ("with other options: did the stem lose what tells them apart?")
            )
            out.append(
                LintWarning(
                    "duplicate_stem", q.id, f"the same stem as question '{other.id}', {same}{_exclude(q.id)}"
                )
            )
        else:
            first[stem] = q
    return out


def lint(questions: Sequence[Question], without_context: Collection[str] = ()) -> list[LintWarning]:
    """Every finding of the checks in the module docstring, by question (file order), then check.

    ``without_context``: ids of rows whose composed stem (``dataset.stem``) has an empty context.
    """
    per_question = [w for q in questions for w in (*_lengths(q), *_residue(q), *_markers(q))]
    found = per_question + _repeated_tails(questions) + _duplicates(questions)
    flagged = {(w.check, w.qid) for w in found}
    found += [
        LintWarning(check, qid, message)
        for check, qid, message in context_checks(questions, without_context)
        if (check, qid) not in flagged  # one stem_in_option warning a question, and one about its image
        and not (check == "image_reference" and ("image_marker", qid) in flagged)
    ]
    order = {q.id: i for i, q in enumerate(questions)}
    checks = [
        "repeated_tail",
        "stem_in_option",
        "long_option",
        "numeric_residue",
        "image_marker",
        "image_reference",
        "missing_context",
        "short_stem",
        "duplicate_stem",
    ]
    return sorted(found, key=lambda w: (order.get(w.qid, -1), checks.index(w.check)))


def counts(warnings: Sequence[LintWarning]) -> dict[str, int]:
    """How many warnings each check gave."""
    return dict(Counter(w.check for w in warnings))
