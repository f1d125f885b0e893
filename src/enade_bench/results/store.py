"""Files on disk: the one results reader, atomic writes and the resumable intermediate log.

:func:`read_result` is the only reader of ``*_results.json`` files: it checks the
``schema_version``, brings a file written by an earlier version up to the
current layout (:data:`MIGRATIONS`) and validates it into a :class:`RunResult`.

The intermediate log ``{name}_{strategy}_intermediate.jsonl`` starts with a header
line holding the settings that change the answers and their fingerprint
(:mod:`enade_bench.results.log_key`: config minus output and throughput settings,
strategy, prompt hashes, model identity).  Each completed record is appended as one
line and flushed to disk.  On resume the log is read back; a torn last line (a crash
mid-write) is cut off, and records already present are not recomputed.  A log written
with other settings is refused, naming each setting that changed, rather than mixed in.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue, ValidationError

from enade_bench import json_io
from enade_bench.errors import UserError
from enade_bench.regular_file import open_regular, read_bytes, read_text
from enade_bench.results.identity import legacy_identity
from enade_bench.results.log_key import LogKey
from enade_bench.results.paths import PREVIOUS, RunPaths  # noqa: F401 (re-exported: a run's files)
from enade_bench.results.records import SCHEMA_VERSION, QuestionRecord, RunResult
from enade_bench.results.safe_write import append_text, break_hard_link, write_text
from enade_bench.results.shared_paths import resolved
from enade_bench.results.summary import as_object

JsonObject = dict[str, JsonValue]


def _complete_v1(data: JsonObject) -> JsonObject:
    """Version 1 files from before ``dataset.invalid_rows`` and ``totals.n_questions`` existed."""
    dataset, totals, records = data.get("dataset"), data.get("totals"), data.get("records")
    if isinstance(dataset, dict):
        dataset.setdefault("invalid_rows", [])
    if isinstance(totals, dict) and isinstance(records, list) and "n_questions" not in totals:
        ids = {r.get("id") for r in records if isinstance(r, dict)}
        # The key order of a file written today: n_questions follows errors.
        rebuilt: JsonObject = {}
        for key, value in totals.items():
            rebuilt[key] = value
            if key == "errors":
                rebuilt["n_questions"] = len(ids)
        rebuilt.setdefault("n_questions", len(ids))
        data["totals"] = rebuilt
    return data


@dataclass(frozen=True)
class V1Fields:
    """How one benchmark's version-1 results become version 2 (its own grouping fields).

    Version-1 records held ENADE's ``year``/``course``/``component`` for every exam.

    Attributes
    ----------
    record
        The version-2 ``fields`` of a version-1 record.
    breakdowns
        Version-1 breakdown name -> its version-2 name (others of ``course``,
        ``component`` are dropped).
    """

    record: Callable[[JsonObject], JsonObject]
    breakdowns: dict[str, str]

    @classmethod
    def renamed(cls, names: dict[str, str]) -> V1Fields:
        """Fields that are version-1 values under new names (``{new: old}``)."""
        return cls(
            lambda r: {new: r.get(old) for new, old in names.items()}, {o: n for n, o in names.items()}
        )


#: ENADE's fields, also for a version-1 file of an exam that registered nothing.
_ENADE_V1 = V1Fields.renamed({"year": "year", "course": "course", "component": "component"})
#: Each benchmark's own (benchmarks register theirs when imported: :func:`register_v1_fields`).
V1_FIELDS: dict[str, V1Fields] = {}


def register_v1_fields(benchmark: str, fields: V1Fields) -> None:
    """Declare how version-1 results of ``benchmark`` (``dataset.preset`` then) become version 2."""
    V1_FIELDS[benchmark] = fields


def _v1_fields(preset: str | None) -> V1Fields:
    """The version-1 rule of a benchmark (ENADE's for ENADE and for logs, whose fields come back
    from the loaded questions); an error for another exam whose benchmark was not imported."""
    if preset in (None, "enade"):
        return _ENADE_V1
    if preset not in V1_FIELDS:
        raise UserError(
            f"a version-1 results file of benchmark '{preset}': import enade_bench.benchmarks.{preset} "
            "(the command line does) so that its fields can be read"
        )
    return V1_FIELDS[preset]


def migrate_record_v1(record: JsonObject, preset: str | None = None) -> JsonObject:
    """A version-1 record with ``fields`` in place of ``year``/``course``/``component``.

    ``preset`` is the run's ``dataset.preset`` (``None``: ENADE's fields; a resumed run
    then takes each record's fields from its loaded question, see the runner).
    """
    if "fields" in record:
        return record
    fields = _v1_fields(preset).record(record)
    out: JsonObject = {}
    for key, value in record.items():
        if key == "year":
            out["fields"] = fields
        if key not in ("year", "course", "component"):
            out[key] = value
    out.setdefault("fields", fields)
    return out


def _v1_to_v2(data: JsonObject) -> JsonObject:
    """Each exam's own fields: records' ``year``/``course``/``component`` -> ``fields``.

    Breakdowns keep their cells under the new names; each benchmark declares its own
    (:data:`V1_FIELDS`), e.g. E-EVAL ``course`` -> ``subject``, ``component`` -> ``level``.
    """
    data = _complete_v1(data)
    config = as_object(data.get("config"))
    preset = as_object(config.get("dataset")).get("preset")
    preset = preset if isinstance(preset, str) else None
    records = data.get("records")
    if isinstance(records, list):
        data["records"] = [migrate_record_v1(r, preset) if isinstance(r, dict) else r for r in records]
    breakdowns = data.get("breakdowns")
    if isinstance(breakdowns, dict):
        names = _v1_fields(preset).breakdowns
        data["breakdowns"] = {
            names.get(k, k): v
            for k, v in breakdowns.items()
            if k in names or k not in ("course", "component")
        }
    return data


def _v2_to_v3(data: JsonObject) -> JsonObject:
    """The free-form ``model`` mapping becomes a typed identity (:func:`legacy_identity`)."""
    model = data.get("model")
    if isinstance(model, dict):
        model_type = as_object(as_object(data.get("config")).get("model")).get("type")
        data["model"] = legacy_identity(model, model_type if isinstance(model_type, str) else None)
    return data


def _v3_to_v4(data: JsonObject) -> JsonObject:
    """``complete``: whether no record ended in an error.

    Totals and breakdowns keep their version-3 numbers (errors counted as wrong answers in
    ``n``); the report rescores such files from their records
    (:func:`enade_bench.report.loader.load_results`).
    """
    totals = as_object(data.get("totals"))
    errors = totals.get("errors", 0)
    data.setdefault("complete", not (isinstance(errors, int) and errors > 0))
    return data


#: ``MIGRATIONS[v]`` turns a version-``v`` file into the layout of version ``v + 1``;
#: ``MIGRATIONS[SCHEMA_VERSION]`` fills what earlier writers of the current version left out.
MIGRATIONS: dict[int, Callable[[JsonObject], JsonObject]] = {
    1: _v1_to_v2,
    2: _v2_to_v3,
    3: _v3_to_v4,
    4: lambda data: data,
}


def migrate(data: JsonObject, source: str) -> JsonObject:
    """Bring the parsed JSON of a results file to the current :data:`SCHEMA_VERSION`."""
    version = data.get("schema_version", 1)
    if not isinstance(version, int) or version < 1:
        raise UserError(f"{source}: schema_version: expected a positive integer, got {version!r}")
    if version > SCHEMA_VERSION:
        raise UserError(
            f"{source}: schema_version {version} is newer than this enade-bench reads "
            f"({SCHEMA_VERSION}); upgrade enade-bench"
        )
    while version < SCHEMA_VERSION:
        data = MIGRATIONS[version](data)
        version += 1
        data["schema_version"] = version
    return MIGRATIONS[SCHEMA_VERSION](data)


def read_result(path: Path) -> RunResult:
    """Read one ``*_results.json`` file (any schema version) as a :class:`RunResult`.

    Raises
    ------
    UserError
        Naming the file when it cannot be read, is not JSON, comes from a newer
        version, or is not a results file (with the first key that is wrong).
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO or a device would block or never end
            raise UserError(f"{path}: not a regular file (expected a results file)")
        data = json_io.loads(read_text(path), str(path))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not a readable results file ({exc})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: not a results file (expected a JSON object)")
    try:
        result = RunResult.model_validate(migrate(data, str(path)))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UserError(f"{path}: not a results file ({where}: {first['msg']})") from None
    return _found_here(result, path.parent)


