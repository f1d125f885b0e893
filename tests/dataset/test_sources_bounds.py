"""Issue 61: a dataset file's totals are bounded: its size before it is read, each line as it is read."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.conftest import DEMO_CSV, offline_api_config

from enade_bench.cli.main import main
from enade_bench.dataset import bounds, sources
from enade_bench.errors import UserError


@pytest.mark.parametrize("suffix", [".csv", ".json", ".jsonl"])
def test_a_sparse_2_gb_file_is_one_error_from_its_size_before_a_byte_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    data = tmp_path / f"huge{suffix}"
    with data.open("wb") as handle:
        handle.write(DEMO_CSV.read_bytes()[:200] if suffix == ".csv" else b"[")
        handle.truncate(2 * 10**9)  # sparse: no disk, no memory
    started = time.monotonic()
    assert main(["validate", str(offline_api_config(tmp_path, "big", data)), "--limit", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert time.monotonic() - started < 30  # not the minutes of reading (or hashing) 2 GB
    assert err == [
        f"error: {data}: 2,000 MB, over the 256 MB a dataset file may be (a damaged or wrong file? a larger "
        "exam: set ENADE_BENCH_MAX_DATASET_MB=<MB>)"
    ]


def test_the_size_bound_is_settable_and_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENADE_BENCH_MAX_DATASET_MB", "0.001")
    with pytest.raises(
        UserError, match=r"enade_demo.csv: 0.0\d+ MB, over the 0.001 MB a dataset file may be"
    ):
        bounds.check_size(DEMO_CSV)
    monkeypatch.setenv("ENADE_BENCH_MAX_DATASET_MB", "lots")
    with pytest.raises(UserError, match="ENADE_BENCH_MAX_DATASET_MB: got 'lots'; expected a number of MB"):
        bounds.check_size(DEMO_CSV)
    monkeypatch.setenv("ENADE_BENCH_MAX_DATASET_MB", "1")
    bounds.check_size(DEMO_CSV)  # 13 KB: read


@pytest.mark.parametrize(
    ("suffix", "head"), [(".csv", b"id,stem,A,B,answer\n"), (".jsonl", b'{"id": "q1"}\n')]
)
def test_a_line_without_end_is_one_error_in_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str, head: bytes
) -> None:
    monkeypatch.setattr(bounds, "MAX_LINE_CHARS", 1000)
    data = tmp_path / f"nul{suffix}"
    data.write_bytes(head + b"\0" * 5000)  # a header, then NULs with no line end
    with pytest.raises(UserError) as caught:
        list(sources.read_rows(data, "auto"))
    assert str(caught.value) == (
        f"{data}: line 2: over 1,000 characters without a line end (a binary or damaged file? save the "
        "questions as UTF-8 text, one row per line)"
    )
