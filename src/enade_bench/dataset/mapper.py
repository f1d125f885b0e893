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
from enade_bench.dataset.ids import fill_id, template_fields
from enade_bench.dataset.inline_options import OptionSplitError, split_options
from enade_bench.dataset.presets import DatasetPreset, configured
from enade_bench.dataset.schema import CANONICAL_FIELDS, LETTERS, REQUIRED_FIELDS, FieldValue, Question
from enade_bench.dataset.sources import RawRow
from enade_bench.dataset.stem import StemTemplate
from enade_bench.dataset.strip import Stripper, compile_pattern
from enade_bench.errors import UserError, closest

#: The ``dataset.columns`` key of a column holding the options as a JSON list (A, B, C… in order).
OPTIONS = "options"


class MissingAnswer(UserError):
    """A question whose id the answer key lacks (the loader lists them all in one error)."""

    def __init__(self, qid: str, where: str) -> None:
        self.qid, self.where = qid, where
        super().__init__(f"{where}: question '{qid}' has no answer in dataset.answer_key")


def _one_column_per_option(mapping: dict[str, str]) -> None:
    """Two options read from one column would load every row with equal options: an error."""
    seen: dict[str, str] = {}
    for letter in LETTERS:
        column = mapping.get(letter)
        if column is None:
            continue
        if column in seen:
            raise UserError(
                f"dataset.columns: options {seen[column]} and {letter} both read column '{column}'; "
                "map each option to its own column"
            )
        seen[column] = letter


__all__ = ["YEARS", "MissingAnswer", "RowMapper", "whole_number"]


def _quoted(entries: list[str]) -> list[str]:
    """The names quoted in ``'name' (for …)`` entries."""
    return [entry.split("'")[1] for entry in entries]