def _found_here(result: RunResult, folder: Path) -> RunResult:
    """``result`` with its data files' paths (recorded relative to its folder) as this machine finds them."""
    sources = [
        {**s, "path": str(resolved(s["path"], folder))} if "path" in s and "://" not in s["path"] else s
        for s in result.dataset.sources
    ]
    return result.model_copy(update={"dataset": result.dataset.model_copy(update={"sources": sources})})


def atomic_write_text(path: Path, text: str, *, root: Path | None = None) -> None:
    """Write ``text`` to ``path`` so that readers see the old or the new file, never half.

    The one safe writer (:func:`enade_bench.results.safe_write.write_text`): a link at
    ``path`` is replaced, never followed; a linked folder below the output folder (``root``,
    else the enclosing :func:`~enade_bench.results.safe_write.output_root`) is refused.
    The file gets the permissions the process umask gives (``0644`` under umask ``022``).

    Raises
    ------
    UserError
        The file cannot be written, with the reason (e.g. ``Not a directory``,
        ``No space left on device``); nothing is left behind.
    """
    write_text(path, text, root=root)


def dump_json(data: JsonValue) -> str:
    """JSON as every results file is written: UTF-8 text, indented, keys in model order."""
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False) + "\n"


class IntermediateLog:
    """Append-only JSONL log of completed records, safe to resume after SIGKILL."""

    def __init__(self, path: Path, key: LogKey) -> None:
        self.path = path
        self.key = key

    def load(self, write: bool = True) -> dict[tuple[str, int], QuestionRecord]:
        """Records already completed (empty when there is no log).

        Cuts a torn last line off the file so that later appends stay well-formed, and
        brings an older header up to date (``write=False``: the file is left as it is).
        """
        self._refuse_link()
        if not self.path.exists():
            return {}
        data = read_bytes(self.path)
        good_end = 0
        records: dict[tuple[str, int], QuestionRecord] = {}
        header: dict[str, JsonValue] = {}
        offset = 0
        remedy = (
            "the log cannot be resumed past it; move the log aside (it keeps every answer before it) "
            "and rerun, or rerun with --no-resume (the earlier files are moved aside, not deleted)"
        )
        for number, raw in enumerate(data.splitlines(keepends=True), start=1):
            line_end = offset + len(raw)
            complete = raw.endswith(b"\n")
            try:
                obj = json_io.loads(raw, str(self.path), number) if complete else None
            except json.JSONDecodeError:
                obj = None
            if obj is None:
                if line_end == len(data):  # a torn last line: drop it
                    break
                raise UserError(
                    f"{self.path}: line {number} (byte {offset}): corrupt line in the middle of the log "
                    f"(not JSON); {remedy}"
                )
            if offset == 0:
                if obj.get("kind") != "header":
                    raise UserError(f"{self.path}: first line is not a header")
                problem = self.key.refusal(obj)
                if problem is not None:
                    raise UserError(f"{self.path}: {problem}")
                for move in self.key.moved(obj):
                    print(
                        f"warning: {self.path}: the server moved ({move}); the answers logged there are "
                        "resumed (the endpoint is where they came from, not a setting of them)",
                        file=sys.stderr,
                    )
                header = obj
            else:
                try:
                    raw_record = obj["record"]
                    if isinstance(raw_record, dict):
                        raw_record = migrate_record_v1(raw_record)
                    record = QuestionRecord.model_validate(raw_record)
                except (KeyError, ValidationError):
                    raise UserError(
                        f"{self.path}: line {number} (byte {offset}): not a result record; {remedy}"
                    ) from None
                records[record.key] = record
            good_end = line_end
            offset = line_end
        if not write:
            return records
        break_hard_link(self.path)  # a 'cp -al' snapshot's log is never changed by this run
        if good_end != len(data):
            with self.path.open("r+b") as handle:
                handle.truncate(good_end)
        if good_end == 0:
            self.path.unlink()
        elif not self.key.unknown and self.key.upgrades(header):  # an older header: the current form
            rest = self.path.read_bytes().split(b"\n", 1)[1]
            atomic_write_text(self.path, self._header_line() + rest.decode("utf-8"))
        return records

    def _refuse_link(self) -> None:
        """The log is read and appended in place: a link there (to a file elsewhere) is refused."""
        if self.path.is_symlink():
            raise UserError(
                f"{self.path}: a symbolic link; the run's log is read and appended in place, never "
                "through a link: remove the link (a copy of the file itself resumes the run)"
            )

    def _header_line(self) -> str:
        return json.dumps(self.key.header(), ensure_ascii=False) + "\n"

    def header(self) -> dict[str, JsonValue] | None:
        """The log's header (``None``: no log, or no complete first line)."""
        self._refuse_link()
        if not self.path.exists():
            return None
        with open_regular(self.path) as handle:
            first = handle.readline()
        try:
            obj = json.loads(first) if first.endswith(b"\n") else None
        except json.JSONDecodeError:
            return None
        return obj if isinstance(obj, dict) and obj.get("kind") == "header" else None

    def start_fresh(self) -> None:
        """Replace any existing log by one holding only the header."""
        atomic_write_text(self.path, self._header_line())

    def write_all(self, records: Sequence[QuestionRecord]) -> None:
        """Replace any existing log by the header and ``records``, at once (a merged study shard's)."""
        self._refuse_link()
        atomic_write_text(self.path, self._header_line() + _record_lines(records))

    def ensure_header(self) -> None:
        if not self.path.exists():
            self.start_fresh()

    def append(self, records: list[QuestionRecord]) -> None:
        """Append records and flush them to disk before returning."""
        if not records:
            return
        self._refuse_link()
        append_text(self.path, _record_lines(records))  # flushed; never through a link, never a secret


def _record_lines(records: Sequence[QuestionRecord]) -> str:
    """The log lines of ``records``, one JSON object each."""
    return "".join(
        json.dumps({"kind": "record", "record": r.model_dump(mode="json")}, ensure_ascii=False) + "\n"
        for r in records
    )
