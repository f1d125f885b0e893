"""Issue 40's inputs that the data corpus cannot hold: a FIFO, a folder in use, the home
folder, control characters in a name, a deep log line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from enade_bench.cli.main import main
from enade_bench.config import output_dir, parse_config
from enade_bench.errors import UserError
from enade_bench.results.log_key import LogKey
from enade_bench.results.store import IntermediateLog

CORPUS = Path(__file__).parent / "bad_inputs"
RESULTS = CORPUS / "cli_results" / "demo_S5_results.json"
DEMO = Path(__file__).resolve().parents[2] / "data" / "enade_demo.csv"


def _results(folder: Path, model_name: str | None = None, experiment: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = json.loads(RESULTS.read_text(encoding="utf-8"))
    if model_name is not None:
        data["config"]["model"]["name"] = model_name
    if experiment is not None:
        data["experiment"] = data["config"]["name"] = experiment
    (folder / f"{experiment or 'demo'}_S5_results.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_a_fifo_named_like_a_results_file_is_skipped_never_opened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = _results(tmp_path / "res")
    os.mkfifo(results / "other_S1_results.json")  # opening it would block forever
    assert main(["report", str(results), "--out", str(tmp_path / "rep")]) == 0
    err = capsys.readouterr().err
    assert f"warning: {results / 'other_S1_results.json'}: not a regular file" in err and "skipped" in err
    only_fifo = tmp_path / "fifo_only"
    only_fifo.mkdir()
    os.mkfifo(only_fifo / "x_S1_results.json")
    assert main(["report", str(only_fifo), "--out", str(tmp_path / "rep2")]) == 2
    assert "error: no *_results.json files under" in capsys.readouterr().err


def test_a_second_report_into_a_folder_in_use_is_refused_naming_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, out = _results(tmp_path / "res"), tmp_path / "rep"
    assert main(["report", str(results), "--out", str(out)]) == 0
    before = {str(p): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    holder = subprocess.Popen(  # another process holds the folder's lock, as a report does while it writes
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time; f = open(sys.argv[1], 'a'); "
            'f.write(\'{"pid": 4242, "host": "node7", "started": "now", "command": "enade-bench report"}\\n\');'
            "f.flush(); fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
            str(out / ".report.lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert main(["report", str(results), "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "in use by PID 4242 on node7" in err[0] and "enade-bench report" in err[0]
        other = _results(tmp_path / "res2", experiment="demo2")
        assert main(["compare", str(results), str(other), "--out", str(out)]) == 2
        assert "in use by PID 4242" in capsys.readouterr().err
    finally:
        holder.kill()
        holder.wait()
    assert {
        str(p): p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != ".report.lock"
    } == before
    assert main(["report", str(results), "--out", str(out)]) == 0  # the holder is gone: taken over
    assert not (out / ".report.lock").exists()


def test_a_tilde_is_the_home_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    shutil.copy(DEMO, tmp_path / "demo.csv")
    data = {
        "name": "x",
        "dataset": {"path": "~/demo.csv"},
        "model": {"name": "m"},
        "output": {"dir": "~/out"},
    }
    cfg = parse_config(data, "t.yaml")
    assert cfg.dataset.path == str(tmp_path / "demo.csv")
    assert output_dir(cfg, tmp_path / "configs" / "t.yaml") == tmp_path / "out"
    config = tmp_path / "configs" / "t.yaml"
    config.parent.mkdir()
    config.write_text(
        json.dumps(
            {
                **data,
                "model": {
                    "type": "api",
                    "api": {"provider": "openai", "model": "m", "api_key": "sk-not-used-0123456789"},
                },
                "evaluation": {"method": "api"},
            }
        )
    )
    assert main(["validate", str(config), "--limit", "2"]) == 0
    assert not (config.parent / "~").exists() and not Path("~").exists()


def test_control_characters_in_a_name_are_shown_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], recwarn: pytest.WarningsRecorder
) -> None:
    results = _results(tmp_path / "res", model_name="m1\x00\x1b[31m\nred")
    assert main(["report", str(results), "--out", str(tmp_path / "rep")]) == 0
    captured = capsys.readouterr()
    for text in (captured.out, captured.err):
        assert "\x00" not in text and "\x1b" not in text
    assert not [w for w in recwarn if "Glyph" in str(w.message)]  # matplotlib drew every character
    tables = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "rep").rglob("*.csv"))
    assert "\x1b" not in tables and "\x00" not in tables


def test_a_deep_log_line_is_one_error_naming_the_line(tmp_path: Path) -> None:
    key = LogKey({"evaluation.seed": 1})
    log = IntermediateLog(tmp_path / "x_intermediate.jsonl", key)
    log.start_fresh()
    with log.path.open("a", encoding="utf-8") as handle:
        handle.write('{"kind": "record", "record": ' + "[" * 5000 + "]" * 5000 + "}\n")
    with pytest.raises(UserError, match=r"x_intermediate.jsonl: line 2: JSON nested deeper than 64 levels"):
        log.load()


def test_stderr_never_shows_a_raw_control_character(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "no\x1b[2Jsuch\x00folder", "--out", "x"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\\x1b[2J" in err


def test_fifos_among_irt_csvs_inspect_logs_and_model_weights_are_refused_never_opened(tmp_path: Path) -> None:
    """Issue 51, item 2: the readers that went through pandas, zipfile and the weights' header."""
    from enade_bench.compare.importers.inspect import _read_eval
    from enade_bench.errors import UserError as Refused
    from enade_bench.psychometrics.io import raw_header, read_csv_text
    from enade_bench.regular_file import NotRegularFile
    from enade_bench.study.memory import _safetensors_parameters

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # opening any of these for reading would block forever
    with pytest.raises(Refused, match=r"pipe: not a regular file \(a FIFO"):
        read_csv_text(fifo)
    for reader in (raw_header, _safetensors_parameters):
        with pytest.raises(NotRegularFile):
            reader(fifo)
    eval_log = tmp_path / "run.eval"
    os.mkfifo(eval_log)
    with pytest.raises((Refused, NotRegularFile), match="not a regular file"):
        _read_eval(eval_log)
