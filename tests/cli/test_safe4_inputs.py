"""Issue 61: every locale, every name: a command never ends in a traceback."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from tests.conftest import offline_api_config

from enade_bench.cli.main import main

REPO = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).parent / "bad_inputs" / "cli_results"


def test_validate_dry_run_and_report_under_the_c_locale_and_an_ascii_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The C locale's streams use ``surrogateescape``, not ``strict``: reconfigured all the same."""
    cfg = offline_api_config(tmp_path, "enc")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONIO", "PYTHONUTF"))}
    locales = {"c": {"LC_ALL": "C", "PYTHONUTF8": "0"}, "ascii": {"PYTHONIOENCODING": "ascii"}}
    commands = {
        "validate": ["validate", str(cfg), "--limit", "1"],
        "dry-run": ["run", str(cfg), "--dry-run", "--limit", "1"],
    }
    runs = {  # at once: each is a fresh interpreter
        (where, name): subprocess.Popen(
            [sys.executable, "-m", "enade_bench", *args],
            env={**base, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for where, env in locales.items()
        for name, args in commands.items()
    }
    for (where, name), proc in runs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0 and b"Traceback" not in err, (where, name, err.decode("ascii", "replace"))
        if name == "validate":
            assert b"quest\\xe3o" in out.lower(), (where, out[-300:])  # escaped, not lost
    # report in this process (its figures take seconds), on the C locale's stdout: ASCII, surrogateescape
    c_stdout = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="surrogateescape")
    monkeypatch.setattr("sys.stdout", c_stdout)
    assert main(["report", str(RESULTS), "--out", str(tmp_path / "relatório")]) == 0
    c_stdout.flush()
    assert b"relat\\xf3rio" in c_stdout.buffer.getvalue()  # type: ignore[attr-defined]


def test_a_name_in_math_text_or_with_a_lone_surrogate_is_drawn_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Results files made elsewhere: an experiment named ``$\\undefinedcmd{x}$``, one whose name and
    stem hold a lone surrogate: the report, with its comparison of models and their figures, ends 0
    (matplotlib's math text never parses a name; a surrogate is shown as its escape)."""
    result = json.loads((RESULTS / "demo_S5_results.json").read_text(encoding="utf-8"))
    (tmp_path / "results").mkdir()
    for k, name in enumerate(("$\\undefinedcmd{x}$", "plain", "m\ud83d")):
        result["experiment"] = result["config"]["name"] = name
        result["records"][0]["prompt"] += "\ud83d" if k == 2 else ""  # where the stem shown is read from
        (tmp_path / "results" / f"r{k}_S5_results.json").write_text(json.dumps(result), encoding="utf-8")
    assert main(["report", str(tmp_path / "results"), "--out", str(tmp_path / "report")]) == 0
    assert "Traceback" not in capsys.readouterr().err
    assert (tmp_path / "report" / "figures" / "comparison_clustered.png").is_file()
    assert "m\\ud83d" in (tmp_path / "report" / "index.html").read_text(encoding="utf-8")


def test_a_fifo_as_the_answer_key_is_named_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(tmp_path / "key.fifo")
    cfg = {
        "name": "fifo",
        "dataset": {
            "benchmark": "enade",
            "path": str(REPO / "data" / "enade_demo.csv"),
            "answer_key": {"path": "key.fifo"},
        },
        "model": {"type": "api", "api": {"provider": "openai_compatible", "model": "m"}},
        "evaluation": {"method": "api"},
    }
    (tmp_path / "fifo.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    assert main(["validate", str(tmp_path / "fifo.yaml")]) == 2  # at once: a FIFO is never opened to wait
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith(
        "key.fifo: not a regular file (a FIFO (named pipe)); expected a file"
    )
