"""The bad-input corpus as data (``bad_inputs/``): every case is exit 2 and one ``error:`` line.

Two kinds of cases, one contract:

* configs run with ``run NAME --quiet``: ``expected.json`` (file name -> expected fragment)
  and ``files_expected.json`` (issue 32's file shapes);
* command lines: ``commands.json`` (commands other than ``run``, output paths),
  ``cli_commands.json`` (issue 32's unclear cases), ``files_commands.json`` (file shapes,
  damaged harness logs) and ``safe2_commands.json`` (issue 40: deep JSON, duplicate key ids,
  options a command does not use, unbounded counts, names equal but for case) and
  ``safe3_commands.json`` (issue 51: counts beyond the memory) and ``safe4_commands.json``
  (issue 61: names that are no names, keys no HTTP header can carry, bounds), where ``{tmp}`` stands for an
  empty output folder; ``safe2_expected.json`` and ``safe3_expected.json`` hold issues 40's
  and 51's configs (issue 51: strip patterns that backtrack or are wrong), ``safe4_expected.json``
  issue 61's (typos in ``constants``, ``field_patterns``, ``answer_key.id``). A command line
  whose first word is ``bench`` is the benchmark's (``python -m bench``, :mod:`bench.__main__`),
  under the same contract.

For every case: exit status 2; exactly one line on stderr, starting with ``error: ``, holding
the expected fragment (so the *right* check fired), with no traceback, no pydantic type
names and no absolute path the user did not give (issue 51: ``safe3_paths/``, configs in a
subfolder, name their files from the current folder, the corpus); the model never loaded (except where the backend factory itself refuses the config,
before any weights are read); the corpus and the output folder byte-for-byte unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.__main__ import main as bench_main
from enade_bench.cli.main import main

CORPUS = Path(__file__).parent / "bad_inputs"
#: Configs the backend factory itself refuses (before any weights are read): it must run.
FACTORY_CASES = {"unknown_packaged_model.yaml", "api_capability.yaml"}


def _load(name: str) -> Any:
    return json.loads((CORPUS / name).read_text(encoding="utf-8"))


CONFIGS = [
    (f, n, e)
    for f in (
        "expected.json",
        "files_expected.json",
        "safe2_expected.json",
        "safe3_expected.json",
        "safe4_expected.json",
    )
    for n, e in sorted(_load(f).items())
]
COMMANDS = [
    (f, c)
    for f in (
        "commands.json",
        "cli_commands.json",
        "files_commands.json",
        "safe2_commands.json",
        "safe3_commands.json",
        "safe4_commands.json",
    )
    for c in _load(f)
]


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>" for p in folder.rglob("*")
    }


def _refuse_models(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        pytest.fail("the model was loaded for a bad input")

    monkeypatch.setattr("enade_bench.runner.run.create_backend", refuse)
    monkeypatch.setattr("bench.speed.gpu.load_engines", refuse)


def _run(args: list[str]) -> int:
    """``enade-bench ARGS``, or ``python -m bench ARGS[1:]`` when ``ARGS[0]`` is ``bench``."""
    return bench_main(args[1:]) if args[0] == "bench" else main(args)


def _one_line(status: int, capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert status == 2, captured.err
    assert len(err) == 1 and err[0].startswith("error: ") and "Traceback" not in captured.err, captured.err
    assert "constrained-" not in err[0] and "literal[" not in err[0], err[0]  # pydantic's type names
    assert str(CORPUS.resolve()) not in err[0], err[0]  # every path given relatively is shown so
    return err[0]


@pytest.mark.parametrize(("source", "name", "expected"), CONFIGS, ids=[f"{s}:{n}" for s, n, _ in CONFIGS])
def test_bad_config(
    source: str, name: str, expected: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if name not in FACTORY_CASES:
        _refuse_models(monkeypatch)
    monkeypatch.chdir(CORPUS)
    before = _tree(CORPUS)
    line = _one_line(main(["run", name, "--quiet"]), capsys)
    assert expected in line, line
    assert _tree(CORPUS) == before


@pytest.mark.parametrize(
    ("source", "case"),
    COMMANDS,
    ids=[f"{s}:{' '.join(c['args'][:3])} #{k}" for k, (s, c) in enumerate(COMMANDS)],
)
def test_bad_command(
    source: str,
    case: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _refuse_models(monkeypatch)
    monkeypatch.chdir(CORPUS)
    before, outside = _tree(CORPUS), _tree(tmp_path)
    line = _one_line(_run([a.replace("{tmp}", str(tmp_path)) for a in case["args"]]), capsys)
    assert case["expected"] in line, line
    assert _tree(CORPUS) == before and _tree(tmp_path) == outside  # nothing written, not even a probe
