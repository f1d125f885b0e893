"""Issue 32's unclear cases as data (``bad_inputs/cli_commands.json``): each is exit 2 and one
``error:`` line saying what the user typed and what is accepted, nothing written, no model loaded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from enade_bench.cli.main import main

CORPUS = Path(__file__).parent / "bad_inputs"
CASES: list[dict[str, Any]] = json.loads((CORPUS / "cli_commands.json").read_text(encoding="utf-8"))


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>" for p in folder.rglob("*")
    }


@pytest.mark.parametrize("case", CASES, ids=[" ".join(c["args"][:2]) + f" #{k}" for k, c in enumerate(CASES)])
def test_unclear_case_is_one_clear_line(
    case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_model(*_: object) -> None:
        pytest.fail("the model was loaded for a bad input")

    monkeypatch.setattr("enade_bench.runner.run.create_backend", no_model)
    monkeypatch.chdir(CORPUS)
    before, outside = _tree(CORPUS), _tree(tmp_path)
    status = main([arg.replace("{tmp}", str(tmp_path)) for arg in case["args"]])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert case["expected"] in err[0], err[0]
    assert "constrained-" not in err[0] and "literal[" not in err[0]
    assert _tree(CORPUS) == before and _tree(tmp_path) == outside
