"""The ``slurm`` executor against a real Slurm with accounting (slurmdbd and MariaDB, started
for the module by :mod:`tests.runner.real_slurm`): a ``scancel``led job is named within a
minute, the study exits 3, and the rerun's records are the local run's.  The other tests of
``test_slurm.py`` run against such a cluster with ``bench/slurm_accounting.sh`` (docs/studies.md).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.runner.real_slurm import Slurm, start_slurm, stop_slurm
from tests.study.test_slurm import scancel_is_named_and_the_same_command_completes, use_cluster

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def accounted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Slurm]:
    pytest.importorskip("submitit")
    cluster = start_slurm(tmp_path_factory.mktemp("slurm"), accounting=True)
    yield cluster
    stop_slurm(cluster)


def test_with_accounting_a_scancel_is_named_within_a_minute_and_the_same_command_completes(
    accounted: Slurm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = scancel_is_named_and_the_same_command_completes(use_cluster(accounted, monkeypatch), tmp_path)
    # the job's end came from the cluster's records (sacct), which slurmdbd kept
    done = subprocess.run(["sacct", "-n", "-P", "-X", "-j", job, "-o", "JobID,State,NodeList"],
                          env=accounted.env, capture_output=True, text=True, timeout=30, check=True)  # fmt: skip
    fields = done.stdout.split("\n")[0].split("|")
    assert fields[0] == job and fields[1].startswith("CANCELLED") and fields[2] == "node1", done.stdout
