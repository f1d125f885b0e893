"""Two checks of the GPU arm beside its timings: a float32 agreement check and a kernel profile.

**Why a float32 check.** The arm's model has random weights in bfloat16: its option scores
are close together (a random model prefers nothing), and bfloat16 rounds each logit to
three significant digits, so two engines that compute the same function in different
batches disagree on a share of the questions by rounding alone (on the CPU, SmolLM2's
shape with 8 random layers, 96 ENEM questions, S5: ours against lm-eval agree on 85 % in
bfloat16 and on all in float32; ``python -m bench --device cpu --shape smollm2-135m
--layers 8 --dtype bfloat16 --limit 96 --strategies S5 --orders file``).  Agreement in
bfloat16 is therefore a figure of the card's rounding, not of our code; :func:`float32_check`
casts the same model to float32 in place, runs S5 on the first questions through both
engines, and casts every parameter and buffer back to the dtype it had (bfloat16 ->
float32 -> bfloat16 is exact), so the timed phases after it see the same weights.

**Why a profile.** A figure says how long a strategy took, not where the time went:
:func:`profile_chunk` runs one chunk of a strategy under ``torch.profiler`` and keeps the
kernels and operators that took the most device time, with the number of kernel launches
(the cost of an eager forward of many small operations).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any


@dataclass
class Float32Check:
    """S5 on the first questions with the model in float32: ours against lm-eval."""

    questions: int
    agreement: float | None
    max_abs_score_diff: float | None
    ours_qps: float
    lm_eval_qps: float | None


@dataclass
class ProfileRow:
    """One operator or kernel of a profiled chunk."""

    name: str
    calls: int
    self_device_ms: float
    self_cpu_ms: float


@dataclass
class ChunkProfile:
    """One chunk of one strategy under ``torch.profiler``."""

    strategy: str
    questions: int
    kernel_launches: int
    #: The chunk's wall clock and the device's busy time in it: far apart, the host is the limit.
    wall_ms: float
    device_ms: float
    top: list[ProfileRow] = field(default_factory=list)
    #: The attention the chunk ran with: ``flex`` (the CUDA policy) or ``sdpa`` (``gpu.SDPA_POLICY``).
    attention: str = "flex"


def float32_check(model: Any, run: Callable[[], Any], reset: Callable[[], None]) -> Any:
    """``run()`` with ``model`` cast to float32 in place; every tensor's dtype restored after.

    ``reset`` empties the caches that hold states of the old dtype (the prefix store), before
    and after.  Returns what ``run`` returns.
    """
    import torch  # noqa: PLC0415

    saved = {name: t.dtype for name, t in chain(model.named_parameters(), model.named_buffers())}
    model.to(torch.float32)
    reset()
    try:
        return run()
    finally:
        for name, t in chain(model.named_parameters(), model.named_buffers()):
            if t.dtype != saved[name]:
                t.data = t.data.to(saved[name])
        reset()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def profile_chunk(
    strategy: str, questions: int, run: Callable[[], Any], top: int = 15, attention: str = "flex"
) -> ChunkProfile:
    """``run()`` (one chunk) under ``torch.profiler``: the ``top`` entries by device time."""
    import torch  # noqa: PLC0415
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    cuda = torch.cuda.is_available()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        start = time.perf_counter()
        run()
        if cuda:
            torch.cuda.synchronize()
        wall = (time.perf_counter() - start) * 1000
    events = prof.key_averages()

    def device_us(e: Any) -> float:
        return float(getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0) or 0)

    launches = sum(
        e.count for e in events if e.key in ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC")
    )
    ranked = sorted(events, key=lambda e: (device_us(e), e.self_cpu_time_total), reverse=True)[:top]
    rows = [
        ProfileRow(e.key[:120], int(e.count), device_us(e) / 1000, float(e.self_cpu_time_total) / 1000)
        for e in ranked
    ]
    kernels = [e for e in events if str(getattr(e, "device_type", "")).endswith("CUDA")]  # not their callers
    return ChunkProfile(
        strategy, questions, launches, wall, sum(device_us(e) for e in kernels) / 1000, rows, attention
    )


def toolchain() -> dict[str, str]:
    """What compiling on the card needs, as this process finds it: Triton builds each kernel's
    launcher with a C compiler against the Python headers (Inductor's CPU kernels too).

    ``gcc`` (its first ``--version`` line, or ``missing``), ``python_headers`` (``Python.h``'s path,
    or ``missing``), ``triton`` (its version, or ``missing``) and ``TORCH_LOGS`` (recompiles logged).
    """
    import importlib.metadata  # noqa: PLC0415
    import os  # noqa: PLC0415
    import shutil  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sysconfig  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    gcc = shutil.which("gcc")
    version = subprocess.run([gcc, "--version"], capture_output=True, text=True).stdout if gcc else ""
    header = Path(sysconfig.get_paths()["include"]) / "Python.h"
    try:
        triton = importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        triton = "missing"
    return {
        "gcc": version.splitlines()[0] if version else "missing",
        "python_headers": str(header) if header.exists() else "missing",
        "triton": triton,
        "TORCH_LOGS": os.environ.get("TORCH_LOGS", ""),
    }


#: The arm's largest chunk (questions): the size found is checked by running every strategy on
#: that many questions once, which a call's few minutes must afford (720 questions: 3 chunks).
ARM_MOST = 256


def size_batch(
    ours: Any, strategies: Sequence[str], questions: Sequence[Any], run: Callable[[str, list[int]], Any]
) -> int:
    """``evaluation.batch_size: auto`` for the arm: each strategy's heaviest questions as one chunk.

    The probe runs, for every strategy, its ``rows`` questions of longest stem and options as
    one chunk (``run(strategy, indices)``); the backend's ``auto_batch_size`` runs it at two
    sizes, solves for the rows that fill 90 % of the card and checks that size
    (:mod:`enade_bench.backends.hf_batch_size`; 8 on a CPU), at most :data:`ARM_MOST` and the
    questions there are.
    """
    weight = [len(q.stem) + sum(len(o) for o in q.options) for q in questions]
    heaviest = sorted(range(len(weight)), key=lambda i: -weight[i])

    def workload(rows: int) -> None:
        for strategy in strategies:
            ours.reset_prefix_store()
            run(strategy, heaviest[:rows])

    try:
        return min(int(ours.backend.auto_batch_size(workload, most=ARM_MOST)), len(weight))
    finally:
        ours.reset_prefix_store()
