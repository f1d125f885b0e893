"""``enade-bench`` console script: one argparse parser, one sub-command per module.

Every sub-command lives in its own module under :mod:`enade_bench.cli` and exposes
``register(subparsers)``, which adds its parser and sets ``handler`` (a callable
taking the parsed namespace and returning an exit status).  Bad input anywhere
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

from enade_bench.benchmarks.base import CommandBenchmark
from enade_bench.benchmarks.registry import BUILTIN, DEFAULT
from enade_bench.errors import UserError
from enade_bench.masking import mask

#: Sub-command modules, in the order they appear in ``--help`` (benchmarks add their own after).
SUBCOMMANDS = ("run", "validate", "irt", "report", "compare", "bench", "study")


class OneLineErrorParser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are a single ``error:`` line (exit 2)."""

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{self.prog}: {message}")


def _command_of(argv: Sequence[str]) -> str | None:
    """The sub-command ``argv`` names, when it is one of :data:`SUBCOMMANDS` (else ``None``)."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in SUBCOMMANDS else None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``enade-bench`` parser; with ``only``, just that sub-command's module is imported.

    Importing every sub-command (and the libraries they need: scipy, matplotlib, pandas)
    takes seconds, so :func:`main` builds the full parser only for ``--help`` or a name it
    does not know (whose error then lists every command).
    """
    parser = OneLineErrorParser(
        prog="enade-bench",
        description="Evaluate language models on multiple-choice exams written for humans.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineErrorParser)
    for name in SUBCOMMANDS if only is None else (only,):
        try:
            module = importlib.import_module(f"enade_bench.cli.{name}_cmd")
        except ModuleNotFoundError as exc:  # a sub-command not built yet
            if exc.name != f"enade_bench.cli.{name}_cmd":
                raise
            continue
        module.register(sub)
    if only is not None:
        return parser
    for name in BUILTIN:  # built-in exams' own commands (``eeval …``); plug-ins run through ``run``
        benchmark = DEFAULT.get(name)
        if isinstance(benchmark, CommandBenchmark):
            benchmark.register_commands(sub)
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
    with _Interrupts():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    try:
        args_list = list(argv) if argv is not None else sys.argv[1:]
        args = build_parser(_command_of(args_list)).parse_args(args_list)
        status: int = args.handler(args)
        return status
    except UserError as exc:
        print(mask(f"error: {exc}"), file=sys.stderr)  # a server's echo never shows a secret
        return UserError.exit_code
    except OSError as exc:  # an OS failure after the up-front checks (disk full, folder removed)
        where = f"{exc.filename}: " if exc.filename else ""
        print(mask(f"error: {where}{exc.strerror or exc}"), file=sys.stderr)
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
