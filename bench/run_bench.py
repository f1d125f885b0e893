"""``python bench/run_bench.py [options]``: the benchmark without the console script."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cli import add_arguments, run


def main() -> int:
    parser = argparse.ArgumentParser(prog="run_bench.py", description=__doc__)
    add_arguments(parser)
    try:
        return run(parser.parse_args())
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
