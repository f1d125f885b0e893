"""The executor contract: a task, the work done on it, and the executor that runs it."""

from __future__ import annotations

import math
import re
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
    def gpu_options(self) -> list[tuple[str, int, bool]]:
        """The model as it is (``""``) and each setting that makes it lighter: the bytes it then
        needs on its GPUs together and whether vLLM may split it (``tensor_parallel_size``);
        empty where that is unknown."""
        ...

    @property
    def parameters(self) -> int | None:
        """The model's parameters (``None``: unknown before it loads, or an API model)."""
        ...

    @property
    def weights_bytes(self) -> float | None:
        """Bytes read as the model loads (``None``: unknown, or an API model)."""
        ...

    @property
    def tokens(self) -> int:
        """Estimated tokens the task processes (its cost is ``2 × parameters × tokens``)."""
        ...


def to_submit(submitted: int, finished: int, total: int, cap: int | None) -> int:
    """How many more of ``total`` tasks go out now: ``cap`` in flight at most (``None``: all)."""
    room = total - submitted if cap is None else cap - (submitted - finished)
    return max(0, min(room, total - submitted))


def gpus_to_fit(need: float, card: float) -> int:
    """The GPUs of ``card`` bytes each that hold ``need`` bytes: a power of 2, as tensor parallel needs."""
    return 1 << (math.ceil(need / card) - 1).bit_length()


def check_gpu_memory(
    tasks: Sequence[Task],
    gpus: Mapping[str, float],
    gpu_memory_gb: float | None,
    cluster: tuple[float, str] | None = None,
    node_gpus: float | None = None,
) -> None:
    """Each task's model must fit the GPUs it asks for (``gpus``: label -> count).

    A GPU's memory is the executor's ``gpu_memory_gb`` where it is set, else the cluster's
    smallest card (``cluster``: its GB and where it was read, as the error names it), else
    nothing is checked.  The refusal suggests only what would pass: a setting of
    ``task.gpu_options`` whose bytes fit the GPUs asked for, or a vLLM one split over the
    power of 2 of GPUs that holds it, within ``node_gpus`` (the GPUs of the widest node).

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
    card = gpu_memory_gb * 1e9
    for task in tasks:
        asked, need = gpus.get(task.label, 0), (task.gpu_options or [("", 0, False)])[0][1]
        if not asked or need <= asked * card:
            continue
        fixes = []
        for setting, size, splits in task.gpu_options:
            fits = gpus_to_fit(size, card)
            if setting and size <= asked * card:
                fixes.append(setting)
            elif splits and (node_gpus is None or fits <= node_gpus):
                fixes.append(", ".join(x for x in (setting, f"model.vllm.tensor_parallel_size: {fits}") if x))
        advice = (
            "; it fits with " + " or ".join(fixes)
            if fixes
            else "; no setting fits it on these GPUs: larger cards or nodes with more GPUs do"
        )
        raise UserError(
            f"model {task.label}: needs about {need / 1e9:.0f} GB on its GPUs (its weights plus 10 %), "
            f"more than {asked:g} GPU(s) of {gpu_memory_gb:g} GB ({source}) hold{advice}"
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


def timed(why: str) -> bool:
    """Whether a loss names how long its job ran (``after 56 s``: Slurm's accounting, else squeue's),
    so that no other duration is given beside it."""
    return re.search(r"\bafter \d", why) is not None


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

    def slots(self, tasks: Sequence[Task]) -> int | None:
        """The most of ``tasks`` the cluster runs at once (after :meth:`check`); ``None``: not known
        (a shared Slurm's free nodes, this process)."""
        ...

    def run(self, tasks: Sequence[T], work: Work[T, R]) -> list[R]:
        """Run every task; Ctrl-C cancels those not finished and re-raises."""
        ...

    def close(self) -> None:
        """Let go of what :meth:`check` connected to or started."""
        ...
