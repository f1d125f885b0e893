"""Read raw rows from CSV, JSON (an array of objects, or JSON Lines) and Hugging Face datasets.

No validation here, except what only the reader can see: a JSON ``NaN`` or
``Infinity`` (what ``json.dump`` writes for a missing float) is recorded per cell in
:attr:`RawRow.nonfinite`, so that the mapper refuses it where the cell is read.

Totals are bounded (:mod:`.bounds`): a file's size before it is read, each line of CSV and
JSON Lines as it is read.
"""

from __future__ import annotations

import csv
import glob
import hashlib
import io
import json
import math
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from enade_bench import json_io
from enade_bench.dataset.bounds import check_size, lines
from enade_bench.errors import UserError, as_given
from enade_bench.regular_file import open_regular


@dataclass(frozen=True)
class RawRow:
    """One row as read from the source, with where it came from (for error messages).

    ``values`` holds every cell as text; a JSON list or object (JSONL, Hugging Face)
    is written there as JSON text and kept as read in ``nested``, so that the mapper
    can refuse it where a text is expected, or read a list of options
    (``dataset.columns.options``).
    """

    source: str
    line: int
    values: dict[str, str]
    nested: dict[str, list[Any] | dict[str, Any]] = field(default_factory=dict)
    #: Keys whose value is a JSON ``NaN``/``Infinity`` (or a float NaN from a Hugging Face table).
    nonfinite: frozenset[str] = frozenset()


def cell_text(value: Any) -> str:
    """A JSON value as the text of a cell (``1.0`` as ``1``; a list or object as JSON text)."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def is_nonfinite(value: Any) -> bool:
    """Whether a JSON value is ``NaN``, ``Infinity`` or ``-Infinity`` (never a text an exam holds)."""
    return isinstance(value, float) and not math.isfinite(value)


#: A lone surrogate: half of a UTF-16 pair (a JSON ``\\ud83d``, an emoji cut in two); not a character.
_SURROGATE = re.compile("[\ud800-\udfff]")
_warned: set[str] = set()


def _whole(value: Any, source: str, line: int) -> Any:
    """``value`` with each lone surrogate as U+FFFD (no tokenizer, file or header can hold one), said
    once per file in one ``warning:`` line naming the first."""
    if isinstance(value, dict):
        return {_whole(k, source, line): _whole(v, source, line) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v, source, line) for v in value]
    found = _SURROGATE.search(value) if isinstance(value, str) and not value.isascii() else None
    if found is None:
        return value
    if source not in _warned:
        _warned.add(source)
        print(
            f"warning: {source}: line {line}: a lone surrogate U+{ord(found.group()):04X} (half of a "
            "character's UTF-16 pair: the text was cut) is read as U+FFFD, here and wherever else the file "
            "holds one",
            file=sys.stderr,
        )
    return _SURROGATE.sub("\ufffd", value)


def _row(source: str, line: int, obj: dict[Any, Any]) -> RawRow:
    """A row of a JSON object: cells as text, lists and objects also kept as read."""
    obj = _whole(obj, source, line)
    nested = {str(k): v for k, v in obj.items() if isinstance(v, list | dict)}
    nonfinite = frozenset(str(k) for k, v in obj.items() if is_nonfinite(v))
    return RawRow(source, line, {str(k): cell_text(v) for k, v in obj.items()}, nested, nonfinite)


#: Separators a CSV header is sniffed for when ``dataset.delimiter`` is not given.
DELIMITERS = ",;\t|"


def sniff_delimiter(header: str) -> str:
    """The separator of a CSV file from its header line (``,`` when it cannot tell)."""
    try:
        return csv.Sniffer().sniff(header, delimiters=DELIMITERS).delimiter
    except csv.Error:
        return ","


def _named_columns(path: Path, header: list[str]) -> list[str]:
    """The header's names, trailing unnamed columns dropped (Excel exports add them)."""
    names = [h.strip() for h in header]
    while names and not names[-1]:
        names.pop()
    if not names:
        raise UserError(f"{path}: line 1: the header names no column")
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise UserError(f"{path}: line 1: duplicate column names {sorted(dupes)}")
    return names


