"""Map one file's rows onto the canonical question fields (the config's ``dataset`` block).

:class:`RowMapper` reads the cells a config names (``columns``, ``id_template``,
``constants``, ``fields``, ``field_patterns``, ``options_in_text``, ``answer_key``)
and turns one row into a :class:`~enade_bench.dataset.schema.Question`, or raises an
``error:`` naming the file, line and column.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from enade_bench.config import DatasetConfig
from enade_bench.dataset.answer_key import AnswerKey
from enade_bench.dataset.cells import (
    YEARS,
    annulled_markers,
    as_bool,
    marker,
    options_from_cell,
    whole_number,
)
from enade_bench.dataset.columns import OPTIONS, ColumnMap
from enade_bench.dataset.ids import fill_id, template_fields
from enade_bench.dataset.inline_options import OptionSplitError, split_options
from enade_bench.dataset.presets import DatasetPreset
from enade_bench.dataset.schema import CANONICAL_FIELDS, LETTERS, FieldValue, Question
from enade_bench.dataset.sources import RawRow
from enade_bench.dataset.strip import Stripper, compile_pattern
from enade_bench.errors import UserError


class MissingAnswer(UserError):
    """A question whose id the answer key lacks (the loader lists them all in one error)."""

    def __init__(self, qid: str, where: str) -> None:
        self.qid, self.where = qid, where
        super().__init__(f"{where}: question '{qid}' has no answer in dataset.answer_key")


__all__ = ["YEARS", "MissingAnswer", "RowMapper", "whole_number"]


class RowMapper(ColumnMap):
    """Applies the column mapping of one config (:class:`~.columns.ColumnMap`) to rows of one file."""

    def __init__(self, cfg: DatasetConfig, preset: DatasetPreset, key: AnswerKey | None = None) -> None:
        super().__init__(cfg, preset, answers_in_key=key is not None)
        #: The answers read from ``dataset.answer_key`` (``None``: from the answer column).
        self.key = key
        self.patterns = {k: re.compile(v) for k, v in (cfg.field_patterns or {}).items()}
        #: Ids of the rows whose composed stem has an empty context (for the lint).
        self.without_context: set[str] = set()
        self.annulled = annulled_markers(cfg.annulled_answers)
        #: ``dataset.strip``: removed from stems and options (after options are split from the text).
        self.strip = Stripper(
            [e if isinstance(e, str) else compile_pattern(e.regex) for e in cfg.strip or ()]
        )
        #: The last row whose id ``id_template`` built, and that id (or the error building it gave):
        #: the key join, the annul check and the question ask for it in turn, it is built once.
        self._built: tuple[RawRow, str | UserError] | None = None

    def text(self, row: RawRow, column: str, name: str) -> str:
        """The text of ``column``; a JSON list, object, NaN or Infinity there is an error naming the cell."""
        if column in row.nonfinite:
            raise UserError(
                f"{row.source}: line {row.line}, column '{column}': {row.values[column]} (a JSON NaN or "
                f"Infinity) is not a value for {name}; write the text, or null for an empty cell"
            )
        if column in row.nested:
            kind = "list" if isinstance(row.nested[column], list) else "object"
            hint = (
                f" (a list of options is read with dataset.columns: {{{OPTIONS}: '{column}'}})"
                if kind == "list" and name in LETTERS
                else ""
            )
            raise UserError(
                f"{row.source}: line {row.line}, column '{column}': a JSON {kind}, but {name} "
                f"expects a text or a number{hint}"
            )
        return row.values.get(column, "")

    def get(self, row: RawRow, name: str) -> str:
        if name in self.constants:
            return str(self.constants[name])
        column = self.mapping.get(name)
        return self.text(row, column, name) if column else ""

    def raw_answer(self, row: RawRow) -> str | None:
        """The answer cell of a row, or its answer in the key (``None``: the key lacks its id)."""
        if self.key is None:
            column = self.mapping.get("answer")
            return str(self.constants.get("answer", row.values.get(column, "") if column else ""))
        qid = self.row_id(row)
        return None if qid is None else self.key.answer(qid)

    def row_id(self, row: RawRow) -> str | None:
        """The id a row gets (``None`` when it cannot be built)."""
        if not self.id_template:
            return row.values.get(self.mapping.get("id", "id"), "").strip()
        try:
            return self.built_id(row)
        except UserError:
            return None

    def built_id(self, row: RawRow) -> str:
        """The id ``dataset.id_template`` gives a row, or the ``error:`` naming the row and why.

        Built once per row (the last row's is kept), though the key join, the annul check,
        a blank key entry and the question itself each ask for it.
        """
        assert self.id_template is not None, "built_id: no dataset.id_template"
        if self._built is None or self._built[0] is not row:
            where = f"{row.source}: line {row.line}"
            try:
                built: str | UserError = fill_id(self.id_template, row.values, row.source, where, row.line)
            except UserError as exc:
                built = exc
            self._built = (row, built)
        if isinstance(self._built[1], UserError):
            raise self._built[1]
        return self._built[1]

    def is_annulled(self, row: RawRow) -> bool:
        answer = self.raw_answer(row)
        return answer is not None and marker(answer) in self.annulled

    def options(self, row: RawRow) -> tuple[list[str], dict[str, str]]:
        """The option texts of a row: its A..E columns, or the cell ``dataset.columns.options``
        names; and the letter each of its labels stands for (:func:`~.cells.options_from_cell`)."""
        if self.options_column is None:
            return [self.get(row, letter).strip() for letter in LETTERS], {}
        where = f"{row.source}: line {row.line}, column '{self.options_column}'"
        cell: object = row.nested.get(self.options_column)
        if cell is None:  # a CSV cell, or a JSON string: it may hold a JSON list or object
            try:
                cell = json.loads(row.values.get(self.options_column, ""))
            except json.JSONDecodeError:
                cell = None
        return options_from_cell(cell, where)

    def matched(self, name: str, text: str, where: str) -> str:
        """``text`` through ``dataset.field_patterns[name]`` (unchanged without one)."""
        pattern = self.patterns.get(name)
        if pattern is None or not text.strip():
            return text
        found = pattern.search(text)
        if found is None:
            raise UserError(
                f"{where}: {name} '{text}' does not match dataset.field_patterns.{name} '{pattern.pattern}'"
            )
        return found.group(1) if pattern.groups else found.group(0)

    def fields(self, row: RawRow, year: int | None, canonical: dict[str, str]) -> dict[str, FieldValue]:
        """The preset's grouping fields of one row (sources in the order of :mod:`.presets`)."""
        match = self.file_fields.search(Path(row.source).name) if self.file_fields else None
        found = match.groupdict() if match else {}
        out: dict[str, FieldValue] = {}
        for name in self.preset.fields:
            column = self.preset.field_columns.get(name, name)
            if name in found:
                text = found[name] or ""
            elif name in self.constants:
                text = str(self.constants[name])
            elif name == "year" and name not in self.preset.field_columns:
                out[name] = year
                continue
            elif name in canonical and name not in self.preset.field_columns:
                text = canonical[name]
            else:
                text = self.text(row, column, name)
            text = self.matched(name, text, f"{row.source}: line {row.line}, column '{column}'").strip()
            if name not in self.preset.int_fields:
                out[name] = text
                continue
            out[name] = whole_number(name, text, f"{row.source}: line {row.line}, column '{column}'")
        return out

    def stem_part(self, row: RawRow, name: str) -> str:
        """A column of ``dataset.stem``: its text, or a list of texts joined as the parts are."""
        value = row.nested.get(name)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return "\n\n".join(v.strip() for v in value if v.strip())
        return self.text(row, name, "stem")

    def answer(self, row: RawRow, qid: str, options: tuple[int, dict[str, str]], where: str) -> str:
        """The row's answer letter: its answer cell, or its id's answer in ``dataset.answer_key``.

        ``options``: how many the row has, and the letter each of its labels stands for.  The
        answer may be a label, or an option's number (``dataset.answer_index``).
        """
        if self.key is None:
            raw = self.get(row, "answer")
        else:
            found = self.key.answer(qid)
            if found is None:
                raise MissingAnswer(qid, f"{row.source}: line {row.line}")
            raw, where = (
                found,
                f"{self.key.where_of(qid)} (question '{qid}', {row.source}: line {row.line})",
            )
        n_options, labels = options
        answer = labels.get(raw.strip(), raw.strip().upper())
        if self.answer_index is not None:
            number = int(answer) - self.answer_index if answer.isdigit() else -1
            if 0 <= number < n_options:
                return LETTERS[number]
            first = self.answer_index
            raise UserError(
                f"{where}: answer '{raw}' is not an option's number {first}–{n_options - 1 + first} "
                f"(dataset.answer_index: {first} counts the options from {first})"
            )
        if answer in LETTERS[:n_options] and answer:
            return answer
        hint = ""  # a word, a symbol (-, *, #) or X: an annulled marker? A letter out of range is not
        if answer.isdigit():
            hint = "; if the answers are the options' numbers, set dataset.answer_index: 1 (or 0, from 0)"
        elif answer and (len(answer) > 1 or not answer.isalpha() or answer == "X"):
            hint = "; if it marks an annulled item, add it to dataset.annulled_answers"
        raise UserError(
            f"{where}: answer '{raw}' is not among the non-empty options "
            f"({LETTERS[0]}–{LETTERS[n_options - 1]}){hint}"
        )

    def unscored(self, row: RawRow) -> Question | None:
        """A row left out before scoring (annulled, blank in the key) as a question without an answer,
        for the lint (``None`` when it cannot be read); the strip count is left as it was."""
        changed = self.strip.changed
        try:
            return self.to_question(row, answered=False)
        except UserError:
            return None
        finally:
            self.strip.changed = changed

    def to_question(self, row: RawRow, answered: bool = True) -> Question:
        where = f"{row.source}: line {row.line}"

        def col(name: str) -> str:
            return f"{where}, column '{self.mapping.get(name, name)}'"

        if self.id_template:
            for name in template_fields(self.id_template):
                if name in row.nested or name in row.nonfinite:
                    self.text(row, name, "id_template")
            qid = self.built_id(row)
        else:
            qid = self.get(row, "id").strip()
            if not qid:
                raise UserError(f"{col('id')}: empty question id")
        if self.stem is None:
            stem = self.get(row, "stem").strip()
        else:
            stem = self.stem.render(lambda name: self.stem_part(row, name))
            if self.stem.context_lost(lambda name: self.stem_part(row, name)):
                self.without_context.add(qid)
        if not stem:
            raise UserError(f"{col('stem')}: empty stem")
        if self.inline:
            try:
                split = split_options(stem, self.inline.pattern, self.inline.min_options)
            except OptionSplitError as exc:
                raise UserError(f"{col('stem')}: cannot split the options in the text: {exc}") from None
            stem = split.stem
            raw_options, labels = list(split.options), dict[str, str]()
        else:
            raw_options, labels = self.options(row)
        if self.strip:
            stem, raw_options = self.strip(stem), [self.strip(o) for o in raw_options]
            if not stem:
                raise UserError(f"{col('stem')}: empty stem once dataset.strip removed its texts")
        n_options = max((i + 1 for i, text in enumerate(raw_options) if text), default=0)
        options = tuple(raw_options[:n_options])
        if n_options < 2:
            raise UserError(f"{where}: fewer than two non-empty options")
        gaps = [LETTERS[i] for i, text in enumerate(options) if not text]
        if gaps:
            raise UserError(f"{col(gaps[0])}: empty option before a non-empty one")
        answer = self.answer(row, qid, (n_options, labels), col("answer")) if answered else ""
        year = whole_number(
            "year", self.matched("year", self.get(row, "year"), col("year")).strip(), col("year")
        )
        used = {self.mapping.get(n) for n in CANONICAL_FIELDS} | {self.options_column}
        used |= set(self.stem.columns if self.stem else ())
        extra = tuple((k, v) for k, v in row.values.items() if k not in used)
        canonical = {
            "course": self.get(row, "course").strip(),
            "component": self.get(row, "component").strip(),
        }
        fields = {k: v for k, v in self.fields(row, year, canonical).items() if k not in self.absent}
        if year is None and isinstance(fields.get("year"), int):
            year = int(fields["year"])  # type: ignore[arg-type]  # from the file name or a field column
        return Question(
            id=qid,
            stem=stem,
            options=options,
            answer=answer,
            year=year,
            course=canonical["course"],
            component=canonical["component"],
            has_image=as_bool(self.get(row, "has_image"), col("has_image")),
            cannot_fix=as_bool(self.get(row, "cannot_fix"), col("cannot_fix")),
            extra=(*extra, ("source_file", Path(row.source).name)),
            fields=fields,
            cluster=self.get(row, "cluster").strip(),
        )
