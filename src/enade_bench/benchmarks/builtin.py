"""The built-in exams: the one list, outside their own folders, that names them.

Everything else reaches an exam through the registry (:mod:`enade_bench.benchmarks.registry`)
and the plug-in protocols (:mod:`enade_bench.benchmarks.base`, :mod:`enade_bench.benchmarks.commands`);
tests/test_architecture.py keeps it so.  Nothing here imports an exam: this module is read by
``enade-bench --help``, which must import no exam's code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: The built-in benchmarks: name -> module defining ``BENCHMARK``.
BUILTIN: dict[str, str] = {
    name: f"enade_bench.benchmarks.{name}" for name in ("generic", "enade", "enem", "eeval", "progress_test")
}


@dataclass(frozen=True)
class CommandLine:
    """What a built-in exam adds to ``enade-bench``, declared without importing the exam.

    Attributes
    ----------
    module
        Its command-line module, which defines ``COMMAND_LINE``
        (:class:`~enade_bench.benchmarks.commands.ExamCommandLine`); imported only when a
        command it adds or extends is parsed.
    commands
        The top-level commands it adds (name -> the help ``enade-bench --help`` lists).
    extends
        The shared commands it extends (:data:`~enade_bench.benchmarks.commands.EXTENSION_POINTS`).
    """

    module: str
    commands: Mapping[str, str] = field(default_factory=dict)
    extends: tuple[str, ...] = ()


#: The built-in exams that add to the command line.
COMMAND_LINES: dict[str, CommandLine] = {
    "enem": CommandLine("enade_bench.benchmarks.enem.cli", extends=("irt", "irt score", "study", "report")),
    "eeval": CommandLine(
        "enade_bench.benchmarks.eeval.cli", {"eeval": "E-EVAL (Chinese K-12): run, leaderboard, submission"}
    ),
}

#: A study YAML without ``benchmark:`` is the study of the built-in exam whose key it has
#: (an ENEM study names its ``year``).
STUDY_KEYS: dict[str, str] = {"year": "enem"}
