"""``python -m bench [options]``: the benchmark without the console script."""

from __future__ import annotations

import argparse
import sys

from bench.speed.cli import add_arguments, run


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    add_arguments(parser)
    try:
        return run(parser.parse_args())
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
