"""``enade-bench bench``: speed against lm-evaluation-harness (issue 7).

The benchmark lives in the checkout's ``bench/`` folder (it needs ``lm-eval``, a
benchmark-only extra), so this sub-command finds that folder beside ``src/`` and
runs it; see the README (Performance).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any

from enade_bench.errors import UserError

#: The checkout root (``src/enade_bench/cli/bench_cmd.py`` -> three levels up from ``src``).
REPO_ROOT = Path(__file__).resolve().parents[3]


def _bench_cli() -> Any:
    if not (REPO_ROOT / "bench" / "cli.py").exists():
        raise UserError(f"bench: the benchmark needs the repository checkout (no {REPO_ROOT / 'bench'})")
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    return importlib.import_module("bench.cli")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("bench", help="benchmark scoring speed against lm-evaluation-harness")
    try:
        _bench_cli().add_arguments(parser)
    except UserError:
        parser.add_argument("rest", nargs=argparse.REMAINDER)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from enade_bench.results.writable import check_output_file

    cli = _bench_cli()
    if getattr(args, "out", None) is not None:
        check_output_file(args.out, "--out")
    try:
        status: int = cli.run(args)
    except ValueError as exc:
        raise UserError(f"bench: {exc}") from None
    return status
