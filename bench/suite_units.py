"""Seconds per unit of work of the test suite, from a whole-suite run's ``--durations=0``.

The suite runs on two pytest-xdist workers that take whole units (a file, or a folder with
costly fixtures: ``tests/conftest.py: unit_of``) in the order collection leaves them, and
``tests/conftest.py`` puts the longest units first from ``tests/unit_seconds.json``.  This
script writes that file: it sums each unit's setup, call and teardown times from the
``--durations=0`` lines of a run's output, and keeps the units of at least ``--min`` seconds
(the others keep their order, after them)::

    .venv/bin/python -m pytest --durations=0 -p no:cacheprovider | tee /tmp/suite.log
    .venv/bin/python bench/suite_units.py /tmp/suite.log > tests/unit_seconds.json

The times are those of the run measured (two workers, whatever else the machine ran); only
their order matters to the schedule.  It also prints, on stderr, the makespan the greedy
schedule gives with two workers and the sum of all units (its lower bound is half of it).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.conftest import unit_of  # the checkout's root first on the path (above)

LINE = re.compile(r"^\s*([0-9.]+)s (setup|call|teardown)\s+(\S+)")


def unit_seconds(log: str) -> dict[str, float]:
    """Seconds per unit of the ``--durations`` lines of ``log``, longest first."""
    total: dict[str, float] = defaultdict(float)
    for line in log.splitlines():
        match = LINE.match(line)
        if match:
            total[unit_of(match.group(3))] += float(match.group(1))
    return dict(sorted(total.items(), key=lambda kv: -kv[1]))


def makespan(seconds: list[float], workers: int = 2) -> float:
    """The finish time of the greedy schedule: each unit, in order, to the worker free first."""
    free = [0.0] * workers
    for s in seconds:
        free[free.index(min(free))] += s
    return max(free)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="output of a pytest run with --durations=0")
    parser.add_argument("--min", type=float, default=20.0, help="keep units of at least this many s")
    args = parser.parse_args()
    units = unit_seconds(args.log.read_text(encoding="utf-8", errors="replace"))
    long = {unit: round(s, 1) for unit, s in units.items() if s >= args.min}
    json.dump(long, sys.stdout, indent=1)
    sys.stdout.write("\n")
    rest = [s for unit, s in units.items() if unit not in long]
    print(
        f"{len(units)} units, {sum(units.values()):.0f} s in all; {len(long)} of at least {args.min:g} s; "
        f"greedy makespan on 2 workers, longest first: {makespan(list(long.values()) + rest):.0f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
