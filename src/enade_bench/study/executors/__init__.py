"""Executors: where the tasks of a study run (this process, a Ray cluster, Slurm).

A runner is a small object that takes tasks; what a task is, the planner decides
(:mod:`enade_bench.study.tasks`: one model with all its runs).  Every executor has the
same two steps (:class:`~enade_bench.study.executors.base.Executor`): ``check`` (before
any model loads: the cluster is reachable, it has the GPUs the tasks ask for) and ``run``.
Ray and submitit are the optional extra ``enade-bench[cluster]``, imported only here.
"""

from enade_bench.study.executors.base import Executor, Task, Work
from enade_bench.study.executors.factory import make_executor
from enade_bench.study.executors.settings import (
    EXECUTOR_TYPES,
    ExecutorSettings,
    LocalSettings,
    executor_settings,
)

__all__ = [
    "EXECUTOR_TYPES",
    "Executor",
    "ExecutorSettings",
    "LocalSettings",
    "Task",
    "Work",
    "executor_settings",
    "make_executor",
]
