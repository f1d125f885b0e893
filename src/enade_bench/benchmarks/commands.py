"""What an exam adds to ``enade-bench``'s command line: its own commands, and its part of shared ones.

An exam's command-line module (declared in :data:`~enade_bench.benchmarks.builtin.COMMAND_LINES`)
defines ``COMMAND_LINE``, an :class:`ExamCommandLine`.  It holds parsers only: it is imported
when a command it adds or extends is parsed, and each handler imports the exam's code when it
runs, so ``--help`` imports no analysis stack.  The shared commands call :func:`extend` at their
extension points (:data:`EXTENSION_POINTS`): E-EVAL adds the ``eeval`` command; ENEM adds its
``irt`` sub-commands, ``irt score --scale``, ``study --derive-attributes`` and ``report --enem-data``.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from enade_bench.benchmarks.builtin import COMMAND_LINES

#: Where a shared command lets exams add to it, and what :meth:`ExamCommandLine.extend` is given there:
#: ``irt`` its sub-commands (the sub-parsers; after the exam-free ``score``, ``calibrate``, ``debias``),
#: ``irt score``, ``study`` and ``report`` their parsers (``report``: after its inputs and ``--out``).
EXTENSION_POINTS = ("irt", "irt score", "study", "report")


class ExamCommandLine:
    """An exam's part of the command line; each hook does nothing unless the exam's class overrides it."""

    def register(self, sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
        """Add the exam's own top-level commands (those its :class:`~.builtin.CommandLine` lists)."""

    def extend(self, command: str, target: argparse.ArgumentParser | argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
        """Add the exam's sub-commands or options to the shared ``command`` (one of :data:`EXTENSION_POINTS`)."""

    def report_data(self, args: argparse.Namespace) -> dict[str, Path]:
        """``enade-bench report``: the exam's data folders from its options (benchmark name -> folder),
        checked before any results are read (:attr:`~enade_bench.benchmarks.base.ReportOptions.data`)."""
        return {}


def command_line(exam: str) -> ExamCommandLine:
    """The command line of built-in ``exam`` (its module imported now)."""
    line: ExamCommandLine = importlib.import_module(COMMAND_LINES[exam].module).COMMAND_LINE
    return line


def top_level_commands() -> dict[str, str]:
    """Command -> the exam that adds it (its module not imported)."""
    return {command: exam for exam, line in COMMAND_LINES.items() for command in line.commands}


def extending(command: str) -> list[ExamCommandLine]:
    """The command lines of the exams that extend ``command``, in the order they are declared."""
    assert command in EXTENSION_POINTS, command
    return [command_line(exam) for exam, line in COMMAND_LINES.items() if command in line.extends]


def extend(command: str, target: argparse.ArgumentParser | argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Let every exam that extends ``command`` add to it (``target``: its parser, or ``irt``'s sub-parsers)."""
    for line in extending(command):
        line.extend(command, target)
