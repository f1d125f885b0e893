"""``bench`` on bad input or from another folder: one ``error:`` line, before any model (issue 32).

Before: ``bench --device cuda`` on a CPU machine ended after 30 s in ``AssertionError: Torch
not compiled with CUDA enabled``, ``--layers -3`` was accepted, and ``bench`` from any folder
but the repository root failed with ``RuntimeError: benchmark worker failed`` wrapping the
real one-line error (the default data path was relative to the current folder).
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

import pytest
import torch
from tests.conftest import REPO_ROOT, SHARED_DATA

from bench.__main__ import main
from bench.speed.options import DEFAULT_QUESTIONS, ENEM_DIR


def _one_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "Traceback" not in captured.err, captured.err
    return err[0]


def _no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        pytest.fail("the GPU arm loaded its engines for a bad input")

    monkeypatch.setattr("bench.speed.gpu.load_engines", refuse)
    monkeypatch.setattr("bench.speed.gpu.load_questions", refuse)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is visible: --device cuda is valid here")
def test_device_cuda_on_a_machine_without_one_is_refused_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _no_model(monkeypatch)
    line = _one_error(
        ["--device", "cuda", "--shape", "smollm2-135m", "--out", str(tmp_path / "b.json")], capsys
    )
    assert line.startswith("error: bench: --device cuda: no CUDA device here (torch ")
    assert not (tmp_path / "b.json").exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--layers", "-3"], "--layers: expected a positive integer, got -3"),
        (["--layers", "0"], "--layers: expected a positive integer, got 0"),
        (["--limit", "-1"], "--limit: expected a positive integer, got -1"),
        (["--model-dir", "no/such/folder"], "--model-dir: no folder 'no/such/folder'"),
        (["--enem-dir", "no/such/folder"], "--enem-dir: no folder 'no/such/folder'"),
    ],
)
def test_gpu_arm_options_are_checked_before_any_load(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    expected: str,
) -> None:
    _no_model(monkeypatch)
    line = _one_error(["--device", "cpu", *args, "--out", str(tmp_path / "b.json")], capsys)
    assert line == f"error: bench: {expected}"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--engine", "foo"], "error: python -m bench: argument --engine: invalid choice: 'foo'"),
        (["--limit", "many"], "error: python -m bench: argument --limit: invalid int value: 'many'"),
        (["--no-such-option"], "error: python -m bench: unrecognized arguments: --no-such-option"),
    ],
)
def test_a_usage_error_is_one_line(
    args: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m bench`` keeps enade-bench's contract for what argparse refuses (no usage block)."""
    assert _one_error(args, capsys).startswith(expected)


def test_an_interrupt_is_one_line_and_exit_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(_: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr("bench.__main__.run", interrupted)
    assert main(["--no-lmeval", "--out", str(tmp_path / "b.json")]) == 130
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == ["error: interrupted"], captured.err


def test_the_default_data_is_found_from_any_folder() -> None:
    for default in (DEFAULT_QUESTIONS, ENEM_DIR):
        assert os.path.isabs(default) and Path(default).is_relative_to(REPO_ROOT.parent), default
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent")
    assert glob.glob(DEFAULT_QUESTIONS) and Path(ENEM_DIR).is_dir()


@pytest.mark.slow
def test_an_error_in_the_worker_is_the_users_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # not the repository root
    line = _one_error(["--no-lmeval", "--questions", "exam/*.csv", "--out", "b.json"], capsys)
    assert line == "error: dataset.path: no file matches 'exam/*.csv'"
    assert not list(tmp_path.iterdir())
