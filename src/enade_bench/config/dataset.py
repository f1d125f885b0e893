"""The ``dataset`` block: where the questions come from and which of them to keep."""

from __future__ import annotations

import re
from typing import Any, Literal

import regex
from pydantic import Field, ValidationError, field_validator, model_validator

from enade_bench.config.base import StrictModel, UserPath, unset_absent
from enade_bench.file_names import check_names


def _number_name(value: Any) -> Any:
    """A column given as a number (``{stem: 1}`` for a file without a header) as its name, ``'1'``."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class OptionsInTextConfig(StrictModel):
    """Options printed inside the question text ("… (A) … (B) …"), split by their markers.

    See :mod:`enade_bench.dataset.inline_options` and docs/bring_your_own_exam.md.
    """

    enabled: bool = True
    pattern: str | None = Field(
        default=None,
        description="regex of one option marker with a named group 'letter' (default: (A), A), A., a))",
    )
    min_options: int = Field(default=2, ge=2, le=5, description="fewer options found is an error")
    allow_other_counts: bool = Field(
        default=False,
        description="load a row whose number of options differs from its file's usual number "
        "(default: such a row is an error, the symptom of a misread or truncated question)",
    )

    @model_validator(mode="after")
    def _pattern_compiles(self) -> OptionsInTextConfig:
        if self.pattern is None:
            return self
        try:
            compiled = re.compile(self.pattern)
        except re.error as exc:
            raise ValueError(f"pattern {self.pattern!r} is not a valid regular expression ({exc})") from None
        if "letter" not in compiled.groupindex:
            raise ValueError("pattern needs a named group (?P<letter>...) capturing the option letter")
        return self


class SampleConfig(StrictModel):
    """A seeded random subset of the questions left after the filters (``--sample N``).

    See :mod:`enade_bench.dataset.sample`: simple random sampling without
    replacement, or stratified by one field with proportional allocation.
    """

    n: int = Field(ge=1, description="questions to keep (all when fewer are left)")
    seed: int = Field(default=42, description="the sample's seed (the same seed, the same questions)")
    stratify: str | None = Field(
        default=None, description="a field (year, area…) whose values keep their shares in the sample"
    )


class StripPattern(StrictModel):
    """One ``dataset.strip`` entry given as a regular expression (``{regex: 'P[aá]gina \\d+'}``)."""

    regex: str = Field(description="a regular expression; every match is removed from stems and options")

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            compiled = re.compile(value)
            regex.compile(value)  # what the stripper runs it with (time-bounded)
        except (re.error, regex.error) as exc:
            raise ValueError(f"'{value}' is not a regular expression ({exc})") from None
        if compiled.match(""):
            raise ValueError(f"'{value}' matches the empty text (it would remove nothing, everywhere)")
        return value


class AnswerKeyConfig(StrictModel):
    """The answers in a second file, joined to the questions by id (``dataset.answer_key``).

    See :mod:`enade_bench.dataset.answer_key`: a CSV file or a JSON list of objects
    (columns ``id`` and ``answer``), or a JSON object keyed by id whose values are the
    answers (or objects holding the answer under ``answer``).
    """

    path: UserPath = Field(description="the key file (.csv or .json), relative to the config's folder")
    id: str = Field(default="id", description="the key file's column (or object key) holding the question id")
    answer: str = Field(
        default="answer", description="the key file's column (or object key) holding the answer"
    )
    allow_extra: bool = Field(
        default=False,
        description="key ids that match no question are allowed (a key for several booklets); "
        "by default they are an error, listed",
    )
    blank: Literal["annulled", "skip", "error"] = unset_absent(
        "a blank key entry (empty or null): annulled (the item is annulled, counted as "
        "annulled), skip (left out, counted as blank_in_key) or error (the default)",
        default="error",
    )
    match: Literal["id", "position"] = unset_absent(
        "id: a question takes the key entry of its id (the default); position: the k-th "
        "non-blank key entry, in the key file's order, answers the k-th question row, in the questions' "
        "file order (a key whose ids do not follow the questions', or with blanks between its answers)",
        default="id",
    )
    accept_shape: bool = unset_absent(
        "join by id a key that looks mis-shaped (blanks between its answers, or ids shifted "
        "against the questions'): by default such a key is an error, since joining it gives "
        "questions their neighbours' answers",
        default=False,
    )


class DatasetConfig(StrictModel):
    """Where the questions come from and which of them to keep."""

    path: UserPath = Field(description="A .csv or .jsonl file, or hf://org/name[:split].")
    format: Literal["auto", "csv", "json", "jsonl", "hf"] = Field(
        default="auto",
        description="auto: by suffix, and for JSON by content (an array of objects or JSON Lines)",
    )
    delimiter: str | None = Field(default=None, description="CSV separator, e.g. ';' (default: sniffed)")
    header: bool | list[str] | None = unset_absent(
        "a CSV file's first row: its header (the default; refused when it reads like a "
        "question, e.g. a lone answer letter: a file without a header), true (its header, unchecked), "
        "false (no header: columns named 1, 2, …) or the columns' names ([question, A, B, C, D, answer])",
    )
    benchmark: str = Field(
        default="generic",
        pattern=r"^(?:[a-z][a-z0-9_]*|.*[/\\].*)$",
        description=(
            "the exam: generic (your own exam: neutral prompts in dataset.language), a registered "
            "benchmark (enade, enem, eeval, progress_test, or an installed plug-in's name) or the "
            "folder of a benchmark plug-in (./my_exam/); 'preset' is the older name of this key"
        ),
    )
    columns: dict[str, str] | None = Field(
        default=None,
        description="canonical field -> column in the file (overrides the preset); options -> a column "
        "holding the options as a JSON list (read as A, B, C…)",
    )
    stem: str | list[str] | None = unset_absent(
        "a stem composed from several columns: a list of parts, each a column name or a "
        "template ('Imagem: {image_description}'), or one template with parts separated by blank "
        "lines; parts joined with a blank line, a part whose columns are empty left out, e.g. "
        "[context, question] (instead of columns.stem)",
    )
    id_template: str | None = Field(
        default=None, description="build the id from columns, e.g. '{year}_{test}_{question_number}'"
    )
    constants: dict[str, str | int] | None = Field(
        default=None, description="canonical fields that are constant for the whole file"
    )
    language: Literal["pt-BR", "en"] = Field(
        default="pt-BR", description="the exam's language: picks the default prompt and worked examples"
    )
    answer_index: Literal[0, 1] | None = unset_absent(
        "the answer is the option's number, counted from 0 or from 1 (MedMCQA's cop: 1), not its letter",
    )
    optional_columns: list[str] | None = unset_absent(
        "columns a file may lack (one config for files that differ a little): a stem part "
        "or field reading one is empty where the file lacks it, e.g. [image_description, incomplete]",
    )
    annulled_answers: list[str] = Field(
        default_factory=lambda: ["anulada"],
        description="answers that mark an annulled item (skipped, counted), besides the common forms "
        "always matched, in any case: anulada/anulado(s), annulled, cancelada/cancelado, cancel(l)ed, nula/nulo",
    )
    answer_key: AnswerKeyConfig | None = unset_absent(
        "the answers in a second file joined by id, e.g. {path: gabarito.json} (docs/bring_your_own_exam.md)",
    )
    options_in_text: OptionsInTextConfig | None = Field(
        default=None, description="split options printed inside the stem column (no A..E columns)"
    )
    skip_invalid: bool = Field(
        default=False,
        description="skip rows that fail validation (counted and listed in results) instead of an error, "
        "and questions the answer key lacks; not: a failed key join, blank key entries "
        "(answer_key.blank), repeated ids, missing columns, unreadable files, lint warnings",
    )
    strip: list[str | StripPattern] | None = unset_absent(
        "texts (or {regex: …}) removed from every stem and option, e.g. a page footer "
        "['2023 SEGUNDA EDIÇÃO', {regex: 'P[aá]gina \\d+'}]; recorded in the results",
    )
    image_markers: bool = unset_absent(
        "a question whose text holds an image marker ([[…]], <img, (figura)…) depends on an "
        "image: filter_images drops it (counted as has_image)",
        default=False,
    )
    exclude: list[str] | None = unset_absent(
        "ids of questions left out (counted as excluded), e.g. rows the lint flags that "
        "cannot be fixed in the file; an id the data lacks is an error",
    )
    stem_in_option: Literal["warn", "repair", "drop"] = unset_absent(
        "questions whose stem the lint finds cut into option A: warn (the default), repair "
        "(the cut text moved back into the stem and option A's repeated letter removed; a row it "
        "cannot repair surely is left as it is, said) or drop (left out); every row changed is listed",
        default="warn",
    )
    fields: list[str] | dict[str, str] | None = Field(
        default=None,
        description="the exam's own grouping fields, replacing the benchmark's (ENADE: year, course, "
        "component): names, each read from the column of that name, or name -> column",
    )
    field_patterns: dict[str, str] | None = Field(
        default=None,
        description="field -> regular expression searched in its text; the first group (or the whole "
        "match) is the value, e.g. {year: '(\\d{4})'} reads 2021 out of '2021 - prova 1'",
    )
    file_fields: str | None = Field(
        default=None,
        description="regular expression searched in each file's name; its named groups are fields, "
        "e.g. '(?P<year>\\d{4})'",
    )
    filters: dict[str, list[str | int]] | None = Field(
        default=None,
        description="keep only the questions whose field has one of these values, e.g. {area: [civil]}",
    )
    sample: SampleConfig | None = unset_absent(
        "a seeded random subset after the filters, e.g. {n: 20, seed: 42, stratify: year} (--sample)",
    )
    filter_images: bool = True
    filter_cannot_fix: bool = True
    anos: list[int] | None = None
    cursos: list[str] | None = None
    componentes: list[str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthands(cls, data: Any) -> Any:
        """``options_in_text: true`` (or ``false``) is short for ``{enabled: true}``; ``preset`` is
        the older name of ``benchmark`` (both at once is an error)."""
        if not isinstance(data, dict):
            return data
        if isinstance(data.get("options_in_text"), bool):
            data = {**data, "options_in_text": {"enabled": data["options_in_text"]}}
        if isinstance(data.get("columns"), dict):  # a column named by its number (header: false)
            data = {**data, "columns": {k: _number_name(v) for k, v in data["columns"].items()}}
        if "preset" in data:
            if "benchmark" in data:
                raise ValueError("give 'benchmark' or its older name 'preset', not both")
            data = {("benchmark" if k == "preset" else k): v for k, v in data.items()}
        return data

    @field_validator("strip", mode="before")
    @classmethod
    def _strip_entries(cls, value: Any) -> Any:
        """A ``{regex: …}`` entry's own reason when it is wrong (not pydantic's "expected a
        string" for the other form a ``strip`` entry may take)."""
        if not isinstance(value, list):
            return value
        entries = []
        for i, given in enumerate(value):
            entry = given
            if isinstance(given, dict):
                try:
                    entry = StripPattern.model_validate(given)
                except ValidationError as exc:
                    err = exc.errors()[0]
                    where = ".".join(str(p) for p in err["loc"]) or "regex"
                    reason = (
                        f"unknown key '{where}' (expected only 'regex')"
                        if err["type"] == "extra_forbidden"
                        else f"{where}: {err['msg'].removeprefix('Value error, ')}"
                    )
                    raise ValueError(f"entry {i} ({{regex: …}}): {reason}") from None
            entries.append(entry)
        return entries

    @field_validator("fields")
    @classmethod
    def _field_names(cls, value: list[str] | dict[str, str] | None) -> list[str] | dict[str, str] | None:
        """A field's name names its files (``accuracy_by_{field}.csv``): :mod:`enade_bench.file_names`."""
        check_names(value or [], "field name")
        return value

    @model_validator(mode="after")
    def _patterns(self) -> DatasetConfig:
        """The regular expressions compile, ``file_fields`` names its groups, patterns name fields."""
        patterns = {f"field_patterns.{k}": v for k, v in (self.field_patterns or {}).items()}
        if self.file_fields is not None:
            patterns["file_fields"] = self.file_fields
        for key, pattern in patterns.items():
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{key}: '{pattern}' is not a regular expression ({exc})") from None
            if key == "file_fields" and not compiled.groupindex:
                raise ValueError(f"file_fields: '{pattern}' has no named group, e.g. (?P<year>\\d{{4}})")
        names = self.fields if isinstance(self.fields, dict) else dict.fromkeys(self.fields or [])
        unknown = sorted(set(self.field_patterns or {}) - set(names) - {"year"})
        if self.fields is not None and unknown:
            raise ValueError(f"field_patterns: {unknown} are not among dataset.fields {list(names)}")
        return self
