"""Bad input through ``run.py`` in a real process, ``--help``, and a write failing late.

The corpus of bad inputs as data is ``test_bad_input_corpus.py``; the generated one
``test_generated_bad_inputs.py``.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from enade_bench.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).parent / "bad_inputs"


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
    proc = subprocess.run(
        [sys.executable, str(ROOT / "run.py"), *args], cwd=CORPUS, capture_output=True, text=True, timeout=120
    )
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


def test_a_late_write_failure_is_one_line_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A disk filling up during the report cannot be produced for real here; the OSError is what
    # matplotlib/pandas raise then.
    def disk_full(*_: object) -> None:
        raise OSError(28, "No space left on device", str(tmp_path / "rep" / "figures" / "bpc.png"))

    monkeypatch.setattr("enade_bench.cli.report_make.load_results", lambda _: [])
    monkeypatch.setattr("enade_bench.cli.report_make.write_report", disk_full)
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {tmp_path / 'rep' / 'figures' / 'bpc.png'}: No space left on device"]
