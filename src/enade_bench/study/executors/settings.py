"""The ``executor:`` block of a study YAML: where the study's tasks run (pydantic, ``extra="forbid"``).

* ``local`` (default): one task after the other in this process.
* ``ray``: each task a Ray task; ``address: auto`` (or ``HOST:PORT``) joins a running
  cluster, none starts one on this machine with ``num_cpus`` CPUs.
* ``slurm``: each task a Slurm job through submitit; the command waits for them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, TypeAdapter

from enade_bench.config import StrictModel
from enade_bench.errors import UserError

#: Intra-op CPU threads of each task when the block does not say (the same on every executor).
DEFAULT_THREADS = 1


class TaskThreads(StrictModel):
    """What every executor block shares: the CPU threads each task computes with."""

    threads: int = Field(
        default=DEFAULT_THREADS,
        ge=1,
        description="intra-op CPU threads of each task (torch.set_num_threads; recorded in each "
        "results file): the same on every executor, so that CPU reductions, and the scores, are",
    )


class GpuMemory(StrictModel):
    """What the cluster executors share: the memory of each of their GPUs, when declared, and
    the cap on tasks in flight."""

    max_jobs: int | None = Field(
        default=None,
        ge=1,
        description="tasks in flight at once (Slurm jobs, Ray tasks), longest first; "
        "the next goes out as one ends; null: every task at once",
    )

    max_shards: int | None = Field(
        default=None,
        ge=1,
        description="most question shards a model × exam is cut into where that shortens the study "
        "(docs/studies.md); 1: never cut; null: as many as the plan finds worth it",
    )
    gpu_memory_gb: float | None = Field(
        default=None,
        gt=0,
        le=1024,  # the largest cards hold 288 GB (2025): 1e12 or .inf is a typo, refused (issue 61)
        description="memory of each GPU (GB, at most 1024): a model whose weights (× dtype, plus 10 %) exceed the GPUs it "
        "asks for is refused before anything starts, saying how many would hold it; null: read from the "
        "cluster's card names (Slurm gres and node features, Ray's accelerator_type), else not checked",
    )
    retries: int = Field(
        default=0,
        ge=0,
        le=10,
        description="times a task lost with its node or worker (Slurm NODE_FAIL or "
        "PREEMPTED, Ray's lost worker or node) is submitted again; never one that failed or hit its time limit",
    )


class LocalSettings(TaskThreads):
    """Every task in this process, one after the other (today's behaviour)."""

    type: Literal["local"] = "local"

    @property
    def elsewhere(self) -> bool:
        """Whether the models run on other machines than this one (never: this process)."""
        return False


class RaySettings(TaskThreads, GpuMemory):
    """Each task a Ray task (``ray.remote(...).options(num_gpus=..., num_cpus=...)``)."""

    type: Literal["ray"]
    address: str | None = Field(
        default=None, description="'auto' or HOST:PORT of a running cluster; null: start one here"
    )
    num_cpus: int | None = Field(
        default=None, ge=1, description="without an address: CPUs of the cluster started here (default: all)"
    )
    cpus_per_model: float = Field(default=1, gt=0, description="num_cpus of each task")
    gpus_per_model: float | None = Field(
        default=None,
        ge=0,
        description="num_gpus of each task (default: what the model needs; 0 on a CPU cluster)",
    )
    memory_per_model_gb: float | None = Field(
        default=None,
        gt=0,
        description="memory each task reserves (default: its model's weights × dtype plus room; "
        "docs/studies.md), so that a node never loads more models than its memory holds",
    )
    object_store_mb: int = Field(
        default=256, ge=80, description="without an address: object store of the cluster started here"
    )

    @property
    def elsewhere(self) -> bool:
        """Whether the models run on other machines: a cluster joined by ``address`` (one the
        study starts itself runs them here)."""
        return self.address is not None


class SlurmSettings(TaskThreads, GpuMemory):
    """Each task a Slurm job through submitit (``AutoExecutor``); the driver waits for them."""

    type: Literal["slurm"]
    partition: str | None = Field(default=None, description="slurm_partition")
    account: str | None = Field(default=None, description="slurm_account")
    time: int | None = Field(
        default=None, ge=1, description="minutes a job may run (timeout_min); null: from each task's estimate"
    )
    gpus_per_node: int | None = Field(
        default=None, ge=0, description="GPUs of each job (default: what the model needs)"
    )
    cpus_per_task: int | None = Field(
        default=None, ge=1, description="CPUs of each job; null: the task's threads (2 per GPU at least)"
    )
    mem_gb: float | None = Field(
        default=None, gt=0, description="memory of each job; null: the host memory its model needs"
    )
    setup: list[str] = Field(
        default_factory=list, description="shell lines run before each job (slurm_setup)"
    )
    jobs: str | None = Field(
        default=None,
        description="folder of submitit's job files and logs, on a filesystem the nodes share "
        "(default: $ENADE_BENCH_CACHE/slurm/<output>-<hash>; never inside the results folder)",
    )
    cluster: Literal["slurm", "local"] = Field(
        default="slurm", description="local: submitit's LocalExecutor (jobs as processes here; tests)"
    )

    @property
    def elsewhere(self) -> bool:
        """Whether the models run on other machines: Slurm's nodes (``cluster: local``: here)."""
        return self.cluster == "slurm"


#: The ``executor:`` block (``type`` picks the kind).
ExecutorSettings = Annotated[LocalSettings | RaySettings | SlurmSettings, Field(discriminator="type")]
#: The executor types, as ``study --executor`` takes them.
EXECUTOR_TYPES = ("local", "ray", "slurm")


def executor_settings(configured: ExecutorSettings, override: str | None) -> ExecutorSettings:
    """The study's executor: the config's block, or ``--executor TYPE`` (the block's own settings
    are kept when it names the same type)."""
    if override is None or override == configured.type:
        return configured
    if override not in EXECUTOR_TYPES:
        raise UserError(f"--executor: expected one of {', '.join(EXECUTOR_TYPES)}, got {override!r}")
    # the block's threads go with the tasks: --executor changes where they run, not their numbers
    return TypeAdapter(ExecutorSettings).validate_python({"type": override, "threads": configured.threads})
