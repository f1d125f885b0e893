"""What a study task asks of an executor (the GPUs of its model), and ``--executor`` over the YAML."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from enade_bench.config import parse_config
from enade_bench.errors import UserError
from enade_bench.runner.plan import RunOptions
from enade_bench.study.executors import executor_settings
from enade_bench.study.executors.settings import LocalSettings, RaySettings, SlurmSettings
from enade_bench.study.progress import StudyProgress
from enade_bench.study.tasks import ModelTask, TaskRun, run_task


def _task(model: dict[str, Any]) -> ModelTask:
    cfg = parse_config({"name": "m", "dataset": {"path": "q.csv"}, "model": model}, "test")
    run = TaskRun(cfg, Path("x.yaml"), None, RunOptions(), None, "")  # type: ignore[arg-type]
    return ModelTask("m", (run,), Path("."))


@pytest.mark.parametrize(
    ("model", "gpus"),
    [
        ({"name": "org/model"}, 1),
        ({"name": "org/model", "device": "cpu"}, 0),
        ({"name": "org/model", "type": "vllm", "vllm": {"tensor_parallel_size": 4}}, 4),
        ({"name": "org/model", "type": "vllm"}, 1),
        ({"type": "api", "api": {"provider": "openai", "model": "gpt-4o-mini"}}, 0),
    ],
)
def test_a_task_asks_for_the_gpus_its_model_needs(model: dict[str, Any], gpus: int) -> None:
    assert _task(model).gpus == gpus


def test_executor_option_replaces_the_type_and_keeps_the_blocks_own_settings() -> None:
    ray = RaySettings(type="ray", address="auto", cpus_per_model=4)
    assert executor_settings(ray, None) is ray and executor_settings(ray, "ray") is ray
    assert executor_settings(ray, "local") == LocalSettings()
    assert executor_settings(LocalSettings(), "slurm") == SlurmSettings(type="slurm")
    threads = RaySettings(type="ray", threads=4)  # the tasks' threads go with them: same numbers anywhere
    assert executor_settings(threads, "local") == LocalSettings(threads=4)
    with pytest.raises(UserError, match="--executor: expected one of local, ray, slurm, got 'dask'"):
        executor_settings(ray, "dask")


def test_a_task_computes_with_its_threads_and_the_process_gets_its_own_back(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    seen: list[int] = []
    run = _task({"name": "org/model"}).runs[0]
    task = ModelTask(
        "m", (dataclasses.replace(run, config_path=tmp_path / "m" / "experiment.yaml"),), tmp_path
    )

    def factory(cfg):  # type: ignore[no-untyped-def]
        seen.append(torch.get_num_threads())
        raise RuntimeError("no weights here")

    outcome = run_task(task, factory, threads=3)
    assert outcome.error == "RuntimeError: no weights here" and seen == [3]
    assert torch.get_num_threads() == before


def test_a_worker_that_cannot_see_the_study_folder_fails_its_model_with_one_line(tmp_path: Path) -> None:
    task = _task({"name": "org/model"})
    task = ModelTask(task.label, task.runs, tmp_path / "not_mounted")
    loaded: list[object] = []
    outcome = run_task(task, loaded.append)  # type: ignore[arg-type]
    assert outcome.error is not None and "not visible on node" in outcome.error
    assert str(tmp_path / "not_mounted") in outcome.error and "\n" not in outcome.error
    assert loaded == []  # no model loaded


def test_progress_shows_a_gpu_only_for_a_task_that_asked_for_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a GPU node (Slurm and Ray set ``CUDA_VISIBLE_DEVICES``), a CPU model's lines say CPU."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    lines: list[str] = []
    for label, model, device in (
        ("cpu", {"name": "org/model", "device": "cpu"}, "CPU"),
        ("gpu", {"name": "org/model"}, "GPU 0"),
    ):
        task = dataclasses.replace(_task(model), label=label, output=tmp_path / "not_mounted")
        outcome = run_task(task, lambda cfg: None)  # type: ignore[arg-type,return-value]
        assert outcome.device == device
        with StudyProgress([], lines.append, bar=False) as progress:  # its end line only
            progress.done(outcome)
    assert [x.rsplit(", ", 1)[1] for x in lines] == ["CPU)", "GPU 0)"], lines
    assert lines[0].startswith("cpu: failed: ") and lines[1].startswith("gpu: failed: "), lines
