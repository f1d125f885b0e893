"""Load the E-EVAL layout through the core dataset layer.

Layout (``dataset.path`` names the root or one split folder)::

    eeval/dev/<Subject>_dev.csv     id, question, A, B, C, D, answer, explanation
    eeval/val/<Subject>_val.csv     id, question, A, B, C, D, answer
    eeval/test/<Subject>_test.csv   id, question, A, B, C, D   (answers private)

Rows are read by :func:`enade_bench.dataset.sources.read_csv`, so every cell is
text: the spreadsheet-mangled values of the upstream release (``1900-01-01
01:01:17`` in option cells) stay exactly as written.  Each row becomes a core
:class:`~enade_bench.dataset.schema.Question` with

* ``id`` = ``<subject key>/<row id>`` (unique across subjects),
* ``fields`` = ``subject`` (the subject key) and ``level`` (``primary``,
  ``middle``, ``high``): the core's breakdowns are per subject and per level,
* ``answer`` = the key, or ``""`` on the test split (answers are private).

Upstream quirks are kept, never dropped (the submission needs every id), and
counted in :attr:`LoadedDataset.counts`: ``empty_stem`` (items whose stem is
empty; the options alone are shown) and ``three_options`` (an empty option D).
``dataset.cursos`` filters subjects (key, file prefix or display name) and
``dataset.componentes`` levels (``primary``/``middle``/``high``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from enade_bench.benchmarks.eeval.subjects import LEVELS, Subject, parse_subject_file
from enade_bench.config import DatasetConfig
from enade_bench.dataset.loader import LoadedDataset
from enade_bench.dataset.schema import LETTERS, Question
from enade_bench.dataset.sources import RawRow, file_sha256, read_csv
from enade_bench.errors import UserError, as_given

SPLITS = ("dev", "val", "test")
EVAL_COLUMNS = ("id", "question", "A", "B", "C", "D")


@dataclass(frozen=True)
class Demo:
    """One dev-split worked example (k-shot demonstrations)."""

    stem: str
    options: tuple[str, ...]
    answer: str
    explanation: str


@dataclass
class EEvalData:
    """The questions of one split plus the dev demonstrations per subject.

    Attributes
    ----------
    split
        ``val`` or ``test`` (``dev`` too, for completeness).
    dataset
        The core dataset object: questions, filter counts, source files and hashes.
    subjects
        Subject of each key present in ``dataset``.
    demos
        Dev-split demonstrations per subject key, in file order.
    """

    split: str
    dataset: LoadedDataset
    subjects: dict[str, Subject]
    demos: dict[str, tuple[Demo, ...]]


def resolve_layout(path: str) -> tuple[Path, str]:
    """The E-EVAL root folder and the split that ``dataset.path`` names.

    ``path`` is the root (split ``val``) or one of its ``dev``/``val``/``test`` folders.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise UserError(
            f"dataset.path: '{as_given(folder)}' is not a folder (expected the E-EVAL root or a split)"
        )
    if folder.name in SPLITS:
        return folder.parent, folder.name
    if (folder / "val").is_dir():
        return folder, "val"
    raise UserError(f"dataset.path: '{as_given(folder)}' has no dev/val/test folders (not the E-EVAL layout)")


def _check_header(row: RawRow, needed: Iterable[str]) -> None:
    missing = [c for c in needed if c not in row.values]
    if missing:
        raise UserError(
            f"{row.source}: missing column(s) {', '.join(missing)}; columns present: "
            f"{', '.join(sorted(row.values))}"
        )


def _options(row: RawRow) -> tuple[str, ...]:
    where = f"{row.source}: line {row.line}"
    raw = [row.values.get(letter, "").strip() for letter in "ABCD"]
    n = max((i + 1 for i, text in enumerate(raw) if text), default=0)
    if n < 2:
        raise UserError(f"{where}: fewer than two non-empty options")
    gaps = [LETTERS[i] for i in range(n) if not raw[i]]
    if gaps:
        raise UserError(f"{where}, column '{gaps[0]}': empty option before a non-empty one")
    return tuple(raw[:n])


def _answer(row: RawRow, n_options: int) -> str:
    answer = row.values.get("answer", "").strip().upper()
    if answer not in LETTERS[:n_options] or not answer:
        raise UserError(
            f"{row.source}: line {row.line}, column 'answer': answer '{row.values.get('answer', '')}' "
            f"is not among the non-empty options (A–{LETTERS[n_options - 1]})"
        )
    return answer


def read_subject_file(path: Path, subject: Subject, split: str) -> Iterable[tuple[RawRow, Question]]:
    """Rows of one subject file as core questions (``answer`` is ``""`` on the test split)."""
    first = True
    for row in read_csv(path):
        if first:
            _check_header(row, (*EVAL_COLUMNS, *(() if split == "test" else ("answer",))))
            first = False
        raw_id = row.values["id"].strip()
        if not raw_id:
            raise UserError(f"{row.source}: line {row.line}, column 'id': empty question id")
        options = _options(row)
        question = Question(
            id=f"{subject.key}/{raw_id}",
            stem=row.values["question"].strip(),
            options=options,
            answer="" if split == "test" else _answer(row, len(options)),
            extra=(("subject", subject.key), ("split", split), ("source_file", path.name)),
            fields={"subject": subject.key, "level": subject.level},
        )
        yield row, question


