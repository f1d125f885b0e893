"""Nothing of the author's machine in what is shared (issue 54): every file the demo's run and
report, a study and a comparison write under a folder whose name holds a marker (the
author's home), read as bytes and through PNG and PDF metadata, never names that folder."""

from __future__ import annotations

import json
import re
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

import matplotlib
import pytest
from tests.report.conftest import HOME_MARKER

from enade_bench.cli.main import main
from enade_bench.results.shared_paths import resolved, shared_path
from enade_bench.results.store import read_result

matplotlib.use("Agg")
from matplotlib import pyplot as plt

#: What the author keeps there (the input), and the files that may name the machine: the
#: locks (host, PID) and a study's logs, which resume and the executors' messages read.
NOT_SHARED = re.compile(r"^(data|configs)/|\.lock$|(^|/)logs?/|\.log$")


def _png_texts(data: bytes) -> Iterator[bytes]:
    """The text chunks of a PNG (``tEXt``, ``zTXt``, ``iTXt``), decompressed."""
    at = 8
    while at + 8 <= len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        if kind == b"zTXt":
            yield zlib.decompress(body.split(b"\0", 1)[1][1:])
        elif kind == b"iTXt":
            keyword, rest = body.split(b"\0", 1)
            compressed, text = rest[0], rest[2:].split(b"\0", 2)[-1]
            yield keyword + (zlib.decompress(text) if compressed else text)
        at += 12 + length


def _pdf_streams(data: bytes) -> Iterator[bytes]:
    """A PDF's compressed streams, inflated (its Info dictionary is in the plain bytes)."""
    for match in re.finditer(rb"stream\r?\n(.*?)endstream", data, re.S):
        try:
            yield zlib.decompress(match.group(1))
        except zlib.error:
            continue


def texts(path: Path) -> Iterator[bytes]:
    data = path.read_bytes()
    yield data
    if path.suffix == ".png":
        yield from _png_texts(data)
    elif path.suffix == ".pdf":
        yield from _pdf_streams(data)


def naming(folder: Path, marker: str) -> list[str]:
    """The files under ``folder`` (but :data:`NOT_SHARED`) whose bytes or metadata hold ``marker``."""
    needle = marker.encode()
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = path.relative_to(folder).as_posix()
        if not NOT_SHARED.search(name) and any(needle in text for text in texts(path)):
            found.append(name)
    return found


def test_the_scan_reads_figure_metadata(tmp_path: Path) -> None:
    """The scan can fail: a marker in a PNG's compressed text or a PDF's metadata is found."""
    fig = plt.figure()
    fig.savefig(tmp_path / "a.pdf", metadata={"Author": "someQz9"})
    plt.close(fig)
    body = b"Comment\0\0" + zlib.compress(b"by someQz9")
    chunk = struct.pack(">I", len(body)) + b"zTXt" + body + struct.pack(">I", zlib.crc32(b"zTXt" + body))
    (tmp_path / "b.png").write_bytes(b"\x89PNG\r\n\x1a\n" + chunk)
    (tmp_path / "c.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    assert naming(tmp_path, "someQz9") == ["a.pdf", "b.png"]


def test_a_shared_path_names_no_folder_above_the_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home" / "ana"))
    results = tmp_path / "home" / "ana" / "thesis" / "results" / "demo"
    data = tmp_path / "home" / "ana" / "thesis" / "data" / "q.csv"
    assert shared_path(data, results) == "../../data/q.csv"
    assert resolved("../../data/q.csv", results) == data
    assert shared_path(data, tmp_path / "scratch" / "results") == "q.csv"  # from outside the home: the name
    assert shared_path(tmp_path / "shared" / "q.csv", results).endswith("../shared/q.csv")
    assert "ana" not in shared_path(tmp_path / "shared" / "q.csv", results).split("..")[-1]
    assert (
        shared_path("hf://org/set", results) == "hf://org/set"
        and shared_path("data/q.csv", results) == "data/q.csv"
    )
    package_file = (
        Path(__file__).parents[2] / "src" / "enade_bench" / "benchmarks" / "enade" / "prompts" / "team.yaml"
    )
    named = shared_path(package_file, results)
    assert named == "enade_bench/benchmarks/enade/prompts/team.yaml" and resolved(named, results).is_file()


@pytest.mark.slow
def test_results_record_relative_paths_and_read_back_absolute(results_root: Path) -> None:
    path = next((results_root / "demo").glob("*_S1_results.json"))
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert raw["dataset"]["sources"][0]["path"] == "../../data/enade_demo.csv"
    assert raw["config"]["dataset"]["path"] == "../../data/enade_demo.csv"  # absolute in the config file
    source = Path(read_result(path).dataset.sources[0]["path"])
    assert source.is_absolute() and source.is_file()


@pytest.mark.slow
def test_nothing_written_names_the_authors_folder(
    home: Path, report_dir: Path, study_dir: Path, compare_dir: Path
) -> None:
    """Before: the demo's index.html printed the dataset's absolute path; a study's, 19 paths."""
    assert (report_dir / "index.html").is_file() and (study_dir / "report" / "index.html").is_file()
    assert list(compare_dir.iterdir())
    assert naming(home, HOME_MARKER) == []
    # --report-only finds everything again from the relative paths, and still names nothing
    assert main(["study", str(home / "configs" / "study.yaml"), "--report-only", "--quiet"]) == 0
    assert naming(home, HOME_MARKER) == []
