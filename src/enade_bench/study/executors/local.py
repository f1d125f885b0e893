"""The ``local`` executor: every task in this process, one after the other (no dependency)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from enade_bench.study.executors.base import R, T, Task, Work


class LocalExecutor:
    """One task at a time, here; a task's own failure is its outcome, Ctrl-C propagates."""

    name = "local"

    def check(self, tasks: Sequence[Task]) -> None:
        """Nothing to check: this process runs every task."""

    def describe(self, task: Task) -> str:
        """This process, after the tasks before it."""
        return f"this process (pid {os.getpid()}), in turn"

    def slots(self, tasks: Sequence[Task]) -> int | None:
        """One at a time (a model's tasks already share its load: :func:`~enade_bench.study.planner.by_model`)."""
        return None

    def run(self, tasks: Sequence[T], work: Work[T, R]) -> list[R]:
        out = []
        for task in tasks:
            outcome = work.run(task)
            work.done(outcome)
            out.append(outcome)
        return out

    def close(self) -> None:
        """Nothing to let go of."""
