"""The bad inputs of issue 32's file shapes and harness logs, as data (``bad_inputs/files_*``).

Same contract as ``test_bad_inputs.py``: exit status 2, exactly one ``error:`` line holding
the expected fragment, the model never loaded, nothing written in the corpus or the output
folder. ``files_expected.json``: configs run with ``run``; ``files_commands.json``: other
commands (``compare`` on a damaged ``.eval`` and on a cut lm-eval run, ``bench``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from enade_bench.cli.main import main

CORPUS = Path(__file__).parent / "bad_inputs"
EXPECTED: dict[str, str] = json.loads((CORPUS / "files_expected.json").read_text(encoding="utf-8"))
COMMANDS: list[dict[str, Any]] = json.loads((CORPUS / "files_commands.json").read_text(encoding="utf-8"))


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>" for p in folder.rglob("*")
    }


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        pytest.fail("the model was loaded for a bad input")

    monkeypatch.setattr("enade_bench.runner.run.create_backend", refuse)
    monkeypatch.setattr("enade_bench.bench.gpu.load_engines", refuse)


def _one_line(status: int, capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert status == 2, captured.err
    assert len(err) == 1 and err[0].startswith("error: ") and "Traceback" not in captured.err, captured.err
    return err[0]


@pytest.mark.usefixtures("no_model")
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_files_config_corpus(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(CORPUS)
    before = _tree(CORPUS)
    assert EXPECTED[name] in _one_line(main(["run", name, "--quiet"]), capsys)
    assert _tree(CORPUS) == before


@pytest.mark.usefixtures("no_model")
@pytest.mark.parametrize("case", COMMANDS, ids=[" ".join(c["args"][:3]) for c in COMMANDS])
def test_files_command_corpus(
    case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(CORPUS)
    before, outside = _tree(CORPUS), _tree(tmp_path)
    line = _one_line(main([a.replace("{tmp}", str(tmp_path)) for a in case["args"]]), capsys)
    assert case["expected"] in line, line
    assert _tree(CORPUS) == before and _tree(tmp_path) == outside
