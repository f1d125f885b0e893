"""inspect_ai logs: ``compare --from inspect LOGS`` (``.eval`` files, ``.json`` files or folders of them).

An ``.eval`` log is a zip (inspect_ai ``log/_recorders/eval.py``): ``header.json`` (the
``EvalLog`` without samples: ``eval.model``, ``eval.task``…, written when the run ends) and
``samples/<id>_epoch_<n>.json``, one ``EvalSample`` each (``log/_log.py``: ``id``, ``epoch``,
``input``, ``target``, ``scores`` {scorer: ``Score``}, ``metadata``, ``error``); a ``.json``
log is the whole ``EvalLog`` with its ``samples`` in one file.

The layout is read here rather than with inspect_ai's ``read_eval_log``: inspect_ai is a
large install with its own pins (pydantic, httpx, the model SDKs) that a comparison does
not need, and the two files above are its documented, versioned format.  inspect_ai 0.3.x
compresses ``.eval`` members with zstd, read with the ``zstandard`` package.

The mapping (docs/comparisons.md, "Results from other harnesses"):

* model: ``eval.model`` (``provider/name``); item: ``<eval.task>/<sample id>``;
* replicate: the epoch; fields: ``task`` and the sample's scalar ``metadata``;
* correct: the sample's one scorer, or the scorer named by ``--metric``; its value must be
  ``C``/``I`` (inspect's CORRECT/INCORRECT; ``N``, no answer, counts as wrong, as
  inspect's ``value_to_float`` does), true/false or 0/1;
* samples that ended in an error are left out (an error is not an answer).
"""

from __future__ import annotations

import io
import json
import re
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

from enade_bench.compare.importers._rows import ImportOptions, Row, Shown, as_correct, measured, read_json
from enade_bench.compare.table import BASE_COLUMNS, stem_excerpt
from enade_bench.errors import UserError
from enade_bench.regular_file import open_regular

__all__ = ["read"]

_VALUES = {"C": 1, "I": 0, "N": 0}
_SAMPLE = re.compile(r"^samples/.+_epoch_\d+\.json$")
_ZSTD = 93  # zip compression method of Zstandard (APPNOTE 4.4.5)
_NOT_LOGS = {"logs.json", "eval-set.json"}  # the listing files inspect writes beside logs


def read(path: Path, options: ImportOptions) -> list[Row]:
    """Every scored, error-free sample of the ``.eval``/``.json`` logs at ``path``."""
    if not path.exists():
        raise UserError(f"{path}: no such file or folder")
    if path.is_file():
        files = [path]
    else:
        files = sorted(
            p for p in path.rglob("*") if p.suffix in {".eval", ".json"} and p.name not in _NOT_LOGS
        )
    if not files:
        raise UserError(f"{path}: no inspect_ai log (*.eval or *.json) under it")
    rows: list[Row] = []
    for file in files:
        header, samples = _read_eval(file) if file.suffix == ".eval" else _read_json(file)
        spec = header.get("eval") if isinstance(header, dict) else None
        if not isinstance(spec, dict) or not spec.get("model") or not spec.get("task"):
            raise UserError(f"{file}: no eval.model and eval.task; expected an inspect_ai log")
        for where, sample in samples:
            if sample.get("error"):
                continue
            rows.append(_row(sample, str(spec["model"]), str(spec["task"]), options, where))
    return rows


def _read_json(file: Path) -> tuple[Any, list[tuple[str, dict[str, Any]]]]:
    log = read_json(file)
    samples = log.get("samples") if isinstance(log, dict) else None
    if not isinstance(samples, list):
        raise UserError(
            f"{file}: no 'samples' list; expected an inspect_ai log written with its samples "
            "(--log-format json)"
        )
    return log, [
        (f"{file}: sample {s.get('id')!r} epoch {s.get('epoch')}", s) for s in samples if isinstance(s, dict)
    ]


def _read_eval(file: Path) -> tuple[Any, list[tuple[str, dict[str, Any]]]]:
    try:
        with open_regular(file) as handle, zipfile.ZipFile(handle) as archive:
            names = archive.namelist()
            if "header.json" not in names:
                raise UserError(
                    f"{file}: no header.json in it; inspect_ai writes it when the eval ends "
                    "(is the eval still running?)"
                )
            header = _json(file, archive, "header.json")
            if not isinstance(header, dict):
                raise UserError(f"{file}: header.json is {type(header).__name__}, expected a JSON object")
            samples = []
            for name in sorted(n for n in names if _SAMPLE.match(n)):
                sample = _json(file, archive, name)
                if not isinstance(sample, dict):
                    raise UserError(f"{file}: {name} is {type(sample).__name__}, expected a JSON object")
                samples.append((f"{file}: {name}", sample))
    except zipfile.BadZipFile as exc:
        raise UserError(f"{file}: not a zip file; expected an inspect_ai .eval log ({exc})") from None
    return header, samples


def _damaged(file: Path, name: str, reason: str) -> UserError:
    return UserError(f"{file}: member {name} is damaged ({reason}); the log cannot be read (copy it again)")


