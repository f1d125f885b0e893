"""ENEM's part of the command line (:data:`COMMAND_LINE`): parsers only, each handler imports its work.

* ``irt`` gets ENEM's sub-commands, on ENEM runs and INEP's items: ``patterns``,
  ``published-long``, ``baseline``, ``cat``, ``cat-live``, ``dif``, ``theta-pairs``
  (one module each beside this one);
* ``irt score`` gets ``--scale enem:AREA`` (a ``score`` column on the ENEM scale);
* ``study`` gets ``--derive-attributes OUT_CSV`` (with ``--year``, ``--enem-data``): the item
  attributes derivable from the question files, written in place of running a study;
* ``report`` gets ``--enem-data DIR`` (INEP's item tables for the ENEM runs' psychometrics).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from enade_bench.benchmarks.commands import ExamCommandLine
from enade_bench.benchmarks.enem.cli import (
    irt_baseline,
    irt_cat,
    irt_cat_live,
    irt_dif,
    irt_patterns,
    irt_published,
    irt_theta_pairs,
)
from enade_bench.benchmarks.enem.data import find_enem_data
from enade_bench.benchmarks.enem.files import AREAS
from enade_bench.errors import UserError


class _InsteadOfStudy(argparse.Action):
    """An option that makes ``study`` do this job in place of a study (its ``handler`` set)."""

    def __init__(self, *args: Any, handler: Callable[[argparse.Namespace], int], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.handler = handler

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        namespace.handler = self.handler


def derive_attributes(args: argparse.Namespace) -> int:
    """``study --derive-attributes OUT_CSV --year Y``: write the derivable item attributes."""
    from enade_bench.benchmarks.enem.study.derive import write_derived_attributes  # noqa: PLC0415 (pandas)

    if not args.year:
        raise UserError("--derive-attributes: give at least one --year")
    rows = write_derived_attributes(args.derive_attributes, args.year, args.enem_data)
    print(f"wrote {args.derive_attributes} ({rows} items)")
    return 0


def scale_column(text: str) -> Callable[[Sequence[float]], Any]:
    """``irt score --scale enem:AREA``: θ -> the ENEM score of ``AREA`` (checked before any work)."""
    kind, _, area = text.partition(":")
    if kind.lower() != "enem" or area.upper() not in AREAS:
        raise UserError(f"--scale {text!r}: expected enem:AREA with AREA one of {', '.join(AREAS)}")
    from enade_bench.benchmarks.enem.inep import enem_score  # noqa: PLC0415 (numpy, pandas)

    return partial(enem_score, area=area.upper())


class EnemCommandLine(ExamCommandLine):
    """ENEM's sub-commands of ``irt`` and its options of ``irt score``, ``study`` and ``report``."""

    def extend(self, command: str, target: argparse.ArgumentParser | argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
        if command == "irt":
            for module in (
                irt_patterns,
                irt_published,
                irt_baseline,
                irt_cat,
                irt_cat_live,
                irt_dif,
                irt_theta_pairs,
            ):
                module.register(target)
            return
        assert isinstance(target, argparse.ArgumentParser)
        if command == "irt score":
            target.add_argument("--scale", help="add an ENEM 'score' column: enem:CH|CN|LC|MT")
            target.set_defaults(scale_column=scale_column)
        elif command == "study":
            target.add_argument(
                "--derive-attributes",
                type=Path,
                metavar="OUT_CSV",
                action=_InsteadOfStudy,
                handler=derive_attributes,
                help="write the item attributes derivable from the ENEM question files and exit",
            )
            target.add_argument(
                "--year", type=int, action="append", help="with --derive-attributes (repeatable)"
            )
            target.add_argument("--enem-data", type=Path, help="with --derive-attributes: ENEM data folder")
            target.set_defaults(instead=(*target.get_default("instead"), "--derive-attributes OUT_CSV"))
        elif command == "report":
            target.add_argument(
                "--enem-data", type=Path, help="folder with INEP's inep_items.csv (ENEM runs)"
            )

    def report_data(self, args: argparse.Namespace) -> dict[str, Path]:
        """``report --enem-data DIR``: the ENEM data folder, checked (:func:`~..data.find_enem_data`)."""
        if args.enem_data is None:
            return {}
        return {"enem": find_enem_data(args.enem_data)}


COMMAND_LINE = EnemCommandLine()
