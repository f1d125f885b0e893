"""GPU memory as a resource on real clusters with declared fake GPUs, without ``gpu_memory_gb``:
a Slurm node of two ``h100`` (its gres type and node feature, :mod:`tests.study.real_slurm`)
and Ray nodes of two GPUs with ``accelerator_type:H100``.  A 70B model (a safetensors header,
no weights) on one 80 GB card is refused with one line saying what fits; with tensor parallel
2 it asks for 2 GPUs, and its host memory is the process only (its weights are on the GPUs).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conftest import DEMO_CSV
from tests.study.real_ray import start_ray, stop_ray
from tests.study.real_slurm import Slurm, start_slurm, stop_slurm
from tests.study.test_memory import _declared_70b

from enade_bench.cli.main import main

pytestmark = pytest.mark.slow
#: The refusal's end: what fits (the same rule on both executors).
FITS = "hold; it fits with model.vllm.tensor_parallel_size: 2 or model.vllm.quantization: fp8"


def _study(tmp_path: Path, executor: dict[str, Any], tp: int) -> Path:
    folder = tmp_path / "llama70b"
    model = {
        "name": str(folder if folder.is_dir() else _declared_70b(folder)),
        "type": "vllm",
        "vllm": {"tensor_parallel_size": tp},
    }
    data = {
        "name": "big",
        "benchmark": "enade",
        "dataset": {"path": str(DEMO_CSV)},
        "limit": 2,
        "models": [{"name": "big", "model": model}],
        "strategies": ["S1"],
        "output": str(tmp_path / "study"),
        "evaluation": {"max_new_tokens": 4},
        "executor": executor,
    }
    path = tmp_path / f"study_tp{tp}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Slurm]:
    pytest.importorskip("submitit")
    cluster = start_slurm(tmp_path_factory.mktemp("slurm_gpus"), gpus="h100:2")
    yield cluster
    stop_slurm(cluster)


def test_slurm_reads_the_cards_memory_from_sinfo(
    slurm: Slurm, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLURM_CONF", slurm.env["SLURM_CONF"])
    executor = {"type": "slurm", "jobs": str(tmp_path / "jobs")}
    assert main(["study", str(_study(tmp_path, executor, 1)), "--dry-run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: model big: needs about 148 GB on its GPUs"), err
    assert err[0].endswith(
        f"more than 1 GPU(s) of 80 GB (the 'h100' GPUs of partition 'debug', sinfo) {FITS}"
    ), err
    assert main(["study", str(_study(tmp_path, executor, 2)), "--dry-run"]) == 0
    out = capsys.readouterr().out
    # 2 GPUs; 2 CPUs per GPU; 2 GB of host memory (the process: the weights are on the GPUs); the
    # estimated time within the partition's 10 min
    job = (
        "a Slurm job: --time=10, --cpus-per-task=4, --gpus-per-node=2, --mem=2G (time, CPUs, memory from "
        "the task's estimate), on partition debug"
    )
    assert f"-> {job}" in out, out


def test_ray_reads_the_cards_memory_from_accelerator_type(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ray")
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    folder = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # short: Ray's socket paths
    real = start_ray(
        folder,
        dict(os.environ),
        ["--num-gpus", "2", "--resources", '{"accelerator_type:H100": 1}'],
    )
    try:  # two nodes of 2 GPUs: a task runs on one node, so 4 GPUs in all hold no TP 4
        executor = {"type": "ray", "address": real.address}
        assert main(["study", str(_study(tmp_path, executor, 1)), "--dry-run"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert main(["study", str(_study(tmp_path, executor, 2)), "--dry-run"]) == 0
        out = capsys.readouterr().out
        assert main(["study", str(_study(tmp_path, executor, 4)), "--dry-run"]) == 2
        wide = capsys.readouterr().err.strip().splitlines()
    finally:
        stop_ray(real)
        shutil.rmtree(folder, ignore_errors=True)
    assert len(err) == 1 and err[0].startswith("error: model big: needs about 148 GB on its GPUs"), err
    assert f"more than 1 GPU(s) of 80 GB (the Ray cluster's H100 GPUs, accelerator_type) {FITS}" in err[0], (
        err
    )
    assert f"-> a Ray task: num_gpus=2, num_cpus=1, memory=2.0 GB, on {real.address}" in out, out
    assert wide == [
        "error: model big: asks for 4 GPU(s) per model, but the Ray cluster has at most 2 on a node; "
        "add a node with more GPUs, or lower tensor_parallel_size"
    ], wide
