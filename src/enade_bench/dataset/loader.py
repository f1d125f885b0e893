"""Turn raw rows into validated :class:`Question` objects and apply the filters.

Nothing is dropped silently: :attr:`LoadedDataset.counts` records how many items
each step removed (annulled, image-dependent, cannot-fix, year, course,
component), and every validation problem is an ``error:`` naming the file, line
and column.  A file is checked whole before its first problem (by line) is
raised, because one check needs all its rows: with options split from the text,
a row whose number of options differs from its file's usual number is flagged.
With ``skip_invalid`` every problem is listed, in line order within a file.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from enade_bench.config import DatasetConfig
from enade_bench.dataset.clusters import shared_text_clusters
from enade_bench.dataset.filters import apply_filters
from enade_bench.dataset.inline_options import OptionSplitError, split_options, usual_count
from enade_bench.dataset.presets import CANONICAL, DatasetPreset, configured
from enade_bench.dataset.schema import CANONICAL_FIELDS, LETTERS, REQUIRED_FIELDS, FieldValue, Question
from enade_bench.dataset.sources import RawRow, expand_paths, file_sha256, read_hf, read_rows
from enade_bench.errors import UserError

_TRUE = {"true", "1", "yes", "sim", "y", "t", "verdadeiro"}
_FALSE = {"false", "0", "no", "não", "nao", "n", "f", "falso", ""}


@dataclass
class LoadedDataset:
    """The questions that survived the filters, and what each filter removed."""

    questions: list[Question]
    counts: dict[str, int]
    sources: list[dict[str, str]] = field(default_factory=list)
    #: Rows skipped with ``skip_invalid: true``, each with the reason.
    invalid: list[str] = field(default_factory=list)


def _bool(value: str, where: str) -> bool:
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise UserError(f"{where}: '{value}' is not a boolean (expected true/false, 1/0, sim/não)")


#: The years an exam may carry (a cell outside is a misread: ``2.019``, ``20190``).
YEARS = range(1900, 2101)


def whole_number(name: str, text: str, where: str) -> int | None:
    """A whole-number cell (``2019``, or ``2019.0`` as spreadsheets write it); empty: ``None``.

    A fraction (``2.019``), an infinity or NaN, and for ``year`` a value outside
    :data:`YEARS` is an error naming the cell, never silently rounded.
    """
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{where}: {name} '{text}' is not an integer") from None
    if not math.isfinite(value) or not value.is_integer():
        raise UserError(f"{where}: {name} '{text}' is not an integer")
    number = int(value)
    if name == "year" and number not in YEARS:
        raise UserError(f"{where}: year '{text}' is not a year between {YEARS[0]} and {YEARS[-1]}")
    return number


def _template_fields(template: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


class _RowMapper:
    """Applies the column mapping of one config to rows of one file."""

    def __init__(self, cfg: DatasetConfig, preset: DatasetPreset) -> None:
        preset = configured(preset, cfg)
        self.preset = preset
        self.patterns = {k: re.compile(v) for k, v in (cfg.field_patterns or {}).items()}
        self.file_fields = re.compile(preset.file_fields) if preset.file_fields else None
        self.mapping = dict(preset.columns)
        self.mapping.update(cfg.columns or {})
        unknown = set(cfg.columns or {}) - set(CANONICAL_FIELDS)
        if unknown:
            raise UserError(
                f"dataset.columns: unknown field(s) {sorted(unknown)} "
                f"(canonical fields: {', '.join(CANONICAL_FIELDS)})"
            )
        self.constants = dict(preset.constants)
        self.constants.update(cfg.constants or {})
        self.id_template = cfg.id_template or preset.id_template
        if self.id_template:
            self.mapping.pop("id", None)
        self.annulled = {a.strip().lower() for a in cfg.annulled_answers}
        self.inline = cfg.options_in_text if cfg.options_in_text and cfg.options_in_text.enabled else None
        if self.inline:
            mapped = sorted(set(cfg.columns or {}) & set(LETTERS))
            if mapped:
                raise UserError(
                    f"dataset.columns: maps option column(s) {mapped}, but dataset.options_in_text is on "
                    "(the options come from the stem column); remove one of the two"
                )
            for letter in LETTERS:
                self.mapping.pop(letter, None)

    def check_header(self, row: RawRow) -> None:
        columns = set(row.values)
        missing = []
        for name in REQUIRED_FIELDS:
            if name in self.constants or (name == "id" and self.id_template):
                continue
            if self.inline and name in LETTERS:
                continue
            if self.mapping.get(name) not in columns:
                missing.append(f"'{self.mapping.get(name, name)}' (for {name})")
        if self.id_template:
            missing += [
                f"'{n}' (in id_template)"
                for n in _template_fields(self.id_template)
                if n not in columns and n != "file_stem"
            ]
        if missing:
            raise UserError(
                f"{row.source}: missing column(s) {', '.join(missing)}; "
                f"columns present: {', '.join(sorted(columns))}"
            )

    def get(self, row: RawRow, name: str) -> str:
        if name in self.constants:
            return str(self.constants[name])
        column = self.mapping.get(name)
        return row.values.get(column, "") if column else ""

    def is_annulled(self, row: RawRow) -> bool:
        return self.get(row, "answer").strip().lower() in self.annulled

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
                text = row.values.get(column, "")
            text = self.matched(name, text, f"{row.source}: line {row.line}, column '{column}'").strip()
            if name not in self.preset.int_fields:
                out[name] = text
                continue
            out[name] = whole_number(name, text, f"{row.source}: line {row.line}, column '{column}'")
        return out

    def to_question(self, row: RawRow) -> Question:
        where = f"{row.source}: line {row.line}"

        def col(name: str) -> str:
            return f"{where}, column '{self.mapping.get(name, name)}'"

        if self.id_template:
            values = {**row.values, "file_stem": Path(row.source).stem}
            try:
                qid = self.id_template.format_map(values).strip()
            except (KeyError, ValueError, IndexError, AttributeError) as exc:
                raise UserError(
                    f"{where}: dataset.id_template '{self.id_template}' cannot be filled ({exc})"
                ) from None
            if not qid:
                raise UserError(f"{where}: dataset.id_template '{self.id_template}' gives an empty id")
        else:
            qid = self.get(row, "id").strip()
            if not qid:
                raise UserError(f"{col('id')}: empty question id")
        stem = self.get(row, "stem").strip()
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
            raw_options = [self.get(row, letter).strip() for letter in LETTERS]
        n_options = max((i + 1 for i, text in enumerate(raw_options) if text), default=0)
        options = tuple(raw_options[:n_options])
        if n_options < 2:
            raise UserError(f"{where}: fewer than two non-empty options")
        gaps = [LETTERS[i] for i, text in enumerate(options) if not text]
        if gaps:
            raise UserError(f"{col(gaps[0])}: empty option before a non-empty one")
        answer = self.get(row, "answer").strip().upper()
        if answer not in LETTERS[:n_options] or not answer:
            raise UserError(
                f"{col('answer')}: answer '{self.get(row, 'answer')}' is not among the non-empty "
                f"options ({LETTERS[0]}–{LETTERS[n_options - 1]})"
            )
        year = whole_number(
            "year", self.matched("year", self.get(row, "year"), col("year")).strip(), col("year")
        )
        used = {self.mapping.get(n) for n in CANONICAL_FIELDS}
        extra = tuple((k, v) for k, v in row.values.items() if k not in used)
        canonical = {
            "course": self.get(row, "course").strip(),
            "component": self.get(row, "component").strip(),
        }
        fields = self.fields(row, year, canonical)
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
            has_image=_bool(self.get(row, "has_image"), col("has_image")),
            cannot_fix=_bool(self.get(row, "cannot_fix"), col("cannot_fix")),
            extra=(*extra, ("source_file", Path(row.source).name)),
            fields=fields,
            cluster=self.get(row, "cluster").strip(),
        )


def _duplicate_id(qid: str, row: RawRow, first: tuple[str, int], mapper: _RowMapper) -> UserError:
    """The error for a repeated id; across files it says how to make the ids unique per file.

    Ids are never renamed silently: a repeat across files may as well be the same
    file matched twice by a glob, so the user chooses (and the config records) the
    scheme, typically ``id_template: '{file_stem}:{<id column>}'``.
    """
    if mapper.id_template:
        where, id_part = "id_template", mapper.id_template
    else:
        id_column = mapper.mapping.get("id", "id")
        where, id_part = f"column '{id_column}'", f"{{{id_column}}}"
    message = f"{row.source}: line {row.line}, {where}: duplicate id '{qid}' (first seen at {first[0]}: line {first[1]})"
    if first[0] == row.source and not mapper.id_template:
        used = {mapper.mapping.get(n) for n in ("id", "stem", "answer", *LETTERS)}
        other = next((c for c in row.values if c not in used), None)
        if other is not None:
            message += (
                "; if ids repeat by design (numbered per edition or booklet), build unique ones with "
                f"dataset.id_template, e.g. '{{{other}}}:{id_part}'"
            )
    elif first[0] != row.source:
        if "{file_stem}" in id_part:
            message += "; two data files have the same name: rename one"
        else:
            message += (
                "; ids repeat across the files of this dataset: make them unique per file with "
                f"dataset.id_template, e.g. '{{file_stem}}:{id_part}'"
            )
    return UserError(message)


def _count_problems(loaded: list[tuple[RawRow, Question]], mapper: _RowMapper) -> list[tuple[int, UserError]]:
    """Rows of one file whose number of options differs from the file's usual number.

    Only for options split from the text (``options_in_text``), unless
    ``allow_other_counts``: a misread or truncated question has another number of
    options than its neighbours (:func:`~enade_bench.dataset.inline_options.usual_count`).
    """
    if not mapper.inline or mapper.inline.allow_other_counts:
        return []
    usual = usual_count([q.n_options for _, q in loaded])
    if usual is None:
        return []
    column = mapper.mapping.get("stem", "stem")
    return [
        (
            row.line,
            UserError(
                f"{row.source}: line {row.line}, column '{column}': {q.n_options} options found "
                f"({q.letters[0]}–{q.letters[-1]}), but {usual.rows} of the file's {usual.total} rows have "
                f"{usual.options}; check the row (a misread or truncated question?), or set "
                "dataset.options_in_text.allow_other_counts: true"
            ),
        )
        for row, q in loaded
        if q.n_options != usual.options
    ]


def load_dataset(
    cfg: DatasetConfig, base_dir: Path | None = None, preset: DatasetPreset = CANONICAL
) -> LoadedDataset:
    """Load, validate and filter the questions a config names.

    Parameters
    ----------
    cfg
        The ``dataset`` block of the experiment config.
    base_dir
        Directory against which a relative ``cfg.path`` is resolved (default: the
        current directory).
    preset
        The benchmark's column mapping and grouping fields (default: the canonical
        layout, ENADE-QA's).
    """
    mapper = _RowMapper(cfg, preset)
    sources: list[dict[str, str]] = []
    row_groups: list[Iterable[RawRow]] = []
    if cfg.path.startswith("hf://") or cfg.format == "hf":
        row_groups.append(read_hf(cfg.path if cfg.path.startswith("hf://") else "hf://" + cfg.path))
        sources.append({"path": cfg.path})
    else:
        for path in expand_paths(cfg.path, base_dir):
            row_groups.append(read_rows(path, cfg.format, cfg.delimiter))
            sources.append({"path": str(path), "sha256": file_sha256(path)})
    questions: list[Question] = []
    seen: dict[str, tuple[str, int]] = {}
    counts = {"loaded": 0, "removed_annulled": 0, "removed_invalid": 0}
    invalid: list[str] = []
    for rows in row_groups:
        loaded: list[tuple[RawRow, Question]] = []
        problems: list[tuple[int, UserError]] = []  # (line, error) of the rows that fail
        try:
            for number, row in enumerate(rows):
                if number == 0:
                    mapper.check_header(row)
                counts["loaded"] += 1
                if mapper.is_annulled(row):
                    counts["removed_annulled"] += 1
                    continue
                try:
                    question = mapper.to_question(row)
                except UserError as exc:
                    problems.append((row.line, exc))
                    continue
                if question.id in seen:
                    raise _duplicate_id(question.id, row, seen[question.id], mapper)
                seen[question.id] = (row.source, row.line)
                loaded.append((row, question))
        except UserError:
            if problems and not cfg.skip_invalid:  # an earlier row failed first
                raise problems[0][1] from None
            raise
        problems = sorted(problems + _count_problems(loaded, mapper), key=lambda p: p[0])
        if problems and not cfg.skip_invalid:
            raise problems[0][1]
        flagged = {line for line, _ in problems}
        questions += shared_text_clusters([q for row, q in loaded if row.line not in flagged])
        counts["removed_invalid"] += len(problems)
        invalid += [str(exc) for _, exc in problems]
    questions = apply_filters(questions, cfg, counts)
    counts["kept"] = len(questions)
    if not questions:
        raise UserError(f"dataset '{cfg.path}': no question left after the filters ({counts})")
    return LoadedDataset(questions=questions, counts=counts, sources=sources, invalid=invalid)
