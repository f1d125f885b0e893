"""Turn raw rows into validated :class:`Question` objects and apply the filters.

Nothing is dropped silently: :attr:`LoadedDataset.counts` records how many items
each step removed (annulled, image-dependent, cannot-fix, year, course,
component), and every validation problem is an ``error:`` naming the file, line
and column.  A file is checked whole before its first problem (by line) is
raised, because one check needs all its rows: with options split from the text,
a row whose number of options differs from its file's usual number is flagged.
With ``skip_invalid`` every problem is listed, in line order within a file; so it is
inside :func:`listing_invalid` (``validate``, ``run --dry-run``), which lists them without
changing the config.  The join with a separate answer key is checked as the config says in
both (:func:`~enade_bench.dataset.key_join.join_error`): ``validate`` and ``run`` report it
alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path

from enade_bench.config import DatasetConfig
from enade_bench.dataset.answer_key import AnswerKey, load_answer_key
from enade_bench.dataset.clusters import shared_text_clusters
from enade_bench.dataset.filters import apply_filters
from enade_bench.dataset.fixes import Fix, apply_fixes
from enade_bench.dataset.ids import template_fields
from enade_bench.dataset.inline_options import usual_count
from enade_bench.dataset.key_join import KeyJoin, Unanswered, finish_join
from enade_bench.dataset.lint import LintWarning, has_image_marker, lint
from enade_bench.dataset.mapper import YEARS, MissingAnswer, RowMapper, whole_number
from enade_bench.dataset.presets import CANONICAL, DatasetPreset
from enade_bench.dataset.sample import draw_sample
from enade_bench.dataset.schema import LETTERS, Question
from enade_bench.dataset.sources import RawRow, expand_paths, file_sha256, read_hf, read_rows
from enade_bench.dataset.strip import PatternTimeout
from enade_bench.errors import UserError, as_given

__all__ = ["YEARS", "LoadedDataset", "NoQuestionLeft", "listing_invalid", "load_dataset", "whole_number"]

#: Inside :func:`listing_invalid`: rows that fail validation are collected, whatever skip_invalid says.
_LISTING: ContextVar[bool] = ContextVar("listing_invalid", default=False)


@contextmanager
def listing_invalid() -> Iterator[None]:
    """Within the block, :func:`load_dataset` lists every row that fails validation instead of raising
    the first (``validate``); the config, and so the run's own ``skip_invalid``, is unchanged."""
    token = _LISTING.set(True)
    try:
        yield
    finally:
        _LISTING.reset(token)


@dataclass
class LoadedDataset:
    """The questions that survived the filters, and what each filter removed."""

    questions: list[Question]
    counts: dict[str, int]
    sources: list[dict[str, str]] = field(default_factory=list)
    #: Rows skipped with ``skip_invalid: true``, each with the reason.
    invalid: list[str] = field(default_factory=list)
    #: What :func:`~enade_bench.dataset.lint.lint` found in the questions that reach the model.
    warnings: list[LintWarning] = field(default_factory=list)
    #: What it found in questions read but left out (filters, ``exclude``, a sample) or repaired.
    set_aside: list[LintWarning] = field(default_factory=list)
    #: The join with ``dataset.answer_key`` (``None``: the answers come from a column).
    key_join: KeyJoin | None = None
    #: What ``dataset.stem_in_option`` did to each question it changed, left out or left as it was.
    fixes: list[Fix] = field(default_factory=list)


class NoQuestionLeft(UserError):
    """No question survived validation and the filters; the rows that failed, with their reasons.

    ``validate`` lists every such row (as it does when only some fail); the message
    itself names the first few.
    """

    #: How many failing rows the message quotes.
    SHOWN = 3

    def __init__(self, path: str, counts: dict[str, int], invalid: list[str]) -> None:
        self.counts = counts
        self.invalid = invalid
        message = f"dataset '{path}': no question left after the filters ({counts})"
        if invalid:
            shown = "; ".join(invalid[: self.SHOWN])
            if len(invalid) > self.SHOWN:
                shown += f"; … ({len(invalid) - self.SHOWN} more)"
            if len(invalid) == counts["loaded"] - counts["removed_annulled"]:
                read = f"{counts['loaded']} row(s) read"
                if counts["removed_annulled"]:
                    read = f"{len(invalid)} row(s) left of the {read}, after {counts['removed_annulled']} annulled,"
                message = f"dataset '{path}': every one of the {read} fails validation: {shown}"
            else:
                message += f"; {len(invalid)} row(s) fail validation: {shown}"
        super().__init__(message)


def _unique_with(rows: list[RawRow], mapper: RowMapper) -> str | None:
    """A column that, put before the id, makes every id of one file unique (``None`` if none does).

    A candidate is filled in every row and no pair (its value, id) repeats; of those,
    the one with the fewest distinct values (an edition or booklet column rather than
    a text), first in the file's column order on a tie.
    """
    used = {mapper.mapping.get(n) for n in ("id", "stem", "answer", *LETTERS)}
    used |= set(template_fields(mapper.id_template or "")) | {mapper.options_column}
    ids = [mapper.row_id(r) for r in rows]
    best: tuple[int, str] | None = None
    for column in rows[0].values if rows else ():
        if column in used:
            continue
        values = [r.values.get(column, "").strip() for r in rows]
        if not all(values) or len(set(zip(values, ids, strict=True))) < len(rows):
            continue
        if best is None or len(set(values)) < best[0]:
            best = (len(set(values)), column)
    return None if best is None else best[1]