@contextmanager
def _opened(path: Path, newline: str | None = None) -> Iterator[io.TextIOWrapper]:
    """``path`` as UTF-8 text (a BOM dropped); failing to open or decode it is one error naming it."""
    try:
        handle = io.TextIOWrapper(open_regular(path), encoding="utf-8-sig", newline=newline)
    except OSError as exc:
        raise UserError(f"{path}: cannot open dataset ({exc.strerror})") from None
    with handle:
        try:
            yield handle
        except UnicodeDecodeError:
            raise UserError(f"{path}: not UTF-8 text (save the file as UTF-8)") from None


_QUESTION_LIKE = 60


def _reads_like_data(names: list[str]) -> str | None:
    """Why a header row reads like a question (``None``: it reads like a header).

    A lone option letter among the names (``B``: an answer cell; option columns come as a
    run ``A``, ``B``, …) or a name as long as a question, or ending with ``?``.
    """
    letters = [n for n in names if len(n) == 1 and n in "ABCDE"]
    if len(letters) == 1:
        return f"its cell '{letters[0]}' reads like an answer letter"
    long = next((n for n in names if len(n) > _QUESTION_LIKE or n.endswith("?")), None)
    return (
        None
        if long is None
        else f"its cell '{long[:40]}{'…' * (len(long) > 40)}' reads like a question's text"
    )


def read_csv(
    path: Path, delimiter: str | None = None, header: bool | list[str] | None = True
) -> Iterator[RawRow]:
    """Rows of a CSV file, every cell as text; the header gives the column names.

    ``delimiter``: the field separator (``None``: sniffed from the header among
    :data:`DELIMITERS`, so a ``;``-separated export from a spreadsheet reads as is).
    Trailing columns without a name and without values (spreadsheet exports) are dropped.
    ``header`` (``dataset.header``): ``None``, the first row is the header and an error when it
    reads like data (:func:`_reads_like_data`: a file without a header would lose its first
    question); ``True``, the header, unchecked; ``False``, no header (columns ``1``, ``2``, …);
    a list, no header and these names.
    """
    if delimiter is not None and len(delimiter) != 1:
        raise UserError(f"dataset.delimiter: expected one character, e.g. ';', got {delimiter!r}")
    with _opened(path, newline="") as handle:
        first = next(lines(handle, path), "")
        handle.seek(0)
        used = delimiter or sniff_delimiter(first)
        reader = csv.reader(lines(handle, path), strict=True, delimiter=used)
        try:
            first_row = next(reader, None)
            if not first_row:
                raise UserError(f"{path}: empty file (expected a header row)")
            if header is False or isinstance(header, list):  # no header: line 1 is a row
                given = header or [str(i) for i in range(1, len(first_row) + 1)]
                first_row = [*given, *([""] * (len(first_row) - len(given)))]
                handle.seek(0)
                reader = csv.reader(lines(handle, path), strict=True, delimiter=used)
            names = _named_columns(path, first_row)
            if len(names) == 1 and sniff_delimiter(first) != used:
                raise UserError(
                    f"{path}: line 1: the header is one column when split at {used!r}; the file "
                    f"looks {sniff_delimiter(first)!r}-separated: set dataset.delimiter: "
                    f"{sniff_delimiter(first)!r} (or leave it out to detect it)"
                )
            if header is None and (why := _reads_like_data(names)):
                raise UserError(
                    f"{path}: line 1: the file seems to have no header ({why}); name its "
                    f"{len(names)} columns with dataset.header: [name, …] or read them by number with "
                    "dataset.header: false (columns 1, 2, …); if line 1 is the header, set dataset.header: true"
                )
            while True:
                start = reader.line_num + 1  # a quoted field may span lines: report where the row starts
                row = next(reader, None)
                if row is None:
                    break
                if not row or all(not c.strip() for c in row):
                    continue
                if len(row) > len(names) and len(row) <= len(first_row):
                    extra = next((i for i in range(len(names), len(row)) if row[i].strip()), None)
                    if extra is not None:
                        raise UserError(
                            f"{path}: line {start}: a value in column {extra + 1}, which the header "
                            f"does not name ({row[extra].strip()[:30]!r})"
                        )
                    row = row[: len(names)]
                if len(row) != len(names):
                    raise UserError(
                        f"{path}: line {start}: {len(row)} fields, expected {len(names)} "
                        f"as in the header (unbalanced quotes or a stray separator? "
                        f"dataset.delimiter: {reader.dialect.delimiter!r})"
                    )
                for name, cell in zip(names, row, strict=True):
                    if "\x00" in cell:
                        raise UserError(
                            f"{path}: line {start}, column '{name}': NUL byte in the cell (a binary "
                            "file, or a UTF-16 export? save the file as UTF-8 CSV)"
                        )
                yield RawRow(str(path), start, dict(zip(names, row, strict=True)))
        except csv.Error as exc:
            raise UserError(f"{path}: line {reader.line_num}: malformed CSV ({exc})") from None


