"""The executor contract: a task, the work done on it, and the executor that runs it."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from enade_bench.errors import UserError


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

    def host_memory(self, gpus: int) -> int | None:
        """Host memory (bytes) the task needs when given ``gpus`` GPUs (a model whose weights go to
        them keeps only its process on the host); ``None``: not known before it runs."""
        ...

    @property
    def gpu_optional(self) -> bool:
        """Whether the task runs on the CPU where no GPU is offered (``device: auto``)."""
        ...

    @property
    def gpu_memory(self) -> int | None:
        """Bytes the task's model needs on its GPUs together (weights and room); ``None``: unknown."""
        ...

    @property
    def parameters(self) -> int | None:
        """The model's parameters (``None``: unknown before it loads, or an API model)."""
        ...

    @property
    def tokens(self) -> int:
        """Estimated tokens the task processes (its cost is ``2 × parameters × tokens``)."""
        ...


def to_submit(submitted: int, finished: int, total: int, cap: int | None) -> int:
    """How many more of ``total`` tasks go out now: ``cap`` in flight at most (``None``: all)."""
    room = total - submitted if cap is None else cap - (submitted - finished)
    return max(0, min(room, total - submitted))


def check_gpu_memory(
    tasks: Sequence[Task],
    gpus: Mapping[str, float],
    gpu_memory_gb: float | None,
    cluster: tuple[float, str] | None = None,
) -> None:
    """Each task's model must fit the GPUs it asks for (``gpus``: label -> count).

    A GPU's memory is the executor's ``gpu_memory_gb`` where it is set, else the cluster's
    smallest card (``cluster``: its GB and where it was read, as the error names it), else
    nothing is checked.

    Raises
    ------
    UserError
        One line naming the model, what it needs, what it asks for and what would fit.
    """
    source = "executor.gpu_memory_gb"
    if gpu_memory_gb is None and cluster is not None:
        gpu_memory_gb, source = cluster
    if gpu_memory_gb is None:
        return
    for task in tasks:
        asked, need = gpus.get(task.label, 0), task.gpu_memory
        if not asked or need is None or need <= asked * gpu_memory_gb * 1e9:
            continue
        fits = 1 << (math.ceil(need / (gpu_memory_gb * 1e9)) - 1).bit_length()  # a power of 2, as TP needs
        raise UserError(
            f"model {task.label}: needs about {need / 1e9:.0f} GB on its GPUs (weights × dtype plus "
            f"10 %), more than {asked:g} GPU(s) of {gpu_memory_gb:g} GB ({source}) "
            f"hold; it fits on {fits}: model.type vllm with model.vllm.tensor_parallel_size: {fits}, "
            "or a smaller dtype (load_in_4bit)"
        )


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
    retried
        Called in the driver as a lost task is submitted again (``task``, what happened and
        which try comes: :func:`retry_line`).
    """

    run: Callable[[T], R]
    lost: Callable[[T, str], R]
    done: Callable[[R], None]
    retried: Callable[[T, str], None] = lambda _task, _why: None


def retry_line(why: str, tried: int, retries: int) -> str:
    """What a task lost on its try ``tried`` (1-based) of ``retries + 1`` reads as it goes out again."""
    return f"lost on try {tried} of {retries + 1} ({why}); submitted again: try {tried + 1} of {retries + 1}"


def last_try(why: str, tried: int, retries: int) -> str:
    """Why a task was lost, with its try where it had more than one."""
    return why if retries == 0 else f"{why} (try {tried} of {retries + 1})"


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