class RowMapper:
    """Applies the column mapping of one config to rows of one file."""

    def __init__(self, cfg: DatasetConfig, preset: DatasetPreset, key: AnswerKey | None = None) -> None:
        preset = configured(preset, cfg)
        #: The answers read from ``dataset.answer_key`` (``None``: from the answer column).
        self.key = key
        #: A generic exam's canonical grouping fields that no column, constant or file name gives.
        self.absent: set[str] = set()
        self.preset = preset
        self.patterns = {k: re.compile(v) for k, v in (cfg.field_patterns or {}).items()}
        self.file_fields = re.compile(preset.file_fields) if preset.file_fields else None
        self.mapping = dict(preset.columns)
        self.mapping.update(cfg.columns or {})
        #: The columns the config itself maps (each must be in the file, optional fields included).
        self.user_columns = dict(cfg.columns or {})
        #: Ids of the rows whose composed stem has an empty context (for the lint).
        self.without_context: set[str] = set()
        #: ``dataset.stem``: the stem composed from several columns (``None``: the stem column).
        self.stem = None if cfg.stem is None else StemTemplate(cfg.stem)
        if self.stem is not None:
            if "stem" in self.user_columns:
                raise UserError(
                    f"dataset.stem composes the stem from {self.stem.columns} and dataset.columns maps stem "
                    f"to '{self.user_columns['stem']}'; remove one of the two"
                )
            self.mapping["stem"] = self.stem.columns[0]
        unknown = set(cfg.columns or {}) - set(CANONICAL_FIELDS) - {OPTIONS}
        if unknown:
            raise UserError(
                f"dataset.columns: unknown field(s) {sorted(unknown)} "
                f"(canonical fields: {', '.join(CANONICAL_FIELDS)}, or {OPTIONS} for a list of options)"
            )
        #: The column holding the options as a JSON list (``dataset.columns.options``), if any.
        self.options_column = self.mapping.pop(OPTIONS, None)
        self.own_fields = cfg.fields is not None
        self.constants = dict(preset.constants)
        self.constants.update(cfg.constants or {})
        self.id_template = cfg.id_template or preset.id_template
        if self.id_template:
            self.mapping.pop("id", None)
        self.annulled = annulled_markers(cfg.annulled_answers)
        #: ``dataset.strip``: removed from stems and options (after options are split from the text).
        self.strip = Stripper(
            [e if isinstance(e, str) else compile_pattern(e.regex) for e in cfg.strip or ()]
        )
        self.inline = cfg.options_in_text if cfg.options_in_text and cfg.options_in_text.enabled else None
        if self.inline:
            mapped = sorted(set(cfg.columns or {}) & set(LETTERS))
            if mapped:
                raise UserError(
                    f"dataset.columns: maps option column(s) {mapped}, but dataset.options_in_text is on "
                    "(the options come from the stem column); remove one of the two"
                )
            if self.options_column is not None:
                raise UserError(
                    "dataset.columns: maps options, but dataset.options_in_text is on "
                    "(the options come from the stem column); remove one of the two"
                )
        if self.options_column is not None:
            mapped = sorted(set(cfg.columns or {}) & set(LETTERS))
            if mapped:
                raise UserError(
                    f"dataset.columns: maps option column(s) {mapped} and options "
                    f"('{self.options_column}', a list of options); map one or the other"
                )
        if self.inline or self.options_column is not None:
            for letter in LETTERS:
                self.mapping.pop(letter, None)
        _one_column_per_option(self.mapping)

    def check_header(self, row: RawRow) -> None:
        columns = set(row.values)
        missing = []
        for name in REQUIRED_FIELDS:
            if name in self.constants or (name == "id" and self.id_template):
                continue
            if (self.inline or self.options_column is not None) and name in LETTERS:
                continue
            if name == "answer" and self.key is not None:
                continue
            if self.mapping.get(name) not in columns:
                missing.append(f"'{self.mapping.get(name, name)}' (for {name})")
        if self.options_column is not None and self.options_column not in columns:
            missing.append(f"'{self.options_column}' (for options)")
        if self.id_template:
            missing += [
                f"'{n}' (in id_template)"
                for n in template_fields(self.id_template)
                if n not in columns and n != "file_stem"
            ]
        if self.own_fields:
            missing += [
                f"'{column}' (for dataset.fields {name})"
                for name, column in self.field_sources()
                if column is not None and column not in columns
            ]
        if missing:
            raise UserError(
                f"{row.source}: missing column(s) {', '.join(dict.fromkeys(missing))}; "
                f"columns present: {', '.join(sorted(columns))}{closest(_quoted(missing), columns)}"
            )
        if self.preset.name == "canonical" and not self.own_fields:  # a generic exam: only its own fields
            self.absent = {
                name
                for name, column in self.field_sources()
                if column is not None and column not in columns and name not in self.constants
            }

    def check_mapped(self, source: str, columns: set[str]) -> None:
        """Every column ``dataset.columns`` maps is in the file (``columns``: the names its rows hold).

        An optional field mapped to a column the file lacks (``has_image: has_imagez``) would
        otherwise read as empty in every row: the image filter off without a word.
        """
        missing = [
            f"'{column}' (dataset.columns.{name})"
            for name, column in self.user_columns.items()
            if column not in columns
            and name not in self.constants
            and not (name == "id" and self.id_template)
        ]
        stem_columns = self.stem.columns if self.stem else []
        missing += [f"'{name}' (dataset.stem)" for name in stem_columns if name not in columns]
        if missing:
            raise UserError(
                f"{source}: missing column(s) {', '.join(missing)}; no row holds them; "
                f"columns present: {', '.join(sorted(columns))}{closest(_quoted(missing), columns)}"
            )

    def field_sources(self) -> list[tuple[str, str | None]]:
        """Each grouping field with the column it is read from (``None``: the file name or a constant).

        The order of :meth:`fields`: a named group of ``file_fields``, a constant, the
        column ``field_columns`` names, the canonical field's column, the column of the
        field's name.
        """
        groups = set(self.file_fields.groupindex) if self.file_fields else set()
        out: list[tuple[str, str | None]] = []
        for name in self.preset.fields:
            if name in groups or name in self.constants:
                out.append((name, None))
            elif name in self.preset.field_columns:
                out.append((name, self.preset.field_columns[name]))
            elif name in ("year", "course", "component"):
                out.append((name, self.mapping.get(name)))
            else:
                out.append((name, name))
        return out

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
            return fill_id(self.id_template, row.values, row.source, "")
        except UserError:
            return None

    def is_annulled(self, row: RawRow) -> bool:
        answer = self.raw_answer(row)
        return answer is not None and marker(answer) in self.annulled

    def options(self, row: RawRow) -> list[str]:
        """The option texts of a row: its A..E columns, or the list ``dataset.columns.options`` names."""
        if self.options_column is None:
            return [self.get(row, letter).strip() for letter in LETTERS]
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

    def answer(self, row: RawRow, qid: str, n_options: int, where: str) -> str:
        """The row's answer letter: its answer cell, or its id's answer in ``dataset.answer_key``."""
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
        answer = raw.strip().upper()
        if answer in LETTERS[:n_options] and answer:
            return answer
        hint = ""  # a word, a symbol (-, *, #) or X: an annulled marker? A letter out of range is not
        if answer and (len(answer) > 1 or not answer.isalpha() or answer == "X"):
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
            qid = fill_id(self.id_template, row.values, row.source, where)
        else:
            qid = self.get(row, "id").strip()
            if not qid:
                raise UserError(f"{col('id')}: empty question id")
        if self.stem is None:
            stem = self.get(row, "stem").strip()
        else:
            stem = self.stem.render(lambda name: self.text(row, name, "stem"))
            if self.stem.context_empty(lambda name: self.text(row, name, "stem")):
                self.without_context.add(qid)
        if not stem:
            raise UserError(f"{col('stem')}: empty stem")
        if self.inline:
            try:
                split = split_options(stem, self.inline.pattern, self.inline.min_options)
            except OptionSplitError as exc:
                raise UserError(f"{col('stem')}: cannot split the options in the text: {exc}") from None
            stem = split.stem
            raw_options = list(split.options)
        else:
            raw_options = self.options(row)
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
        answer = self.answer(row, qid, n_options, col("answer")) if answered else ""
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
