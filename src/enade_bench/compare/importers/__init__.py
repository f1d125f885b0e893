"""Results of the harnesses people use, as the long table: ``compare --from NAME``.

One small module per harness turns its own files into :class:`~._rows.Row` objects:
:mod:`.lmeval` (lm-evaluation-harness ``--log_samples``), :mod:`.inspect` (inspect_ai
``.eval``/``.json`` logs), :mod:`.helm` (HELM run folders); ``long`` is the long-format CSV
of :func:`enade_bench.compare.table.read_long_csv`.  Importing this package is cheap (the
command line lists :data:`SOURCES`); the readers load on use.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from enade_bench.errors import UserError

if TYPE_CHECKING:
    import pandas as pd

    from enade_bench.compare.importers._rows import Row

__all__ = ["SOURCES", "read_from"]

#: ``--from`` name -> module of this package with ``read(path, options) -> list[Row]``.
READERS = {"lm-eval": "lmeval", "inspect": "inspect", "helm": "helm"}
SOURCES = ("long", *READERS)


def read_from(
    source: str, paths: Sequence[Path], metrics: Sequence[str] = ()
) -> tuple[pd.DataFrame, list[Row]]:
    """The long table of ``paths`` read as ``source``'s output (one of :data:`SOURCES`), and the
    rows it was made of (what ``compare --out``'s question browser shows).

    ``metrics`` are the ``--metric`` values: ``NAME`` for every task, ``TASK=NAME`` for one
    (:meth:`~._rows.ImportOptions.parse`).

    Raises
    ------
    UserError
        Bad input (one line naming the file and what was expected), ``--metric`` with
        ``long`` or naming a task that is not in the input, or no answer at all.
    """
    import pandas as pd  # noqa: PLC0415

    from enade_bench.compare.importers._rows import ImportOptions, long_table, table_rows  # noqa: PLC0415
    from enade_bench.compare.table import read_long_csv  # noqa: PLC0415

    if source == "long":
        if metrics:
            raise UserError(
                "--metric: a long CSV has its own 'correct' column; --metric is for "
                "--from lm-eval, inspect or helm"
            )
        table = pd.concat([read_long_csv(p) for p in paths], ignore_index=True)
        return table, table_rows(table)
    module = importlib.import_module(f"{__name__}.{READERS[source]}")
    options = ImportOptions.parse(metrics)
    rows = [row for path in paths for row in module.read(path, options)]
    table = long_table(rows)
    if table.empty:
        raise UserError(f"{', '.join(map(str, paths))}: no scored answer in the {source} output")
    tasks = sorted(set(table["task"])) if "task" in table else []
    unknown = sorted(set(options.task_metrics) - set(tasks))
    if unknown:
        raise UserError(
            f"--metric {unknown[0]}={options.task_metrics[unknown[0]]}: no task {unknown[0]!r} in "
            f"the {source} output (tasks: {', '.join(tasks) or 'none'})"
        )
    return table, rows