def _subject_files(root: Path, split: str) -> list[tuple[Path, Subject]]:
    folder = root / split
    files = sorted(folder.glob(f"*_{split}.csv"))
    if not files:
        raise UserError(f"dataset.path: no *_{split}.csv file in '{as_given(folder)}'")
    return [(path, parse_subject_file(path)[0]) for path in files]


def _wanted(cfg: DatasetConfig, subjects: list[Subject]) -> set[str]:
    keep = {s.key for s in subjects}
    if cfg.cursos is not None:
        names = {n.strip().lower() for n in cfg.cursos}
        known = {s.key: {s.key, s.file_prefix.lower(), s.name_en.lower(), s.name_zh} for s in subjects}
        unknown = names - set().union(*known.values())
        if unknown:
            raise UserError(
                f"dataset.cursos: unknown E-EVAL subject(s) {sorted(unknown)} "
                f"(allowed: {', '.join(sorted(known))})"
            )
        keep = {k for k, aliases in known.items() if aliases & names}
    if cfg.componentes is not None:
        levels = {lv.strip().lower() for lv in cfg.componentes}
        if levels - set(LEVELS):
            raise UserError(
                f"dataset.componentes: unknown level(s) {sorted(levels - set(LEVELS))} "
                f"(allowed: {', '.join(LEVELS)})"
            )
        keep = {s.key for s in subjects if s.key in keep and s.level in levels}
    return keep


def load_demos(root: Path, subject: Subject) -> tuple[tuple[Demo, ...], dict[str, str]]:
    """The dev-split demonstrations of one subject, and the file's source entry."""
    path = root / "dev" / f"{subject.file_prefix}_dev.csv"
    if not path.exists():
        raise UserError(
            f"{as_given(path)}: dev file missing (needed for k-shot demonstrations of {subject.key})"
        )
    demos = []
    for row, question in read_subject_file(Path(as_given(path)), subject, "dev"):
        _check_header(row, ("explanation",))
        demos.append(Demo(question.stem, question.options, question.answer, row.values["explanation"]))
    return tuple(demos), {"path": str(path), "sha256": file_sha256(path), "split": "dev"}


def load_eeval(cfg: DatasetConfig, limit_per_subject: int | None = None) -> EEvalData:
    """Load one E-EVAL split (questions in subject-file order) and its dev demonstrations.

    Parameters
    ----------
    cfg
        The ``dataset`` block (``preset: eeval``); ``path`` is the root or a split folder.
    limit_per_subject
        Keep only the first N questions of each subject (quick runs).
    """
    if cfg.anos is not None:
        raise UserError("dataset.anos: E-EVAL items have no year; leave it null")
    root, split = resolve_layout(cfg.path)
    files = _subject_files(root, split)
    keep = _wanted(cfg, [s for _, s in files])
    counts = {"loaded": 0, "removed_subject": 0, "removed_level": 0, "removed_limit": 0}
    counts |= {"empty_stem": 0, "three_options": 0}
    questions: list[Question] = []
    sources: list[dict[str, str]] = []
    subjects: dict[str, Subject] = {}
    demos: dict[str, tuple[Demo, ...]] = {}
    for path, subject in files:
        rows = [q for _, q in read_subject_file(Path(as_given(path)), subject, split)]
        counts["loaded"] += len(rows)
        if subject.key not in keep:
            levels_ok = cfg.componentes is None or subject.level in {c.lower() for c in cfg.componentes}
            counts["removed_level" if not levels_ok else "removed_subject"] += len(rows)
            continue
        if limit_per_subject is not None:
            counts["removed_limit"] += max(0, len(rows) - limit_per_subject)
            rows = rows[:limit_per_subject]
        seen: set[str] = set()
        for q in rows:
            if q.id in seen:
                raise UserError(f"{as_given(path)}: duplicate id '{q.id.partition('/')[2]}'")
            seen.add(q.id)
        counts["empty_stem"] += sum(not q.stem for q in rows)
        counts["three_options"] += sum(q.n_options == 3 for q in rows)
        questions += rows
        subjects[subject.key] = subject
        sources.append({"path": str(path), "sha256": file_sha256(path), "split": split})
        if split != "dev":
            demos[subject.key], dev_source = load_demos(root, subject)
            sources.append(dev_source)
    counts["kept"] = len(questions)
    if not questions:
        raise UserError(f"dataset '{cfg.path}': no question left after the filters ({counts})")
    return EEvalData(split, LoadedDataset(questions, counts, sources), subjects, demos)
