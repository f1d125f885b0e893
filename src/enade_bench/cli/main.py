"""``enade-bench`` console script: one argparse parser, one sub-command per module.

Every sub-command lives in its own module under :mod:`enade_bench.cli` and exposes
``register(subparsers)``, which adds its parser and sets ``handler`` (a callable
taking the parsed namespace and returning an exit status). Only the module of the
command named is imported (:func:`build_parser`): ``--help`` lists the commands from
:data:`COMMANDS` and imports none.  Bad input anywhere
raises :class:`~enade_bench.errors.UserError`; :func:`main` turns it into one
``error: …`` line on stderr and exit status 2, never a traceback.

argparse (not typer/click) is used because its error path can be made to print
exactly one ``error:`` line, which is part of the command-line contract.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType
from typing import Any, NoReturn

from enade_bench.cli.streams import safe_stdout
from enade_bench.errors import UserError
from enade_bench.masking import scrub
from enade_bench.masking.stream import scrubbed_stderr

#: The commands ``enade-bench --help`` lists, in that order, each with its one-line help (the
#: help its own parser registers; tests/cli/test_cli_start.py keeps the two equal). A command's
#: module, and the libraries it needs, is imported only when the command line names it.
COMMANDS: dict[str, str] = {
    "run": "run an experiment config (S1–S7)",
    "validate": "check a config, its data, prompts and model without inference (plug-ins' code runs)",
    "irt": "IRT ability, person fit and item calibration",
    "report": "tables (CSV, LaTeX), figures and index.html from results",
    "compare": "compare models question by question: clustered intervals, paired tests, compact letters, "
    "item flips",
    "study": "many models on one benchmark: run or resume each, compare them, write the report "
    "(ENEM: models × areas × languages, option shuffles, the verdict)",
    "eeval": "E-EVAL (Chinese K-12): run, leaderboard, submission",
}
#: Commands of built-in exams (``eeval …``): command -> the benchmark that registers it
#: (:class:`~enade_bench.benchmarks.base.CommandBenchmark`, its parser in the exam's ``cli``
#: module); plug-ins run through ``run``.
BENCHMARK_COMMANDS: dict[str, str] = {"eeval": "eeval"}


class OneLineErrorParser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are a single ``error:`` line (exit 2)."""

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{self.prog}: {message}")


def _command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names, when it is one of :data:`COMMANDS` (else ``None``).

    The top-level parser has no option that takes a value, so its first positional
    argument is the command, as argparse reads it.
    """
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def _register(name: str, sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add command ``name``'s real parser (its module imported now)."""
    if name in BENCHMARK_COMMANDS:  # the exam's parser module, which its ``register_commands`` calls:
        # importing the benchmark itself imports the runner, data and model code (not needed to parse)
        importlib.import_module(f"enade_bench.benchmarks.{BENCHMARK_COMMANDS[name]}.cli").register(sub)
        return
    importlib.import_module(f"enade_bench.cli.{name}_cmd").register(sub)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``enade-bench`` parser; the real parser of command ``only`` alone (its module imported).

    Every other command is listed by name and help only (:data:`COMMANDS`), so
    ``enade-bench --help`` and a misspelt command import no command's module: no
    pandas, matplotlib, scipy, torch or transformers before the arguments are parsed.
    ``build_parser(name)`` for every name in :data:`COMMANDS` gives each real parser.
    """
    parser = OneLineErrorParser(
        prog="enade-bench",
        description="Evaluate language models on multiple-choice exams written for humans.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineErrorParser)
    owner = BENCHMARK_COMMANDS.get(only or "")
    for name, help_text in COMMANDS.items():
        if name == only:
            _register(name, sub)
        elif owner is None or BENCHMARK_COMMANDS.get(name) != owner:  # a benchmark registers all its own
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


#: Exit status of an interrupted command (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130
#: Exit status of a terminated command (128 + SIGTERM: ``kill``, a batch scheduler, ``timeout``).
EXIT_TERMINATED = 143
#: The signals that stop a command cleanly, and the exit status each gives.
_STOPPING = {signal.SIGINT: EXIT_INTERRUPTED, signal.SIGTERM: EXIT_TERMINATED}


class Terminated(KeyboardInterrupt):
    """SIGTERM, unwound like Ctrl-C (locks released, the log closed) but exiting 143."""


class _Interrupts:
    """Ctrl-C or SIGTERM: the first stops the command cleanly, a second forces it.

    The first raises ``KeyboardInterrupt`` (:class:`Terminated` for SIGTERM) in the main
    thread, so every ``with`` block unwinds: the run's locks are released. Every answer is
    in the intermediate log (flushed to disk) before the next is asked for, so stopping at
    once loses only the requests in flight.
    """

    def __init__(self) -> None:
        self.count = 0
        self.previous: dict[int, Any] = {}

    def handler(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        if self.count > 1:
            os.write(2, b"error: interrupted again: stopped at once (the log holds every answer written)\n")
            os._exit(_STOPPING.get(signal.Signals(signum), EXIT_INTERRUPTED))
        raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():
            self.previous = {signum: signal.signal(signum, self.handler) for signum in _STOPPING}
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self.previous.items():
            signal.signal(signum, previous)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    with _Interrupts(), scrubbed_stderr():  # every stderr line through the check every file gets
        try:
            with safe_stdout():  # what stdout cannot encode is replaced; its errors are named
                return _main(argv)
        except OSError as exc:  # stdout's last flush (>/dev/full)
            print(f"error: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
            return UserError.exit_code


def _main(argv: Sequence[str] | None) -> int:
    try:
        args_list = list(argv) if argv is not None else sys.argv[1:]
        args = build_parser(_command_of(args_list)).parse_args(args_list)
        status: int = args.handler(args)
        return status
    except UserError as exc:
        print(f"error: {scrub(str(exc))}", file=sys.stderr)  # a server's echo never shows a secret
        return UserError.exit_code
    except OSError as exc:  # an OS failure after the up-front checks (disk full, folder removed)
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {scrub(f'{where}{exc.strerror or exc}')}", file=sys.stderr)
        return UserError.exit_code
    except Terminated:
        print("error: terminated (SIGTERM; partial results are kept; rerun to resume)", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("error: interrupted (partial results are kept; rerun to resume)", file=sys.stderr)
        return EXIT_INTERRUPTED


def exit_process(status: int) -> NoReturn:
    """Leave the interpreter with ``status``; interrupted, at once.

    After Ctrl-C, threads may still wait on requests in flight (API backends), and the
    interpreter would join them before exiting; their answers are not needed (the log
    is complete and on disk), so the process ends without waiting for them.
    """
    if status in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)


def entry_point() -> None:
    """Console-script entry point."""
    exit_process(main())
