"""From the ``executor:`` block to an executor; Ray and submitit are imported only here."""

from __future__ import annotations

from pathlib import Path

from enade_bench.errors import UserError
from enade_bench.study.executors.base import Executor
from enade_bench.study.executors.local import LocalExecutor
from enade_bench.study.executors.settings import ExecutorSettings, LocalSettings, RaySettings

#: The extra that brings Ray and submitit.
EXTRA = "pip install 'enade-bench[cluster]'"


def make_executor(settings: ExecutorSettings, output: Path) -> Executor:
    """The executor ``settings`` describe, for the study whose results folder is ``output``.

    Ray and submitit are imported here, so a missing extra is one error line.
    """
    if isinstance(settings, LocalSettings):
        return LocalExecutor()
    try:
        if isinstance(settings, RaySettings):
            from enade_bench.study.executors.ray import RayExecutor  # noqa: PLC0415

            return RayExecutor(settings)
        from enade_bench.study.executors.slurm import SlurmExecutor, jobs_folder  # noqa: PLC0415

        return SlurmExecutor(settings, jobs_folder(settings, output))
    except ImportError as exc:
        raise UserError(
            f"executor: type '{settings.type}' needs {exc.name or 'ray/submitit'}, "
            f"which is not installed; install the extra: {EXTRA}"
        ) from None
