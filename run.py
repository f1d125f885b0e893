#!/usr/bin/env python3
"""``python run.py CONFIG [options]`` — same as ``enade-bench run CONFIG [options]``."""

import sys

from enade_bench.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["run", *sys.argv[1:]]))
