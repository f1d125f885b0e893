"""Which column of a file gives each question field: the preset, then the config's ``dataset`` block.

:class:`ColumnMap` is the mapping of one config, checked once before any row is read
(a stem composed and mapped, options in the text and in columns, two options from
one column, unknown fields), and the header checks against a file's columns.
:class:`~enade_bench.dataset.mapper.RowMapper` applies it to rows.
"""

from __future__ import annotations

import re

from enade_bench.config import DatasetConfig
from enade_bench.dataset.ids import BUILT_IN, template_fields
from enade_bench.dataset.presets import DatasetPreset, configured
from enade_bench.dataset.schema import CANONICAL_FIELDS, LETTERS, REQUIRED_FIELDS
from enade_bench.dataset.sources import RawRow
from enade_bench.dataset.stem import StemTemplate
from enade_bench.errors import UserError, closest

__all__ = ["OPTIONS", "ColumnMap"]

#: The ``dataset.columns`` key of a column holding the options as a JSON list (A, B, C… in order).
OPTIONS = "options"


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


def _quoted(entries: list[str]) -> list[str]:
    """The names quoted in ``'name' (for …)`` entries."""
    return [entry.split("'")[1] for entry in entries]


class ColumnMap:
    """The columns one config maps, checked when built; ``answers_in_key``: the answers come from
    ``dataset.answer_key``, so no answer column is needed."""

    def __init__(self, cfg: DatasetConfig, preset: DatasetPreset, answers_in_key: bool = False) -> None:
        preset = configured(preset, cfg)
        self.preset = preset
        self.answers_in_key = answers_in_key
        #: ``file_fields``: the grouping fields read from the file name.
        self.file_fields = re.compile(preset.file_fields) if preset.file_fields else None
        #: A generic exam's canonical grouping fields that no column, constant or file name gives.
        self.absent: set[str] = set()
        self.mapping = dict(preset.columns)
        self.mapping.update(cfg.columns or {})
        #: The columns the config itself maps (each must be in the file, optional fields included).
        self.user_columns = dict(cfg.columns or {})
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
        fields = {*CANONICAL_FIELDS, *preset.fields, *(cfg.fields or [])}
        for key, given in (("constants", cfg.constants), ("field_patterns", cfg.field_patterns)):
            if set(given or {}) - fields:  # a typo would be a field nothing reads (issue 61)
                raise UserError(
                    f"dataset.{key}: unknown field(s) {sorted(set(given or {}) - fields)} (the fields: "
                    f"{', '.join(sorted(fields - set(LETTERS)))})"
                )
        self.constants = dict(preset.constants)
        self.constants.update(cfg.constants or {})
        self.id_template = cfg.id_template or preset.id_template
        if self.id_template:
            self.mapping.pop("id", None)
        self.inline = cfg.options_in_text if cfg.options_in_text and cfg.options_in_text.enabled else None
        self.answer_index = cfg.answer_index
        #: ``dataset.optional_columns``: columns a file may lack (read as empty there).
        self.optional = set(cfg.optional_columns or ())
        grouping = cfg.fields.values() if isinstance(cfg.fields, dict) else cfg.fields or ()
        read = {
            *self.mapping.values(),
            self.options_column,
            *grouping,
            *template_fields(self.id_template or ""),
        }
        unread = sorted(self.optional - read - set(self.stem.columns if self.stem else ()))
        if unread:
            raise UserError(f"dataset.optional_columns: {unread} are read by no column, stem part or field")
        self._check_option_sources(sorted(set(cfg.columns or {}) & set(LETTERS)))
        if self.inline or self.options_column is not None:
            for letter in LETTERS:
                self.mapping.pop(letter, None)
        _one_column_per_option(self.mapping)

    def _check_option_sources(self, mapped: list[str]) -> None:
        """The options come from one place: option columns (``mapped``), a list column or the text."""
        if self.inline and mapped:
            raise UserError(
                f"dataset.columns: maps option column(s) {mapped}, but dataset.options_in_text is on "
                "(the options come from the stem column); remove one of the two"
            )
        if self.inline and self.options_column is not None:
            raise UserError(
                "dataset.columns: maps options, but dataset.options_in_text is on "
                "(the options come from the stem column); remove one of the two"
            )
        if self.options_column is not None and mapped:
            raise UserError(
                f"dataset.columns: maps option column(s) {mapped} and options "
                f"('{self.options_column}', a list of options); map one or the other"
            )

    def check_header(self, row: RawRow) -> None:
        """The first row of a file holds every column the mapping reads (an error naming those it lacks)."""
        columns = set(row.values)
        missing = []
        for name in REQUIRED_FIELDS:
            if name in self.constants or (name == "id" and self.id_template):
                continue
            if (self.inline or self.options_column is not None) and name in LETTERS:
                continue
            if name == "answer" and self.answers_in_key:
                continue
            if self.mapping.get(name) not in columns | self.optional:
                missing.append(f"'{self.mapping.get(name, name)}' (for {name})")
        if self.options_column is not None and self.options_column not in columns:
            missing.append(f"'{self.options_column}' (for options)")
        if self.id_template:
            missing += [
                f"'{n}' (in id_template)"
                for n in template_fields(self.id_template)
                if n not in columns | self.optional and n not in BUILT_IN
            ]
        if self.own_fields:
            missing += [
                f"'{column}' (for dataset.fields {name})"
                for name, column in self.field_sources()
                if column is not None and column not in columns | self.optional
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
            if column not in columns | self.optional
            and name not in self.constants
            and not (name == "id" and self.id_template)
        ]
        stem_columns = self.stem.columns if self.stem else []
        missing += [
            f"'{name}' (dataset.stem)" for name in stem_columns if name not in columns | self.optional
        ]
        if missing:
            raise UserError(
                f"{source}: missing column(s) {', '.join(missing)}; no row holds them; "
                f"columns present: {', '.join(sorted(columns))}{closest(_quoted(missing), columns)}"
            )

    def field_sources(self) -> list[tuple[str, str | None]]:
        """Each grouping field with the column it is read from (``None``: the file name or a constant).

        The order of :meth:`~enade_bench.dataset.mapper.RowMapper.fields`: a named group of
        ``file_fields``, a constant, the column ``field_columns`` names, the canonical field's
        column, the column of the field's name.
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
