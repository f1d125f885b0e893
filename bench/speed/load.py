"""A fixed competing CPU load, so that "on a busy machine" means the same thing every run.

``--competing-load N`` starts ``N`` processes before the scoring phase and stops them
after it; both engines' turns (interleaved) run under it.  Each process repeats one
fixed piece of work without pause: a single-threaded 256 × 256 float64 matrix
product (``numpy.dot``, BLAS limited to one thread), i.e. one busy core each, like
another numerical job sharing the machine.
A process counts its products; the report gives products per second per process, so
two runs' loads can be compared (a faster machine does more products, the share of
a core stays the same).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from dataclasses import dataclass, field
from typing import Any

from bench.speed.records import LoadSummary

#: What one load process does (written to the report).
WORKLOAD = "single-threaded 256x256 float64 numpy.dot in a loop (one busy core per process)"
SIZE = 256


def _spin(stop: Any, counter: Any) -> None:
    """One load process: products until ``stop`` is set."""
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    os.environ["MKL_NUM_THREADS"] = "1"
    import numpy as np  # noqa: PLC0415 (after the thread limits above)

    rng = np.random.default_rng(0)
    a = rng.standard_normal((SIZE, SIZE))
    b = rng.standard_normal((SIZE, SIZE))
    while not stop.is_set():
        np.dot(a, b)
        with counter.get_lock():
            counter.value += 1


@dataclass
class CompetingLoad:
    """``processes`` load processes while the ``with`` block runs."""

    processes: int
    _stop: Any = None
    _counter: Any = None
    _workers: list[Any] = field(default_factory=list)
    _started: float = 0.0
    #: What ran (set when the block ends; None without load processes).
    summary: LoadSummary | None = None

    def __enter__(self) -> CompetingLoad:
        if self.processes < 1:
            return self
        ctx = mp.get_context("spawn")
        self._stop = ctx.Event()
        self._counter = ctx.Value("l", 0)
        self._workers = [
            ctx.Process(target=_spin, args=(self._stop, self._counter), daemon=True)
            for _ in range(self.processes)
        ]
        for worker in self._workers:
            worker.start()
        self._started = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.processes < 1:
            return
        self._stop.set()
        elapsed = time.perf_counter() - self._started
        for worker in self._workers:
            worker.join(timeout=10)
            if worker.is_alive():
                worker.terminate()
        self.summary = LoadSummary(
            processes=self.processes,
            workload=WORKLOAD,
            seconds=elapsed,
            products_per_second_per_process=self._counter.value / max(elapsed, 1e-9) / self.processes,
        )
