"""The ``slurm`` executor: each task a Slurm job through submitit; the driver waits for them all.

``submitit.AutoExecutor(folder, cluster="slurm")`` with ``update_parameters(slurm_partition,
slurm_account, timeout_min, gpus_per_node, cpus_per_task, slurm_setup)``; each job runs the
pickled task in a fresh Python on its node, where the study folder must be visible (a shared
filesystem).  ``cluster: local`` is submitit's own ``LocalExecutor`` (the same jobs as
processes on this machine: what the tests run).  Job logs land in ``folder`` (``%j`` per job).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import submitit
from submitit.core.utils import UncompletedJobError

from enade_bench.errors import UserError
from enade_bench.runner.executors.base import R, T, Task, Work
from enade_bench.runner.executors.settings import SlurmSettings

#: Seconds between two looks at the jobs' states.
POLL_S = 1.0


class SlurmExecutor:
    """One submitit job per task."""

    name = "slurm"

    def __init__(self, settings: SlurmSettings, folder: Path) -> None:
        self.settings = settings
        self.folder = folder

    def check(self, tasks: Sequence[Task]) -> None:
        """Slurm is there (``srun`` on the PATH) unless ``cluster: local``, and a fixed
        ``gpus_per_node`` holds each model's GPUs (tensor × data parallel): else the job would
        wait in the queue, start, and fail on its node."""
        fixed = self.settings.gpus_per_node
        # a one-GPU model on a CPU job runs on the CPU (device auto); a split one cannot
        short = [t for t in tasks if fixed is not None and t.gpus > max(fixed, 1)]
        if short:
            need = ", ".join(f"{t.label} ({t.gpus})" for t in short)
            raise UserError(f"executor.gpus_per_node: {fixed} GPU(s) per job, but these models need more: "
                            f"{need}; raise gpus_per_node, leave it out (each job asks for its model's), "
                            "or lower tensor_parallel_size")  # fmt: skip
        if self.settings.cluster == "slurm" and shutil.which("srun") is None:
            raise UserError("executor.type: slurm, but this machine has no Slurm (no srun on the PATH); "
                            "run the study from a login node, or use executor type ray or local")  # fmt: skip

    def _parameters(self, task: Task) -> dict[str, Any]:
        s = self.settings
        gpus = s.gpus_per_node if s.gpus_per_node is not None else task.gpus
        params: dict[str, Any] = {"name": f"enade-bench-{task.label}", "timeout_min": s.time,
                                  "cpus_per_task": s.cpus_per_task, "slurm_setup": list(s.setup),
                                  "slurm_partition": s.partition, "slurm_account": s.account,
                                  "mem_gb": s.mem_gb}  # fmt: skip
        if s.cluster == "slurm" or gpus:
            params["gpus_per_node"] = gpus
        return params

    def run(self, tasks: Sequence[T], work: Work[T, R]) -> list[R]:
        executor = submitit.AutoExecutor(folder=self.folder / "%j", cluster=self.settings.cluster)
        jobs = []
        for task in tasks:
            executor.update_parameters(**self._parameters(task))
            jobs.append(executor.submit(work.run, task))
        out: dict[int, R] = {}
        try:
            while len(out) < len(jobs):
                for i, job in enumerate(jobs):
                    if i in out or not job.done():
                        continue
                    try:
                        outcome = job.result()
                    except UncompletedJobError as exc:  # killed, timed out, node lost
                        last = str(exc).strip().splitlines()[-1:] or [type(exc).__name__]
                        outcome = work.lost(tasks[i], f"its job {job.job_id} did not finish ({last[0]})")
                    out[i] = outcome
                    work.done(outcome)
                time.sleep(POLL_S)
        except KeyboardInterrupt:
            for i, job in enumerate(jobs):
                if i not in out:
                    job.cancel(check=False)
            raise
        return [out[i] for i in range(len(tasks))]

    def close(self) -> None:
        """Nothing held between jobs."""
