"""What one Slurm job asks for: its GPUs, time, CPUs and memory, checked against its partition.

A job asks for the GPUs of its model (``device: cpu`` none, CUDA its tensor parallel size,
``device: auto`` one where the partition has GPUs, none where it has not) unless
``gpus_per_node`` fixes them.  Its time, CPUs and memory are the ``executor:`` block's where
set, else the task's estimate (:func:`~enade_bench.study.executors.sizing.estimate`), the
time and CPUs within what the partition allows.  The memory of each GPU is
``gpu_memory_gb`` where set, else the partition's cards (``sinfo``: gres types, node features).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from enade_bench.errors import UserError
from enade_bench.study.executors import slurm_cluster as sc
from enade_bench.study.executors.base import Task, check_gpu_memory
from enade_bench.study.executors.settings import SlurmSettings
from enade_bench.study.executors.sizing import estimate


@dataclass(frozen=True)
class JobRequest:
    """What one job asks Slurm for."""

    name: str
    minutes: int
    cpus: int
    gpus: int
    mem_gb: float | None
    partition: str | None
    account: str | None
    setup: tuple[str, ...]

    def submitit(self, cluster: str) -> dict[str, object]:
        """submitit's ``update_parameters`` (its keyword arguments: the foreign border)."""
        params: dict[str, object] = {
            "name": self.name,
            "timeout_min": self.minutes,
            "cpus_per_task": self.cpus,
        }
        if self.mem_gb is not None:
            params["mem_gb"] = self.mem_gb
        if cluster == "slurm":
            params.update(
                slurm_partition=self.partition,
                slurm_account=self.account,
                slurm_setup=list(self.setup),
                slurm_signal_delay_s=min(90, max(10, self.minutes * 60 // 4)),
                slurm_additional_parameters={"no-requeue": True},
            )
            if self.gpus:  # none: no --gpus-per-node at all (a CPU partition has no gres)
                params["gpus_per_node"] = self.gpus
        elif self.gpus:
            params["gpus_per_node"] = self.gpus
        return params


def job_gpus(task: Task, settings: SlurmSettings, partition: sc.Partition | None) -> int:
    """The GPUs of the job of ``task`` (``partition``: where it goes; ``None``: unknown)."""
    if settings.gpus_per_node is not None:
        return settings.gpus_per_node
    if task.gpu_optional and (partition is None or partition.gpus == 0):
        return 0  # device auto: the CPU where the partition has no GPU
    return task.gpus


def check_request(settings: SlurmSettings, part: sc.Partition, tasks: Sequence[Task]) -> dict[str, int]:
    """Each task's GPUs, after checking that ``part`` can ever run its job (one error line)."""
    where = f"partition '{part.name}'"
    if not part.up:
        raise UserError(f"executor.partition: {where} is not up (sinfo); pick another partition")
    if settings.time is not None and part.max_minutes is not None and settings.time > part.max_minutes:
        raise UserError(
            f"executor.time: {settings.time} min, but {where} allows at most {part.max_minutes} min"
        )
    if settings.cpus_per_task is not None and settings.cpus_per_task > part.cpus:
        raise UserError(
            f"executor.cpus_per_task: {settings.cpus_per_task}, but the nodes of {where} "
            f"have at most {part.cpus} CPUs"
        )
    if settings.mem_gb is not None and settings.mem_gb * 1024 > part.mem_mb:
        raise UserError(
            f"executor.mem_gb: {settings.mem_gb:g}, but the nodes of {where} have at most "
            f"{part.mem_mb / 1024:.1f} GB"
        )
    gpus = {t.label: job_gpus(t, settings, part) for t in tasks}
    for task in tasks:
        if gpus[task.label] > part.gpus:
            key = "executor.gpus_per_node" if settings.gpus_per_node is not None else f"model {task.label}"
            fix = (
                "pick a GPU partition, or set the model's device: cpu (or auto)"
                if part.gpus == 0
                else "lower tensor_parallel_size, or pick a partition with more GPUs per node"
            )
            raise UserError(
                f"{key}: asks for {gpus[task.label]} GPU(s) per job, but the nodes of {where} "
                f"have {'none' if part.gpus == 0 else f'at most {part.gpus}'}; {fix}"
            )
    # the executor's gpu_memory_gb, else the partition's smallest card, where sinfo names it
    card = (
        None
        if part.gpu_memory_gb is None
        else (part.gpu_memory_gb, f"the '{part.gpu_card}' GPUs of {where}, sinfo")
    )
    check_gpu_memory(tasks, gpus, settings.gpu_memory_gb, card, part.gpus)
    return gpus


def job_request(settings: SlurmSettings, part: sc.Partition | None, task: Task, gpus: int) -> JobRequest:
    """The job of ``task`` on ``gpus`` GPUs: the block's time, CPUs and memory, else the task's
    estimate (``part``: the partition, ``None`` for submitit's local executor).

    Raises
    ------
    UserError
        The memory the task needs is more than the partition's nodes have (one line).
    """
    s = settings
    size = estimate(task, gpus, s.threads)
    minutes, cpus, mem_gb = s.time or size.minutes, s.cpus_per_task or size.cpus, s.mem_gb
    if part is not None:
        if s.time is None and part.max_minutes is not None:
            minutes = min(minutes, part.max_minutes)
        cpus = cpus if s.cpus_per_task is not None else max(1, min(cpus, part.cpus))
        if mem_gb is None and size.mem_gb is not None and size.mem_gb * 1024 > part.mem_mb:
            raise UserError(
                f"model {task.label}: needs about {size.mem_gb:g} GB of host memory, but the nodes of "
                f"partition '{part.name}' have at most {part.mem_mb / 1024:.1f} GB; load it onto GPUs "
                "(device: cuda, or vllm), or pick a partition with more memory"
            )
    if mem_gb is None:
        mem_gb = size.mem_gb
    return JobRequest(
        f"enade-bench-{task.label}", minutes, cpus, gpus, mem_gb, s.partition, s.account, tuple(s.setup)
    )
