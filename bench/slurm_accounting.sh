#!/usr/bin/env bash
# The real-Slurm tests (tests/study/test_slurm.py) against a one-node Slurm WITH accounting
# (slurmdbd and a private MariaDB, tests/runner/real_slurm.py): the time-limit, node-failure,
# sbatch-refusal, pending and scancel tests read each job's end from sacct. The suite runs only
# the scancel test with accounting (on a second cluster); this runs them all on one.
# Needs root and Debian's slurm-wlm, munge, mariadb-server and slurmdbd (.ci/run installs them).
# Usage: bash bench/slurm_accounting.sh [pytest options]   (about 4 min; docs/studies.md)
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src" ENADE_BENCH_SLURM_ACCOUNTING=1
exec .venv/bin/python -m pytest tests/study/test_slurm.py -n 0 -p no:randomly "$@"