def member_bytes(file: Path, archive: zipfile.ZipFile, name: str) -> bytes:
    """One member of an ``.eval`` zip, uncompressed (deflate by ``zipfile``, zstd by :mod:`zstandard`).

    A damaged member (broken compressed data, a CRC that does not match, a member cut
    short) is an ``error:`` naming the file and the member.
    """
    info = archive.getinfo(name)
    try:
        return archive.read(info)
    except NotImplementedError:
        data = _zstd_member(file, info)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
        raise _damaged(file, name, str(exc) or type(exc).__name__) from None
    if zlib.crc32(data) != info.CRC or len(data) != info.file_size:
        raise _damaged(file, name, "its CRC-32 or size does not match the zip directory")
    return data


def _json(file: Path, archive: zipfile.ZipFile, name: str) -> Any:
    data = member_bytes(file, archive, name)
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{file}: {name} is not JSON ({exc})") from None


def _zstd_member(file: Path, info: zipfile.ZipInfo) -> bytes:
    """A zstd-compressed member (method 93), which the standard ``zipfile`` of Python < 3.14 cannot read."""
    if info.compress_type != _ZSTD:
        raise UserError(
            f"{file}: {info.filename} uses zip compression method {info.compress_type}, "
            "which cannot be read here"
        )
    try:
        import zstandard  # noqa: PLC0415 (only .eval logs need it)
    except ImportError:
        raise UserError(
            f"{file}: its members are zstd-compressed; install zstandard (pip install zstandard) "
            f"or convert the log: inspect log convert {file} --to json --output-dir DIR"
        ) from None
    with open_regular(file) as f:
        f.seek(info.header_offset)
        local = f.read(30)
        if len(local) < 30 or local[:4] != b"PK\x03\x04":
            raise _damaged(file, info.filename, "no local file header where the zip directory points")
        name_length, extra_length = struct.unpack("<HH", local[26:30])
        f.seek(info.header_offset + 30 + name_length + extra_length)
        raw = f.read(info.compress_size)
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True) as reader:
            return bytes(reader.read())
    except zstandard.ZstdError as exc:
        raise _damaged(file, info.filename, f"zstd: {exc}") from None


def _row(sample: dict[str, Any], model: str, task: str, options: ImportOptions, where: str) -> Row:
    scores = sample.get("scores") or {}
    if not isinstance(scores, dict) or not scores:  # a damaged sample too
        raise UserError(f"{where}: no scores; expected a scored sample (score the log with inspect score)")
    name = options.metric_for(task)
    if name is None:
        if len(scores) > 1:
            raise UserError(f"{where}: scorers {', '.join(scores)}; choose one with --metric")
        name = next(iter(scores))
    if name not in scores:
        raise UserError(f"{where}: no scorer {name!r} (scorers: {', '.join(scores)})")
    score = scores[name] if isinstance(scores[name], dict) else {}
    value = score.get("value")
    correct = (
        _VALUES[value] if isinstance(value, str) and value in _VALUES else as_correct(value, where, name)
    )
    found = sample.get("attachments")
    attachments: dict[str, str] = found if isinstance(found, dict) else {}
    target = sample.get("target", "")
    fields = {"task": task}
    metadata = sample.get("metadata")
    for key, item in (metadata if isinstance(metadata, dict) else {}).items():
        if isinstance(item, (str, int, float, bool)) and key not in BASE_COLUMNS:
            fields.setdefault(str(key), str(item))
    text = _text(sample.get("input"), attachments)
    return Row(
        model=model,
        item=f"{task}/{sample.get('id')}",
        replicate=str(sample.get("epoch", 1)),
        correct=correct,
        where=where,
        stem=stem_excerpt(text),
        answer=", ".join(target) if isinstance(target, list) else str(target),
        prediction=str(score.get("answer") or ""),
        fields=fields,
        shown=_shown(sample, text),
    )


def _shown(sample: dict[str, Any], text: str) -> Shown:
    """The sample's text, its choices, the model's completion, and its tokens and time
    (``output.usage``, ``output.time``: the model's own, scoring left out)."""
    found = sample.get("output")
    output: dict[str, Any] = found if isinstance(found, dict) else {}
    usage: dict[str, Any] = output["usage"] if isinstance(output.get("usage"), dict) else {}
    choices = sample.get("choices")
    return Shown(
        text,
        tuple(str(c) for c in choices) if isinstance(choices, list) else (),
        raw=str(output["completion"]) if output.get("completion") is not None else None,
        usage=measured(usage.get("input_tokens"), usage.get("output_tokens"), output.get("time")),
    )


def _text(value: Any, attachments: dict[str, str]) -> str:
    """The question's text: a string, or the last user message (its text parts); attachments resolved."""
    if isinstance(value, list):
        users = [m for m in value if isinstance(m, dict) and m.get("role") == "user"]
        content = users[-1].get("content", "") if users else ""
        if isinstance(content, list):
            content = " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
        value = content
    text = str(value or "")
    if text.startswith("attachment://"):
        text = str(attachments.get(text.removeprefix("attachment://"), text))
    return text
