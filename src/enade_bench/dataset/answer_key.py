"""An answer key in a second file, joined to the questions by id (``dataset.answer_key``).

Many published exams ship the questions and the answer key apart: a medical licensing
exam's questions as a JSON list and its key as a JSON object keyed by question number
(``{"1": "B", "2": "D", …}``), or a key as a CSV table. The key file is read whole
before the questions, in one of three shapes:

* a JSON object keyed by id whose values are the answers (``{"1": "B"}``), or objects
  holding the answer under ``answer_key.answer`` (``{"1": {"gabarito": "B"}}``);
* a JSON list of objects, or JSON Lines, with ``answer_key.id`` and ``answer_key.answer``;
* a CSV file with those two columns.

Ids are compared as text after trimming (a JSON number ``1`` is the id ``"1"``, as a
question's cell is read). A repeated id, a JSON ``NaN`` or a list where an answer is
expected is an ``error:`` naming the key file and the id.  A blank entry (empty or
``null``) is an error too, unless ``answer_key.blank`` says what it means: ``annulled``
(the item is annulled, counted as such) or ``skip`` (left out, counted as
``removed_blank_in_key``).  Which question ids the key lacks, and which key ids match no
question, are listed in one error by :func:`~enade_bench.dataset.key_join.join_error`
once every question file is read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from enade_bench import json_io
from enade_bench.config import AnswerKeyConfig
from enade_bench.dataset.key_shape import blank_shape_error
from enade_bench.dataset.sources import cell_text, file_sha256, is_nonfinite, read_rows
from enade_bench.errors import UserError, as_given
from enade_bench.regular_file import NotRegularFile, check_regular, read_text


@dataclass
class AnswerKey:
    """The answers of a key file by question id, and which ids were used.

    Joined by id (``answer_key.match: id``), a question takes the entry of its own id.
    Joined by position (``match: position``), the loader :meth:`bind` s each question row,
    in file order, to the next non-blank entry of the key, in the key file's order.
    """

    #: The key file as messages name it (:func:`~enade_bench.errors.as_given`); read by this path when
    #: loaded (relative to the current folder then), hashed by :attr:`recorded`.
    path: Path
    #: The answers by key id, in the key file's order (a blank entry is ``""``).
    answers: dict[str, str]
    #: Where each id's answer is, for error messages ("line 4" or "key '7'").
    where: dict[str, str]
    used: set[str] = field(default_factory=set)
    #: Ids whose key entry is blank (empty or null), read under ``answer_key.blank: annulled | skip``.
    blank: set[str] = field(default_factory=set)
    match: str = "id"
    #: ``match: position``: question id -> the key id bound to it.
    bound: dict[str, str] = field(default_factory=dict)
    #: The column holding the answers (a CSV or JSON-rows key; ``None``: a JSON object keyed by id).
    column: str | None = None
    #: The key file's path as ``dataset.sources`` records it (joined to the config's folder).
    recorded: str = ""

    @property
    def source(self) -> dict[str, str]:
        """The key file as ``dataset.sources`` records it (a changed key changes the run's data)."""
        # the real path, not the one messages name: the current folder may change
        real = Path(self.recorded) if self.recorded else self.path
        return {"path": str(real), "sha256": file_sha256(real), "role": "answer_key"}

    @cached_property
    def entries(self) -> list[str]:
        """The key ids with an answer (not blank), in the key file's order (read once: the key is
        whole before the first row is bound)."""
        return [kid for kid, answer in self.answers.items() if answer]

    def bind(self, qid: str) -> None:
        """``match: position``: give question ``qid`` the next unbound non-blank entry (if any is left)."""
        if self.match != "position" or qid in self.bound:
            return
        entries = self.entries
        if len(self.bound) < len(entries):
            self.bound[qid] = entries[len(self.bound)]

    def key_id(self, qid: str) -> str:
        """The key id that answers question ``qid``: its own id, or the entry bound to it."""
        return self.bound.get(qid.strip(), "") if self.match == "position" else qid.strip()

    def answer(self, qid: str) -> str | None:
        """The answer of question ``qid`` (``None``: not in the key)."""
        kid = self.key_id(qid)
        found = self.answers.get(kid)
        if found is not None:
            self.used.add(kid)
        return found

    def where_of(self, qid: str) -> str:
        """Where the answer of question ``qid`` is in the key file."""
        kid = self.key_id(qid)
        if self.match == "position":
            return f"{self.where[kid]} (its {ordinal(self.entries.index(kid) + 1)} non-blank entry)"
        return self.where[kid]


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th`` … ``11th``, ``12th``, ``13th`` … ``21st``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _answer_text(value: Any, where: str) -> str:
    """The answer of one key entry (a blank one: ``""``)."""
    if is_nonfinite(value):
        raise UserError(f"{where}: {json.dumps(value)} is not an answer (write the letter, or null)")
    if isinstance(value, list | dict | bool):
        raise UserError(f"{where}: expected the answer as a text (a letter), got {json.dumps(value)[:40]}")
    return cell_text(value).strip()


def _checked(key: AnswerKey, cfg: AnswerKeyConfig) -> AnswerKey:
    """The key once its shape holds: no alternating blanks for a join by id, blanks as ``cfg.blank`` says."""
    key.match = cfg.match
    key.blank = {qid for qid, answer in key.answers.items() if not answer}
    if len(key.blank) == len(key.answers):
        raise UserError(f"{key.path}: the answer key holds no answer")
    if cfg.match == "position":
        return key  # blank entries are not entries: the k-th answer answers the k-th question
    if not cfg.accept_shape:
        problem = blank_shape_error(key.path, list(key.answers.items()))
        if problem is not None:
            raise problem
    if key.blank and cfg.blank == "error":
        first = next(qid for qid in key.answers if qid in key.blank)
        column = "" if key.column is None else f", column '{key.column}'"
        raise UserError(
            f"{key.where[first]}{column}: empty answer; if the key leaves annulled or unscored items blank, set "
            "dataset.answer_key.blank: annulled (counted as annulled) or skip (left out, counted as "
            "blank_in_key); dataset.skip_invalid does not skip blank key entries"
        )
    return key


def _from_object(path: Path, obj: dict[str, Any], cfg: AnswerKeyConfig) -> AnswerKey:
    if cfg.id != "id":  # the object's keys are the ids: no column to name (a typo passed silently)
        raise UserError(
            f"dataset.answer_key.id: '{cfg.id}' names the key file's id column, but {path} is one JSON "
            "object keyed by id (its keys are the ids): remove answer_key.id"
        )
    answers: dict[str, str] = {}
    where: dict[str, str] = {}
    for key, value in obj.items():
        qid = key.strip()
        here = f"{path}: key '{key}'"
        answer = value
        if isinstance(value, dict):
            if cfg.answer not in value:
                raise UserError(
                    f"{here}: no '{cfg.answer}' in the object (answer_key.answer names the key holding "
                    f"the answer; keys present: {', '.join(sorted(value))})"
                )
            answer = value[cfg.answer]
        if qid in answers:
            raise UserError(f"{here}: id '{qid}' appears twice")
        answers[qid] = _answer_text(answer, here)
        where[qid] = here
    return _checked(AnswerKey(path, answers, where), cfg)


def _from_rows(path: Path, cfg: AnswerKeyConfig) -> AnswerKey:
    answers: dict[str, str] = {}
    where: dict[str, str] = {}
    for number, row in enumerate(read_rows(path, "auto")):
        if number == 0:
            missing = [c for c in (cfg.id, cfg.answer) if c not in row.values]
            if missing:
                raise UserError(
                    f"{path}: answer_key: missing column(s) {missing}; columns present: "
                    f"{', '.join(sorted(row.values))} (set answer_key.id and answer_key.answer)"
                )
        here = f"{path}: line {row.line}"
        for column in (cfg.id, cfg.answer):
            if column in row.nonfinite or column in row.nested:
                raise UserError(f"{here}, column '{column}': expected a text, got {row.values[column][:40]}")
        qid = row.values[cfg.id].strip()
        if not qid:
            raise UserError(f"{here}, column '{cfg.id}': empty id")
        if qid in answers:
            raise UserError(f"{here}, column '{cfg.id}': id '{qid}' appears twice (first at {where[qid]})")
        answers[qid] = _answer_text(row.values[cfg.answer], f"{here}, column '{cfg.answer}'")
        where[qid] = here
    if not answers:
        raise UserError(f"{path}: the answer key holds no answer")
    return _checked(AnswerKey(path, answers, where, column=cfg.answer), cfg)


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict; a key given twice (after stripping) raises :class:`_DuplicateKey`."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key.strip() in seen:
            raise _DuplicateKey(key.strip())
        seen.add(key.strip())
    return dict(pairs)


def _line_of_second(text: str, key: str) -> int:
    """The line of the second ``"key":`` in ``text`` (1 when it cannot be told)."""
    found = [m.start() for m in re.finditer(r'"\s*' + re.escape(key) + r'\s*"\s*:', text)]
    return text.count("\n", 0, found[1]) + 1 if len(found) > 1 else 1


def load_answer_key(cfg: AnswerKeyConfig, base_dir: Path | None = None) -> AnswerKey:
    """Read the key file ``cfg.path`` names (relative to ``base_dir``, the config's folder)."""
    recorded = Path(cfg.path)
    if not recorded.is_absolute() and base_dir is not None:
        recorded = base_dir / recorded
    path = Path(as_given(recorded))  # messages name the file as the user gave it
    if not path.exists():
        raise UserError(f"dataset.answer_key.path: file not found '{path}'")
    try:
        check_regular(path)  # a FIFO or a folder is named as such (issue 61), never "not found"
    except NotRegularFile as exc:
        raise UserError(f"dataset.answer_key.path: {exc}") from None
    key = _read_key(path, cfg)
    key.recorded = str(recorded)
    return key


def _read_key(path: Path, cfg: AnswerKeyConfig) -> AnswerKey:
    """The key file ``path``: a JSON object keyed by id, or rows (CSV, JSON array, JSON Lines)."""
    if path.suffix.lower() != ".csv":
        try:
            text = read_text(path, "utf-8-sig")
        except OSError as exc:
            raise UserError(f"{path}: cannot open the answer key ({exc.strerror})") from None
        except UnicodeDecodeError:
            raise UserError(f"{path}: not UTF-8 text (save the file as UTF-8)") from None
        try:
            whole = json_io.loads(text, str(path), object_pairs_hook=_unique_keys)
        except _DuplicateKey as dup:  # a JSON object keeps the last of two equal keys: refused, as in a CSV
            raise UserError(
                f"{path}: line {_line_of_second(text, dup.key)}: id '{dup.key}' appears twice"
            ) from None
        except json.JSONDecodeError:
            whole = None  # JSON Lines, or broken JSON: the row reader says where
        if isinstance(whole, dict):
            if not whole:
                raise UserError(f"{path}: the answer key holds no answer")
            return _from_object(path, whole, cfg)
    return _from_rows(path, cfg)
