"""``python -m enade_bench.bench``: the benchmark without the console script."""

from __future__ import annotations

import sys

from enade_bench.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
