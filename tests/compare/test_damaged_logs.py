"""A damaged harness log is one ``error:`` line naming the file (and the archive member) (issue 32).

Before: a damaged zstd or deflate member, or a damaged ``header.json``, ended in a
49–64-line traceback. The logs here are the real ones of ``tests/compare/data/inspect``,
damaged byte by byte as a cut download or a bad disk would. A lm-eval samples file cut at
a line boundary (or empty) was accepted while its run's ``results_*.json`` counts more.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from enade_bench.cli.main import main
from enade_bench.compare.importers._rows import ImportOptions
from enade_bench.compare.importers.inspect import member_bytes, read

DATA = Path(__file__).parent / "data" / "inspect" / "eval"
SMOL_EVAL = sorted(DATA.glob("*.eval"))[0]


def _flip(path: Path, member: str, at: float = 0.5) -> None:
    """Overwrite a few bytes inside ``member``'s compressed data (its size and CRC are kept)."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    data = bytearray(path.read_bytes())
    header = info.header_offset
    start = header + 30 + int.from_bytes(data[header + 26 : header + 28], "little")
    start += int.from_bytes(data[header + 28 : header + 30], "little")
    middle = start + int(info.compress_size * at)
    data[middle : middle + 8] = bytes(b ^ 0x5A for b in data[middle : middle + 8])
    path.write_bytes(bytes(data))


def _deflated(tmp_path: Path) -> Path:
    """The same log with its members deflate-compressed (inspect_ai's older logs, other zip tools)."""
    target = tmp_path / "deflate.eval"
    with zipfile.ZipFile(SMOL_EVAL) as source, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for name in source.namelist():
            out.writestr(name, member_bytes(SMOL_EVAL, source, name))
    return target


def _one_error(args: list[str], capsys: pytest.CaptureFixture[str], harness: str = "inspect") -> str:
    assert main(["compare", "--from", harness, *args]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), captured.err
    return err[0]


def test_the_deflated_copy_reads_as_the_original(tmp_path: Path) -> None:
    def rows(log: Path) -> list[tuple[object, ...]]:
        return [
            (r.model, r.item, r.replicate, r.correct, r.where.split(": ", 1)[1])
            for r in read(log, ImportOptions())
        ]

    assert rows(_deflated(tmp_path)) == rows(SMOL_EVAL) and len(rows(SMOL_EVAL)) > 5


@pytest.mark.parametrize("member", ["header.json", "samples/ENEM_2022_CH_80_epoch_1.json"])
@pytest.mark.parametrize("compression", ["zstd", "deflate"])
def test_a_damaged_member_names_the_file_and_the_member(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], compression: str, member: str
) -> None:
    log = tmp_path / "zstd.eval"
    shutil.copy(SMOL_EVAL, log)
    if compression == "deflate":
        log = _deflated(tmp_path)
    _flip(log, member)
    line = _one_error([str(log), "--out", str(tmp_path / "out")], capsys)
    assert line.startswith(f"error: {log}: member {member} is damaged ("), line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"eval": {"model": "x", "ta', "header.json is not JSON"),
        (b"\xff\xfe{}", "header.json is not JSON"),
        (b"[1, 2]", "header.json is list, expected a JSON object"),
        (b'{"eval": []}', "no eval.model and eval.task"),
    ],
)
def test_a_damaged_header_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: bytes, expected: str
) -> None:
    log = tmp_path / "run.eval"
    with zipfile.ZipFile(SMOL_EVAL) as source, zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as out:
        for name in source.namelist():
            out.writestr(name, body if name == "header.json" else member_bytes(SMOL_EVAL, source, name))
    assert f"{log}: {expected}" in _one_error([str(log), "--out", str(tmp_path / "out")], capsys)


def test_a_sample_that_is_not_an_object_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "run.eval"
    with zipfile.ZipFile(SMOL_EVAL) as source, zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as out:
        for name in source.namelist():
            damaged = name == "samples/ENEM_2022_CH_80_epoch_1.json"
            out.writestr(name, b'["x"]' if damaged else member_bytes(SMOL_EVAL, source, name))
    line = _one_error([str(log), "--out", str(tmp_path / "out")], capsys)
    assert f"{log}: samples/ENEM_2022_CH_80_epoch_1.json is list, expected a JSON object" in line


LM_EVAL = Path(__file__).parent / "data" / "lm-eval"


def _lm_eval_copy(tmp_path: Path) -> Path:
    target = tmp_path / "lm-eval"
    shutil.copytree(LM_EVAL, target)
    return target


@pytest.mark.parametrize("keep", [0, 7])
def test_a_cut_or_empty_lm_eval_samples_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], keep: int
) -> None:
    run = _lm_eval_copy(tmp_path)
    samples = next(run.glob("*SmolLM2*/samples_enem_mc_*.jsonl"))
    lines = samples.read_text(encoding="utf-8").splitlines(keepends=True)
    results = json.loads(next(samples.parent.glob("results_*.json")).read_text(encoding="utf-8"))
    expected = results["n-samples"]["enem_mc"]["effective"]
    assert len(lines) == expected > keep  # one line per document: the fixture is whole
    samples.write_text("".join(lines[:keep]), encoding="utf-8")  # cut at a line boundary: valid JSON Lines
    line = _one_error([str(run), "--out", str(tmp_path / "out")], capsys, harness="lm-eval")
    found = f"{keep} under filter 'none'" if keep else "none"
    assert line.startswith(f"error: {samples}: {found} of the {expected} documents results_"), line
    assert "for task 'enem_mc' (n-samples)" in line and not (tmp_path / "out").exists()


def test_a_whole_lm_eval_run_still_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--from", "lm-eval", str(LM_EVAL), "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