def _duplicate_id(
    qid: str, row: RawRow, first: tuple[str, int], mapper: RowMapper, file_rows: list[RawRow]
) -> UserError:
    """The error for a repeated id, with a way to make the ids unique where one exists.

    Ids are never renamed silently: a repeat across files may as well be the same
    file matched twice by a glob, so the user chooses (and the config records) the
    scheme, typically ``id_template: '{file_stem}:{<id column>}'``.  Within one file
    the hint proposes only a column that makes every id of the file unique
    (:func:`_unique_with`), and names the id_template columns that are empty in some rows.
    """
    if mapper.id_template:
        where, id_part = "id_template", mapper.id_template
    else:
        id_column = mapper.mapping.get("id", "id")
        where, id_part = f"column '{id_column}'", f"{{{id_column}}}"
    message = f"{row.source}: line {row.line}, {where}: duplicate id '{qid}' (first seen at {first[0]}: line {first[1]})"
    if first[0] == row.source:
        rows = [r for r in file_rows if not mapper.is_annulled(r)]
        empty = [
            f"column '{name}' is empty in {n} of {len(rows)} rows"
            for name in template_fields(mapper.id_template or "")
            if (n := sum(not r.values.get(name, "").strip() for r in rows))
        ]
        if empty:
            message += f"; in id_template, {', '.join(empty)}"
        other = _unique_with(rows, mapper)
        if other is not None:
            message += (
                "; if ids repeat by design (numbered per edition or booklet), build unique ones with "
                f"dataset.id_template, e.g. '{{{other}}}:{id_part}'"
            )
        else:
            message += "; no other column makes the ids of this file unique (is a question there twice?)"
    elif "{file_stem}" in id_part:
        message += "; two data files have the same name: rename one"
    else:
        message += (
            "; ids repeat across the files of this dataset: make them unique per file with "
            f"dataset.id_template, e.g. '{{file_stem}}:{id_part}'"
        )
    return UserError(message)


def _rest(rows: Iterator[RawRow]) -> list[RawRow]:
    """The rows left in a file (up to a row that cannot be read: the hint makes do without)."""
    out: list[RawRow] = []
    try:
        out.extend(rows)
    except UserError:
        pass
    return out


def _count_problems(loaded: list[tuple[RawRow, Question]], mapper: RowMapper) -> list[tuple[int, UserError]]:
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


def _join_row(row: RawRow, mapper: RowMapper, key: AnswerKey, join: _Join) -> None:
    """Note a row's id for the key join (``match: position`` binds it to the next key entry)."""
    where = f"{row.source}: line {row.line}"
    qid = mapper.row_id(row)
    if qid is None:  # an id_template that cannot be filled: the row's error, built once
        try:
            mapper.built_id(row)
        except UserError as exc:
            join.unfilled.append(exc)
    qid = qid or f"({where})"
    join.rows.append((qid, where))
    key.bind(qid)


@dataclass
class _Join:
    """What the rows tell the key join: every row's (id, where), the questions the key lacks, bad ids."""

    rows: list[tuple[str, str]] = field(default_factory=list)
    missing: list[Unanswered] = field(default_factory=list)
    unfilled: list[UserError] = field(default_factory=list)


