"""The ``slurm`` executor: each task a Slurm job through submitit; the driver waits for them all.

Before the first ``sbatch``, the partition is checked with ``sinfo`` (it exists and is up,
has GPUs where a model needs them, and allows the time, CPUs and memory asked for): each
problem is one ``error:`` line.  What each job asks for (GPUs, and the time, CPUs and memory
of its task's estimate unless set) is :mod:`~enade_bench.study.executors.slurm_request`'s.

submitit pickles each task and writes the job logs to ``jobs`` (default under the model
cache: never inside the results folder); each job runs the pickled task in a fresh
Python on its node, where the study folder must be visible (a shared filesystem).  The
driver follows the jobs with ``squeue`` (accounting, ``sacct``, is not needed): a job
that pends for a reason that cannot clear is cancelled after :data:`STUCK_AFTER_S`, its task
lost (submitted, it is no bad input found before anything ran: exit 3); one
that left the queue without a result is lost (its id, node, elapsed time and its log's
last line) within :data:`RESULT_GRACE_S`; a job near its time limit stops its task
(submitit's ``USR2`` signal) and reports "job N hit its time limit (T min)", as does a job
Slurm ended for its limit (``TIMEOUT`` in ``squeue -t all``: a task where no signal reached
Python).  Jobs are submitted ``--no-requeue``: Slurm would otherwise requeue a batch job
whose node failed (``JobRequeue=1``), and the study would wait, without a word, for a node
to come back; the job ends ``NODE_FAIL`` instead, is reported lost, and the rerun resumes.
With ``retries: N``, a job that ended ``NODE_FAIL`` or ``PREEMPTED`` (:data:`RETRIED`) is
submitted again, up to N times, each try named (never one that failed or timed out).
``cluster: local`` is submitit's ``LocalExecutor``: the same jobs as processes here (tests).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import submitit
from submitit.core.utils import FailedJobError, FailedSubmissionError, UncompletedJobError, pickle_load

from enade_bench.backends.model_cache import cache_root
from enade_bench.errors import UserError
from enade_bench.study.executors import slurm_cluster as sc
from enade_bench.study.executors.base import R, T, Task, Work, last_try, retry_line, to_submit
from enade_bench.study.executors.settings import SlurmSettings
from enade_bench.study.executors.slurm_request import JobRequest, check_request, job_gpus, job_request

#: Seconds between two looks at the jobs' states.
POLL_S = 2.0
#: Seconds a job may pend for a reason that cannot clear before the study stops.
STUCK_AFTER_S = 60.0
#: Seconds an ended job's result file is awaited (a shared filesystem may show it late).
RESULT_GRACE_S = 30.0
#: Ended without writing a result by design (killed, timed out): a shorter wait.
KILLED_GRACE_S = 5.0
KILLED = frozenset(
    {"CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"}
)
#: Ends that are the node's or the scheduler's, not the task's: submitted again with ``retries``.
RETRIED = frozenset({"NODE_FAIL", "PREEMPTED"})

__all__ = [
    "JobRequest",
    "SlurmExecutor",
    "check_request",
    "in_job",
    "jobs_folder",
    "last_meaningful_line",
    "why_failed",
]


def jobs_folder(settings: SlurmSettings, output: Path) -> Path:
    """Where submitit's files and the job logs go: ``settings.jobs``, or under the model
    cache, one folder per study output (never inside the results folder)."""
    if settings.jobs is not None:
        return Path(settings.jobs).expanduser().resolve()
    key = hashlib.sha256(str(output.resolve()).encode()).hexdigest()[:12]
    return cache_root() / "slurm" / f"{output.name}-{key}"


class _TimeLimit(BaseException):
    """Raised in a job by submitit's signal (``USR2``) near its time limit; not an ``Exception``,
    so the task stops (its model released, its run locks removed) instead of recording it."""


class _Refused(Exception):
    """sbatch refused a job: its last line."""


def _on_signal(signum: int, frame: FrameType | None) -> None:
    raise _TimeLimit


def in_job(run: Callable[[T], R], lost: Callable[[T, str], R], task: T, limit: int) -> R:
    """What a job runs: ``run(task)``; near the time limit, ``lost`` names it."""
    start = time.monotonic()
    signal.signal(signal.SIGUSR2, _on_signal)  # in place of submitit's requeue (not checkpointable)
    try:
        return run(task)
    except _TimeLimit:
        job = os.environ.get("SLURM_JOB_ID", "?")
        node = os.environ.get("SLURMD_NODENAME", "?")
        return lost(
            task,
            f"job {job} hit its time limit ({limit} min) on node {node} after "
            f"{sc.duration(sc.ran(job, start))} of its {limit} min; raise executor.time",
        )


@dataclass
class _Watch:
    """What the driver knows of one job."""

    last: sc.JobInfo | None = None
    stuck_since: float | None = None
    ended_since: float | None = None
    log: list[str] = field(default_factory=list)
    #: The job's try (1: the first; ``retries`` may submit a task again).
    tries: int = 1


#: Lines of a job's log that are submitit's or srun's, not the task's own.
_NOISE = re.compile(r"^(submitit (INFO|WARNING|ERROR|DEBUG)\b|srun: |slurmstepd(-[^\s:]+)?: )")


def last_meaningful_line(text: str) -> str | None:
    """The last line of a job's log written by its task, not submitit's or srun's own lines."""
    lines = [x.strip() for x in text.splitlines()]
    lines = [x for x in lines if x and not _NOISE.match(x)]
    return lines[-1][:300] if lines else None


