#!/usr/bin/env python3
"""``python run.py CONFIG [options]`` — same as ``enade-bench run CONFIG [options]``."""

import sys

from enade_bench.cli.main import exit_process, main

if __name__ == "__main__":
    exit_process(main(["run", *sys.argv[1:]]))