def _blank_in_key(row: RawRow, mapper: RowMapper, key: AnswerKey, blank: str) -> str | None:
    """The count a row whose key entry is blank goes to (``answer_key.blank``), or ``None``."""
    qid = mapper.row_id(row)
    if key.match != "id" or qid is None or qid not in key.blank:
        return None
    key.used.add(qid)
    return "removed_annulled" if blank == "annulled" else "removed_blank_in_key"


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
    if cfg.answer_key is not None and cfg.columns and "answer" in cfg.columns:
        raise UserError(
            f"dataset.columns maps answer to '{cfg.columns['answer']}' and dataset.answer_key reads the "
            "answers from a second file; remove one of the two"
        )
    key = None if cfg.answer_key is None else load_answer_key(cfg.answer_key, base_dir)
    mapper = RowMapper(cfg, preset, key)
    sources: list[dict[str, str]] = []
    row_groups: list[Iterable[RawRow]] = []
    if cfg.path.startswith("hf://") or cfg.format == "hf":
        row_groups.append(read_hf(cfg.path if cfg.path.startswith("hf://") else "hf://" + cfg.path))
        sources.append({"path": cfg.path})
    else:
        for path in expand_paths(cfg.path, base_dir):
            row_groups.append(
                read_rows(Path(as_given(path)), cfg.format, cfg.delimiter, cfg.header)
            )  # named as given
            sources.append({"path": str(path), "sha256": file_sha256(path)})
    questions: list[Question] = []
    seen: dict[str, tuple[str, int]] = {}
    counts = {"loaded": 0, "removed_annulled": 0, "removed_invalid": 0}
    invalid: list[str] = []
    join = _Join()  # what the key join needs from the rows
    unscored: list[Question | None] = []  # rows left out before scoring: linted, never counted
    collect = cfg.skip_invalid or _LISTING.get()  # rows that fail: listed (not raised)
    blank_as = "error" if cfg.answer_key is None else cfg.answer_key.blank
    for rows in row_groups:
        loaded: list[tuple[RawRow, Question]] = []
        read: list[RawRow] = []
        iterator = iter(rows)
        problems: list[tuple[int, UserError]] = []  # (line, error) of the rows that fail
        try:
            for number, row in enumerate(iterator):
                read.append(row)
                if number == 0:
                    mapper.check_header(row)
                counts["loaded"] += 1
                if key is not None:
                    _join_row(row, mapper, key, join)
                if mapper.is_annulled(row):
                    counts["removed_annulled"] += 1
                    unscored.append(mapper.unscored(row))
                    continue
                if key is not None and key.blank and (blank := _blank_in_key(row, mapper, key, blank_as)):
                    counts[blank] = counts.get(blank, 0) + 1
                    unscored.append(mapper.unscored(row))
                    continue
                try:
                    question = mapper.to_question(row)
                except MissingAnswer as exc:
                    join.missing.append(Unanswered(exc.qid, exc.where, row.values))
                    continue
                except PatternTimeout as exc:  # the whole load stops: every row would take as long
                    raise PatternTimeout(f"{row.source}: line {row.line}: {exc}") from None
                except UserError as exc:
                    problems.append((row.line, exc))
                    continue
                if question.id in seen:
                    raise _duplicate_id(question.id, row, seen[question.id], mapper, read + _rest(iterator))
                seen[question.id] = (row.source, row.line)
                loaded.append((row, question))
        except UserError:
            if problems and not collect:  # an earlier row failed first
                raise problems[0][1] from None
            raise
        if read:
            mapper.check_mapped(read[0].source, {name for row in read for name in row.values})
        problems = sorted(problems + _count_problems(loaded, mapper), key=lambda p: p[0])
        if problems and not collect:
            raise problems[0][1]
        flagged = {line for line, _ in problems}
        questions += shared_text_clusters([q for row, q in loaded if row.line not in flagged])
        counts["removed_invalid"] += len(problems)
        invalid += [str(exc) for _, exc in problems]
    key_join = None
    if key is not None and cfg.answer_key is not None:
        loaded_ids = [q.id for q in questions]
        key_join = finish_join(
            key, cfg.answer_key, join.rows, join.missing, cfg.skip_invalid, loaded_ids, join.unfilled
        )
        # the join holds: questions without an answer are skipped (skip_invalid) and listed like bad rows
        invalid += [
            f"{m.where}: question '{m.qid}' has no answer in dataset.answer_key" for m in join.missing
        ]
        counts["removed_invalid"] += len(join.missing)
        sources.append(key.source)
    warnings = lint([*questions, *(q for q in unscored if q is not None)], mapper.without_context)
    if mapper.strip:
        counts["stripped"] = mapper.strip.changed
    if cfg.image_markers:  # a question pointing at an image depends on it: filter_images drops it
        questions = [replace(q, has_image=True) if has_image_marker(q) else q for q in questions]
    fixes: list[Fix] = []
    questions = apply_filters(apply_fixes(questions, cfg, warnings, counts, fixes), cfg, counts)
    if cfg.sample is not None and questions:
        questions = draw_sample(questions, cfg.sample, counts)
    counts["kept"] = len(questions)
    _check_balance(counts)
    # the lint's findings are problems only on questions that reach the model, and not once repaired
    repaired = {f.qid for f in fixes if f.after is not None and not f.why}
    reach = {q.id for q in questions}

    def counted(w: LintWarning) -> bool:
        return w.qid in reach and not (w.check == "stem_in_option" and w.qid in repaired)

    if not questions:
        raise NoQuestionLeft(cfg.path, counts, invalid)
    return LoadedDataset(
        questions=questions,
        counts=counts,
        sources=sources,
        invalid=invalid,
        warnings=[w for w in warnings if counted(w)],
        set_aside=[w for w in warnings if not counted(w)],
        key_join=key_join,
        fixes=fixes,
    )


def _check_balance(counts: dict[str, int]) -> None:
    """Every row read is kept or counted under a cause the config set: a row lost without one is an error."""
    removed = sum(v for k, v in counts.items() if k.startswith("removed_"))
    if counts["loaded"] != counts["kept"] + removed:
        raise UserError(
            f"dataset: {counts['loaded']} row(s) read, but {counts['kept']} kept and {removed} removed "
            f"({counts}): {counts['loaded'] - counts['kept'] - removed} row(s) lost without a cause; "
            "please report this as a bug"
        )
