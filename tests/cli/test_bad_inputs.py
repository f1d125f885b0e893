"""Every bad input gives exit status 2 and exactly one ``error:`` line, never a traceback."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from enade_bench.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).parent / "bad_inputs"
EXPECTED: dict[str, str] = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_input_corpus(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(CORPUS)
    status = main(["run", name, "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(err) == 1 and err[0].startswith("error: ")
    assert EXPECTED[name] in err[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["cfg_bad_letter.yaml"], "answer 'E' is not among"),
        (["unknown_key.yaml", "--strategy", "S9"], "unknown key"),
        (["../../../configs/demo.yaml", "--strategy", "S9"], "unknown strategy 'S9'"),
        (["../../../configs/demo.yaml", "--limit", "0"], "--limit: expected a positive integer"),
        (["../../../configs/demo.yaml", "--bogus"], "unrecognized arguments: --bogus"),
        (["does_not_exist.yaml"], "config file not found"),
    ],
)
def test_run_py_process_prints_one_line(args: list[str], expected: str) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "run.py"), *args], cwd=CORPUS,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert expected in lines[0]
    assert "Traceback" not in proc.stderr


def test_help_lists_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    assert "run" in capsys.readouterr().out


COMMANDS: list[dict[str, Any]] = json.loads((CORPUS / "commands.json").read_text(encoding="utf-8"))


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>" for p in folder.rglob("*")
    }


@pytest.mark.parametrize(
    "case", COMMANDS, ids=[" ".join(c["args"][:2]) + f" #{k}" for k, c in enumerate(COMMANDS)]
)
def test_bad_command_corpus(
    case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Other commands than ``run`` (irt, report, eeval, bench) and command-line output paths."""

    def no_model(*_: object) -> None:
        pytest.fail("the model was loaded for a bad input")

    monkeypatch.setattr("enade_bench.runner.run.create_backend", no_model)
    monkeypatch.chdir(CORPUS)
    before, outside = _tree(CORPUS), _tree(tmp_path)
    status = main([arg.replace("{tmp}", str(tmp_path)) for arg in case["args"]])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert case["expected"] in err[0]
    assert _tree(CORPUS) == before and _tree(tmp_path) == outside  # nothing written, not even a probe


def test_a_late_write_failure_is_one_line_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A disk filling up during the report cannot be produced for real here; the OSError is what
    # matplotlib/pandas raise then.
    def disk_full(*_: object) -> None:
        raise OSError(28, "No space left on device", str(tmp_path / "rep" / "figures" / "bpc.png"))

    monkeypatch.setattr("enade_bench.cli.report_cmd.load_results", lambda _: [])
    monkeypatch.setattr("enade_bench.cli.report_cmd.write_report", disk_full)
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {tmp_path / 'rep' / 'figures' / 'bpc.png'}: No space left on device"]


#: Cases caught by the backend factory itself (before any weights are read).
FACTORY_CASES = {"unknown_packaged_model.yaml", "api_capability.yaml"}


@pytest.mark.parametrize("name", sorted(set(EXPECTED) - FACTORY_CASES))
def test_bad_input_corpus_fails_before_the_model(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_model(*_: object) -> None:
        pytest.fail("the model was loaded for a bad input")

    monkeypatch.setattr("enade_bench.runner.run.create_backend", no_model)
    monkeypatch.chdir(CORPUS)
    before = _tree(CORPUS)
    assert main(["run", name]) == 2
    assert EXPECTED[name] in capsys.readouterr().err
    assert _tree(CORPUS) == before
