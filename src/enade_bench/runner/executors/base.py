"""The executor contract: a task, the work done on it, and the executor that runs it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar


class Task(Protocol):
    """What an executor needs to know of a task: its name and the GPUs it asks for."""

    @property
    def label(self) -> str: ...

    @property
    def gpus(self) -> int: ...

    @property
    def memory(self) -> int | None:
        """Host memory (bytes) the task needs; ``None``: not known before it runs."""
        ...

    @property
    def gpu_optional(self) -> bool:
        """Whether the task runs on the CPU where no GPU is offered (``device: auto``)."""
        ...


T = TypeVar("T", bound=Task)
R = TypeVar("R")


@dataclass(frozen=True)
class Work(Generic[T, R]):
    """What is done with each task.

    Attributes
    ----------
    run
        Runs one task where it lands (a worker process: it must pickle); returns its outcome.
    lost
        The outcome of a task whose worker or node was lost (``task``, what happened).
    done
        Called in the driver as each task ends, with its outcome.
    """

    run: Callable[[T], R]
    lost: Callable[[T, str], R]
    done: Callable[[R], None]


class Executor(Protocol):
    """Runs tasks: checks before any model loads, then runs them and returns their outcomes in order."""

    name: str

    def check(self, tasks: Sequence[Task]) -> None:
        """Everything checkable before a task starts (one ``UserError`` line)."""
        ...

    def describe(self, task: Task) -> str:
        """What ``task`` asks of the cluster and where it goes (``study --dry-run``; after :meth:`check`)."""
        ...

    def run(self, tasks: Sequence[T], work: Work[T, R]) -> list[R]:
        """Run every task; Ctrl-C cancels those not finished and re-raises."""
        ...

    def close(self) -> None:
        """Let go of what :meth:`check` connected to or started."""
        ...
