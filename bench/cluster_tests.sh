#!/usr/bin/env bash
# The real-cluster tests too long for the suite: the real-Slurm tests (tests/study/test_slurm.py)
# against a one-node Slurm WITH accounting (slurmdbd and a private MariaDB,
# tests/study/real_slurm.py; the time-limit, node-failure, sbatch-refusal, pending and scancel
# tests read each job's end from sacct; the suite runs only the scancel test with accounting, on
# a second cluster), and the retries of a lost task on a real Slurm (node down, preempted, a next try sbatch refuses) and a real Ray (worker killed, node dead)
# (tests/study/test_retries.py, skipped by the suite).
# Needs root and Debian's slurm-wlm, munge, mariadb-server and slurmdbd (.ci/run installs them).
# Usage: bash bench/cluster_tests.sh [pytest options]   (about 6 min; docs/studies.md)
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src" ENADE_BENCH_SLURM_ACCOUNTING=1 ENADE_BENCH_CLUSTER_TESTS=1
exec .venv/bin/python -m pytest tests/study/test_slurm.py tests/study/test_retries.py -n 0 -p no:randomly "$@"
