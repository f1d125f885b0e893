"""``enade-bench bench``: speed against lm-evaluation-harness.

The benchmark is the :mod:`bench.speed` package; its optional dependency
(``lm-eval``, the ``bench`` extra) is checked when the lm-eval side is asked for.
See ``docs/performance.md``.
"""

from __future__ import annotations

import argparse

from bench.speed import cli as bench_cli
from enade_bench.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("bench", help="benchmark scoring speed against lm-evaluation-harness")
    bench_cli.add_arguments(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from enade_bench.results.writable import check_output_file  # noqa: PLC0415 (not at --help)

    if getattr(args, "out", None) is not None:
        check_output_file(args.out, "--out")
    try:
        status: int = bench_cli.run(args)
    except ValueError as exc:
        raise UserError(f"bench: {exc}") from None
    return status