def _json_text(path: Path) -> str:
    with _opened(path) as handle:
        return handle.read()


def read_jsonl(path: Path) -> Iterator[RawRow]:
    """Rows of a JSON-lines file (one object per line), read line by line (:func:`.bounds.lines`)."""
    with _opened(path) as handle:
        first = True
        for number, line in enumerate(lines(handle, path), start=1):
            if not line.strip():
                continue
            try:
                obj = json_io.loads(line, str(path), number)
            except json.JSONDecodeError as exc:
                hint = _whole_object_hint(_json_text(path)) if first else ""
                raise UserError(f"{path}: line {number}: invalid JSON ({exc.msg}){hint}") from None
            first = False
            if not isinstance(obj, dict):
                raise UserError(f"{path}: line {number}: expected a JSON object")
            yield _row(str(path), number, obj)


def _whole_object_hint(text: str) -> str:
    """What a file that is one JSON object (not one object per line) holds, for the error."""
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        return ""
    if not isinstance(whole, dict):
        return ""
    lists = [k for k, v in whole.items() if isinstance(v, list) and v and all(isinstance(o, dict) for o in v)]
    listed = f"; its key(s) {lists} hold lists of objects: save one of them as the file" if lists else ""
    return (
        "; the file is one JSON object, expected an array of question objects ([{…}, {…}]) "
        f"or one object per line (JSON Lines){listed}"
    )


def read_json_array(path: Path) -> Iterator[RawRow]:
    """Rows of a JSON file holding an array of objects; each row's line is where its object starts."""
    text = _json_text(path)
    decoder = json.JSONDecoder()
    start = len(text) - len(text.lstrip())
    position = start + 1  # after '['
    number = 0

    def skip(at: int) -> int:
        while at < len(text) and text[at].isspace():
            at += 1
        return at

    position = skip(position)
    if position < len(text) and text[position] == "]":
        return
    while True:
        line = text.count("\n", 0, position) + 1
        try:
            obj, end = decoder.raw_decode(text, position)
        except RecursionError:  # nested deeper than the parser recurses: one error line
            raise json_io.too_deep(
                str(path), line + (json_io.too_deep_at(text[position:]) or 1) - 1
            ) from None
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}: line {exc.lineno}: invalid JSON ({exc.msg})") from None
        number += 1
        if json_io.depth(obj) > json_io.MAX_DEPTH:
            raise json_io.too_deep(str(path), line + (json_io.too_deep_at(text[position:end]) or 1) - 1)
        if not isinstance(obj, dict):
            raise UserError(f"{path}: line {line}: expected a JSON object (item {number} of the array)")
        yield _row(str(path), line, obj)
        position = skip(end)
        if position < len(text) and text[position] == ",":
            position = skip(position + 1)
            continue
        if position < len(text) and text[position] == "]":
            if skip(position + 1) < len(text):
                where = text.count("\n", 0, skip(position + 1)) + 1
                raise UserError(f"{path}: line {where}: text after the end of the JSON array")
            return
        where = text.count("\n", 0, position) + 1
        raise UserError(f"{path}: line {where}: invalid JSON (expected ',' or ']' after item {number})")