def _last_line(job: submitit.Job[object]) -> str:
    for path in (job.paths.stderr, job.paths.stdout):
        try:
            line = last_meaningful_line(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        if line is not None:
            return line
    return "no line of its own in its log"


def _why_lost(job: submitit.Job[object], last: sc.JobInfo | None, limit: int) -> tuple[str, str]:
    """What a job that ended without a result reads as, and its state (accounting's, else squeue's)."""
    info = sc.accounting(job.job_id) or last
    state = info.state if info is not None else "left the queue"
    node = f"node {info.node}" if info is not None and info.node else "no node"
    ran = sc.seconds(info.elapsed) if info is not None else None
    elapsed = "?" if ran is None else sc.duration(ran)
    if state == "TIMEOUT":
        head = f"job {job.job_id} hit its time limit ({limit} min)"
        elapsed += f" of its {limit} min"
    else:
        head = f"job {job.job_id} ended without a result ({state})"
    return f"{head} on {node} after {elapsed}; its log's last line: {_last_line(job)}", state


def why_failed(job_id: str, error: object, last: sc.JobInfo | None, limit: int) -> str:
    """A job whose task raised: its error's last line.  submitit's own ``USR2`` handler (the
    signal came before the task set :func:`in_job`'s, on a job of a minute or two) reads
    ``timed-out and not checkpointable``: that is the time limit."""
    text = str(error).strip().splitlines()[-1:] or ["no message"]
    if "timed-out and not checkpointable" in text[0]:
        node = f"node {last.node}" if last is not None and last.node else "no node"
        return f"job {job_id} hit its time limit ({limit} min) on {node} before its task started"
    return f"job {job_id} failed: {text[0]}"


def _clean(job: submitit.Job[object]) -> None:
    """The job's pickles (its task and result) once read; its logs stay."""
    for path in (job.paths.submitted_pickle, job.paths.result_pickle):
        path.unlink(missing_ok=True)


class SlurmExecutor:
    """One submitit job per task."""

    name = "slurm"

    def __init__(self, settings: SlurmSettings, folder: Path) -> None:
        self.settings = settings
        self.folder = folder
        self._requests: dict[str, JobRequest] = {}
        self._partition = settings.partition or "(default)"

    def check(self, tasks: Sequence[Task]) -> None:
        """The partition exists and can run every job (``sinfo``); nothing is submitted."""
        s = self.settings
        short = [t for t in tasks if s.gpus_per_node is not None and t.gpus > max(s.gpus_per_node, 1)]
        if short:  # a one-GPU model on a CPU job runs on the CPU (device auto); a split one cannot
            need = ", ".join(f"{t.label} ({t.gpus})" for t in short)
            raise UserError(
                f"executor.gpus_per_node: {s.gpus_per_node} GPU(s) per job, but these models need "
                f"more: {need}; raise gpus_per_node, leave it out (each job asks for its model's), "
                "or lower tensor_parallel_size"
            )
        if s.cluster == "local":
            self._requests = {t.label: job_request(s, None, t, job_gpus(t, s, None)) for t in tasks}
            return
        parts = sc.partitions()
        if s.partition is None:
            part = next((p for p in parts.values() if p.default), None)
            if part is None:
                raise UserError(
                    "executor.partition: this cluster has no default partition; name one "
                    f"({', '.join(parts) or 'sinfo lists none'})"
                )
        elif s.partition not in parts:
            raise UserError(
                f"executor.partition: no partition '{s.partition}' on this cluster "
                f"(sinfo lists: {', '.join(parts) or 'none'})"
            )
        else:
            part = parts[s.partition]
        self._partition = part.name
        gpus = check_request(s, part, tasks)
        self._requests = {t.label: job_request(s, part, t, gpus[t.label]) for t in tasks}

    def request(self, task: Task) -> JobRequest:
        """The job ``task`` becomes (after :meth:`check`)."""
        return self._requests[task.label]

    def describe(self, task: Task) -> str:
        """The job's ``sbatch`` request and the partition it goes to."""
        r = self.request(task)
        mem = f", --mem={r.mem_gb:g}G" if r.mem_gb is not None else ""
        gpus = f", --gpus-per-node={r.gpus}" if r.gpus else ", no GPU"
        where = (
            f"partition {self._partition}" if self.settings.cluster == "slurm" else "submitit's LocalExecutor"
        )
        s, est = self.settings, []
        est += [] if s.time is not None else ["time"]
        est += [] if s.cpus_per_task is not None else ["CPUs"]
        est += [] if s.mem_gb is not None or r.mem_gb is None else ["memory"]
        estimated = f" ({', '.join(est)} from the task's estimate)" if est else ""
        return f"a Slurm job: --time={r.minutes}, --cpus-per-task={r.cpus}{gpus}{mem}{estimated}, on {where}"

    def slots(self, tasks: Sequence[Task]) -> int | None:
        """Not known: the partition's nodes are shared (``max_jobs`` sets what goes at once)."""
        return None

    def _submit(
        self, tasks: Sequence[T], work: Work[T, R], jobs: list[submitit.Job[R]], out: dict[int, R]
    ) -> None:
        """Submit the next tasks, in order, while fewer than ``max_jobs`` are in flight.

        sbatch refusing the first job is an error before anything runs (exit 2); refusing a
        later one loses that task and those not yet submitted (each named; exit 3), while the
        jobs already submitted run on (the rerun submits what is left)."""
        if len(jobs) in out:  # a refusal lost the tasks from here on
            return
        count = to_submit(len(jobs), len(out), len(tasks), self.settings.max_jobs)
        if not count:
            return
        for task in tasks[len(jobs) : len(jobs) + count]:
            try:
                jobs.append(self._sbatch(task, work))
            except _Refused as exc:
                refused = f"sbatch refused the job of {task.label}: {exc}"
                if not jobs:  # nothing runs yet: the study stops here (exit 2)
                    raise UserError(f"executor: {refused}") from None
                for k in range(len(jobs), len(tasks)):
                    why = refused if k == len(jobs) else f"not submitted, as {refused}"
                    out[k] = work.lost(tasks[k], f"{why}; rerun the same command")
                    work.done(out[k])
                return

    def _sbatch(self, task: T, work: Work[T, R]) -> submitit.Job[R]:
        """The job of ``task``, submitted; sbatch refusing it raises :class:`_Refused` with its
        last line (the task pickled for the job removed)."""
        request = self.request(task)
        executor = submitit.AutoExecutor(folder=self.folder / "%j", cluster=self.settings.cluster)
        executor.update_parameters(**request.submitit(self.settings.cluster))
        try:
            with contextlib.redirect_stderr(io.StringIO()):  # submitit prints sbatch's stderr: it is in exc
                return executor.submit(in_job, work.run, work.lost, task, request.minutes)
        except (FailedJobError, FailedSubmissionError) as exc:
            for stray in self.folder.glob("*.pkl"):
                stray.unlink(missing_ok=True)
            lines = [x.strip() for x in str(exc).splitlines() if x.strip()] or [type(exc).__name__]
            raise _Refused(lines[-1]) from None

    def run(self, tasks: Sequence[T], work: Work[T, R]) -> list[R]:
        jobs: list[submitit.Job[R]] = []
        out: dict[int, R] = {}
        self._submit(tasks, work, jobs, out)
        try:
            if self.settings.cluster == "local":
                self._wait_local(tasks, jobs, work, out)
            else:
                self._wait_slurm(tasks, jobs, work, out)
        except BaseException:  # Ctrl-C, a job that can never start: the others are cancelled
            left = [j for i, j in enumerate(jobs) if i not in out]
            if self.settings.cluster == "slurm":
                sc.cancel([j.job_id for j in left])
            for job in left:
                if self.settings.cluster == "local":
                    job.cancel(check=False)
                _clean(job)
            raise
        return [out[i] for i in range(len(tasks))]

    def _finish(self, i: int, outcome: R, job: submitit.Job[R], work: Work[T, R], out: dict[int, R]) -> None:
        out[i] = outcome
        _clean(job)
        work.done(outcome)

    def _wait_local(
        self, tasks: Sequence[T], jobs: list[submitit.Job[R]], work: Work[T, R], out: dict[int, R]
    ) -> None:
        while len(out) < len(tasks):
            self._submit(tasks, work, jobs, out)
            for i, job in enumerate(jobs):
                if i in out or not job.done():
                    continue
                try:
                    outcome = job.result()
                except UncompletedJobError as exc:  # killed
                    last = str(exc).strip().splitlines()[-1:] or [type(exc).__name__]
                    outcome = work.lost(tasks[i], f"its job {job.job_id} did not finish ({last[0]})")
                self._finish(i, outcome, job, work, out)
            time.sleep(POLL_S / 4)

    def _wait_slurm(
        self, tasks: Sequence[T], jobs: list[submitit.Job[R]], work: Work[T, R], out: dict[int, R]
    ) -> None:
        watch = [_Watch() for _ in tasks]
        while len(out) < len(tasks):
            self._submit(tasks, work, jobs, out)
            left = [i for i in range(len(jobs)) if i not in out]
            infos = sc.jobs([jobs[i].job_id for i in left])
            now = time.monotonic()
            for i in left:
                job, w = jobs[i], watch[i]
                info = infos.get(job.job_id) if infos is not None else None
                w.last = info or w.last
                if job.paths.result_pickle.exists():
                    kind, value = pickle_load(job.paths.result_pickle)
                    if kind != "success":
                        limit = self.request(tasks[i]).minutes
                        value = work.lost(tasks[i], why_failed(job.job_id, value, w.last, limit))
                    self._finish(i, value, job, work, out)
                    continue
                if infos is None:  # squeue did not answer this time
                    continue
                if info is not None and info.never_clears and w.tries == 1:  # a try again ran once: it can
                    w.stuck_since = w.stuck_since or now
                    if now - w.stuck_since >= STUCK_AFTER_S:  # submitted: a lost task (exit 3), not bad input
                        sc.cancel([job.job_id])
                        why = (
                            f"job {job.job_id} pends for a reason that cannot clear: {info.reason}; "
                            "cancelled: ask for less (time, cpus_per_task, mem_gb, GPUs) or pick another partition"
                        )
                        self._finish(i, work.lost(tasks[i], why), job, work, out)
                    continue
                w.stuck_since = None
                if info is not None and info.state not in sc.ENDED:
                    continue
                w.ended_since = w.ended_since or now
                grace = KILLED_GRACE_S if info is not None and info.state in KILLED else RESULT_GRACE_S
                if now - w.ended_since >= grace:
                    why, state = _why_lost(job, w.last, self.request(tasks[i]).minutes)
                    if state in RETRIED and w.tries <= self.settings.retries:
                        refused = self._again(i, tasks[i], work, jobs, why, w.tries)
                        if refused is None:
                            watch[i] = _Watch(tries=w.tries + 1)
                            continue
                        why = refused
                    else:
                        why = last_try(why, w.tries, self.settings.retries)
                    self._finish(i, work.lost(tasks[i], why), job, work, out)
            if len(out) < len(tasks):
                time.sleep(POLL_S)

    def _again(
        self, i: int, task: T, work: Work[T, R], jobs: list[submitit.Job[R]], why: str, tried: int
    ) -> str | None:
        """Submit the job of task ``i`` again, after its try ``tried`` was lost (``why``); named first.
        sbatch refusing it is why the task is lost (returned; the other jobs run on, exit 3)."""
        work.retried(task, retry_line(why, tried, self.settings.retries))
        _clean(jobs[i])
        try:
            jobs[i] = self._sbatch(task, work)
        except _Refused as exc:
            return (
                f"{why}; sbatch refused to submit it again (try {tried + 1}): {exc}; rerun the same command"
            )
        return None

    def close(self) -> None:
        """Nothing held between jobs."""