def read_json(path: Path) -> Iterator[RawRow]:
    """Rows of a JSON file, by its content: an array of objects, or one object per line (JSON Lines)."""
    if _first_char(path) == "[":
        return read_json_array(path)
    return read_jsonl(path)


def read_hf(spec: str) -> Iterator[RawRow]:
    """Rows of a Hugging Face dataset, ``hf://org/name`` or ``hf://org/name:split``."""
    name = spec.removeprefix("hf://")
    name, _, split = name.partition(":")
    try:
        import datasets  # imported lazily: heavy, and only needed for hub datasets  # noqa: PLC0415 (optional or heavy dependency, imported at use)
    except ImportError:
        raise UserError(f"{spec}: the 'datasets' package is needed for hf:// paths") from None
    try:
        table = datasets.load_dataset(name, split=split or "train")
    except Exception as exc:  # noqa: BLE001 - network, auth, missing dataset: all user-facing
        raise UserError(f"{spec}: cannot load Hugging Face dataset ({type(exc).__name__}: {exc})") from None
    for number, obj in enumerate(table, start=1):
        yield _row(spec, number, dict(obj))


def natural_order(path: Path) -> list[str | int]:
    """A path's sort key with its numbers read as numbers: ``part2`` before ``part10``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(path))]


def expand_paths(path: str, base: Path | None = None) -> list[Path]:
    """Files named by ``path`` (a file or a glob), relative to ``base`` if given; a glob's in
    :func:`natural_order` (a key joined by position relies on it)."""
    candidate = Path(path)
    if not candidate.is_absolute() and base is not None:
        candidate = base / candidate
    if any(ch in path for ch in "*?["):
        matches = sorted((Path(p) for p in glob.glob(str(candidate))), key=natural_order)
        if not matches:
            raise UserError(f"dataset.path: no file matches '{as_given(candidate)}'")
        return matches
    if not candidate.exists():
        raise UserError(f"dataset.path: file not found '{as_given(candidate)}'")
    return [candidate]


#: What a file holding JSON starts with (after white space): an array, or JSON Lines' first object.
_JSON_STARTS = ("[", "{")


def _first_char(path: Path) -> str:
    """The first character of ``path`` after a BOM and white space (``""``: none in its first 4 KB)."""
    try:
        with open_regular(path) as handle:
            head = handle.read(4096)
    except OSError:
        return ""
    return head.removeprefix(b"\xef\xbb\xbf").lstrip().decode("utf-8", "replace")[:1]


def read_rows(
    path: Path, fmt: str, delimiter: str | None = None, header: bool | list[str] | None = True
) -> Iterator[RawRow]:
    """Dispatch on the format; ``delimiter`` and ``header`` (:func:`read_csv`): CSV only.

    ``auto``: ``.csv`` is CSV; ``.json``, ``.jsonl``, ``.ndjson`` and any other file whose
    text starts with ``[`` or ``{`` are JSON, read by content (:func:`read_json`: an
    array of objects, or JSON Lines). ``json`` and ``jsonl`` are read by content too.
    A file over :func:`.bounds.max_bytes` is refused here, before a byte of it is read.
    """
    check_size(path)
    if fmt == "auto":
        suffix = path.suffix.lower()
        if suffix == ".csv":
            fmt = "csv"
        elif suffix in (".json", ".jsonl", ".ndjson") or _first_char(path) in _JSON_STARTS:
            fmt = "json"
        else:
            raise UserError(
                f"{path}: unknown dataset format '{suffix}' (expected .csv, .json or .jsonl; "
                "or set dataset.format)"
            )
    return read_csv(path, delimiter, header) if fmt == "csv" else read_json(path)


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes; ``UserError`` (with the reason) if it cannot be read."""
    digest = hashlib.sha256()
    try:
        with open_regular(path) as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise UserError(f"{as_given(path)}: cannot read ({exc.strerror or exc})") from None
    return digest.hexdigest()
