"""What the Slurm controller says: its partitions (``sinfo``) and the study's jobs (``squeue``).

Every call is Slurm's own command line with a timeout; a controller that does not answer,
or a command missing from the ``PATH``, is one :class:`~enade_bench.errors.UserError` line.
Parsing is kept apart from the calls (:func:`parse_partitions`, :func:`parse_jobs`), so the
formats are tested on the text Slurm prints.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass

from enade_bench.errors import UserError
from enade_bench.study.executors.sizing import smallest_card

#: Seconds a Slurm command may take before the controller is called unreachable.
COMMAND_TIMEOUT_S = 30.0
#: ``sinfo`` per node: partition, availability, time limit, CPUs, memory (MB), generic resources, features.
SINFO_FORMAT = "%P|%a|%l|%c|%m|%G|%f"
#: ``squeue`` per job: id, state, reason, nodes, elapsed, time limit.
SQUEUE_FORMAT = "%i|%T|%r|%N|%M|%l"
#: Pending reasons that never clear by waiting: the request exceeds what the partition, its
#: nodes or the account allow (Slurm's ``squeue`` manual, JOB REASON CODES), or names a node
#: that is down or reserved.
NEVER_CLEARS = (
    "PartitionConfig",
    "PartitionTimeLimit",
    "PartitionNodeLimit",
    "BadConstraints",
    "ReqNodeNotAvail",
    "InvalidAccount",
    "InvalidQOS",
    "DependencyNeverSatisfied",
    "PerJobLimit",
    "MaxGRESPerJob",
    "MaxCpuPerJob",
    "MaxWallDurationPerJob",
    "MaxMemPerLimit",
)
#: Job states after which no result will come (``squeue -t all`` shows them for ``MinJobAge``).
ENDED = frozenset(
    {
        "COMPLETED",
        "CANCELLED",
        "FAILED",
        "TIMEOUT",
        "NODE_FAIL",
        "PREEMPTED",
        "OUT_OF_MEMORY",
        "BOOT_FAIL",
        "DEADLINE",
        "SPECIAL_EXIT",
        "REVOKED",
    }
)


@dataclass(frozen=True)
class Partition:
    """A partition as ``sinfo`` shows it: the most any one of its nodes offers."""

    name: str
    default: bool
    up: bool
    #: Longest time a job may run (minutes); ``None``: unlimited.
    max_minutes: int | None
    cpus: int
    mem_mb: int
    gpus: int
    #: Memory of each GPU (GB), the smallest card of its GPU nodes (:func:`node_card`); ``None``: unknown.
    gpu_memory_gb: float | None = None
    #: The card's name as Slurm gives it (a gres type or a node feature).
    gpu_card: str = ""


@dataclass(frozen=True)
class JobInfo:
    """One job as ``squeue`` shows it."""

    job_id: str
    state: str
    reason: str
    node: str
    elapsed: str
    limit: str

    @property
    def never_clears(self) -> bool:
        """Pending for a reason that waiting cannot clear (:data:`NEVER_CLEARS`)."""
        return self.state == "PENDING" and any(r in self.reason for r in NEVER_CLEARS)


def slurm_command(args: Sequence[str], what: str = "executor.type") -> str:
    """The output of a Slurm command; missing, unanswered or failed: one ``UserError`` line."""
    if shutil.which(args[0]) is None:
        raise UserError(
            f"{what}: slurm, but this machine has no Slurm (no {args[0]} on the PATH); "
            "run the study from a login node, or use executor type ray or local"
        )
    try:
        done = subprocess.run(
            list(args), capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise UserError(
            f"{what}: slurm, but the Slurm controller did not answer {args[0]} "
            f"within {COMMAND_TIMEOUT_S:.0f} s"
        ) from None
    if done.returncode != 0:
        lines = [x.strip() for x in done.stderr.splitlines() if x.strip()] or [
            f"exit status {done.returncode}"
        ]
        raise UserError(f"{what}: slurm, but the Slurm controller does not answer ({lines[-1]})")
    return done.stdout


def minutes(text: str) -> int | None:
    """Slurm's time (``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH[:MM[:SS]]``) in whole minutes,
    rounded down; ``None`` for ``infinite``/``UNLIMITED``."""
    total = seconds(text)
    return None if total is None else total // 60


def duration(total: float) -> str:
    """Seconds as a person reads a job's time: ``45 s``, ``1 min 02 s``, ``2 h 03 min``."""
    whole = round(total)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def seconds(text: str) -> int | None:
    """Slurm's time (as :func:`minutes` reads it) in seconds; ``None`` for ``infinite``."""
    text = text.strip()
    if text.lower() in {"infinite", "unlimited", "n/a", ""}:
        return None
    days, _, rest = text.rpartition("-")
    parts = [int(x) for x in rest.split(":")]
    if days:  # D-HH, D-HH:MM, D-HH:MM:SS
        h, m, s = [*parts, 0, 0][:3]
    elif len(parts) == 1:
        h, m, s = 0, parts[0], 0
    elif len(parts) == 2:
        h, m, s = 0, parts[0], parts[1]
    else:
        h, m, s = parts
    return ((int(days or 0) * 24 + h) * 60 + m) * 60 + s


def _gpus(gres: str) -> int:
    """GPUs in a node's generic resources (``gpu:4``, ``gpu:a100:8(S:0-1)``, ``(null)``)."""
    total = 0
    for entry in re.split(r",(?![^(]*\))", gres):
        match = re.fullmatch(r"gpu(?::[^:(]+)?:(\d+)(?:\(.*\))?", entry.strip())
        if match:
            total += int(match.group(1))
    return total


def node_card(gres: str, features: str) -> tuple[float, str] | None:
    """A GPU node's card and its memory (GB): its gres type (``gpu:h100:8``), else a node feature
    (``a100_80g``) that names a card (:func:`~enade_bench.study.executors.sizing.card_memory_gb`)."""
    types = [
        m.group(1) for e in re.split(r",(?![^(]*\))", gres) if (m := re.match(r"gpu:([^:(]+):\d", e.strip()))
    ]
    return smallest_card(types) or smallest_card(features.split(","))


def parse_partitions(text: str) -> dict[str, Partition]:
    """``sinfo -h -N -o SINFO_FORMAT`` (a line per node and partition): each partition's
    best node (most CPUs, memory, GPUs; longest time) and its smallest GPU card."""
    out: dict[str, Partition] = {}
    for line in text.splitlines():
        fields = line.strip().split("|")
        if len(fields) not in (6, 7):
            continue
        name, avail, limit, cpus, mem, gres = fields[:6]
        gpus = _gpus(gres)
        card = node_card(gres, fields[6] if len(fields) == 7 else "") if gpus else None
        default = name.endswith("*")
        name = name.rstrip("*")
        node = Partition(
            name,
            default,
            avail == "up",
            minutes(limit),
            int(cpus.rstrip("+") or 0),
            int(mem.rstrip("+") or 0),
            gpus,
            *(card or (None, "")),
        )
        old = out.get(name)
        if old is not None:
            cards = [(c.gpu_memory_gb, c.gpu_card) for c in (old, node) if c.gpu_memory_gb is not None]
            gb, card_name = min(cards) if cards else (None, "")
            node = Partition(
                name,
                default,
                old.up or node.up,
                node.max_minutes,
                max(old.cpus, node.cpus),
                max(old.mem_mb, node.mem_mb),
                max(old.gpus, node.gpus),
                gb,
                card_name,
            )
        out[name] = node
    return out


def partitions() -> dict[str, Partition]:
    """The cluster's partitions (``sinfo``); a controller that does not answer: one error line."""
    return parse_partitions(slurm_command(["sinfo", "-h", "-N", "-o", SINFO_FORMAT]))


def parse_jobs(text: str) -> dict[str, JobInfo]:
    """``squeue -h -o SQUEUE_FORMAT``: the jobs by id."""
    out = {}
    for line in text.splitlines():
        fields = line.strip().split("|")
        if len(fields) == 6:
            out[fields[0]] = JobInfo(*fields)
    return out


def jobs(ids: Sequence[str]) -> dict[str, JobInfo] | None:
    """The state of ``ids`` (ended ones while Slurm keeps them: ``MinJobAge``); ``None`` when
    ``squeue`` does not answer this time (the caller asks again)."""
    done = _asked(["squeue", "-h", "-t", "all", "-j", ",".join(ids), "-o", SQUEUE_FORMAT])
    if done is None:
        return None
    if done.returncode != 0:  # every id unknown (all left the queue) is an error for squeue
        return {} if "Invalid job id" in done.stderr else None
    return parse_jobs(done.stdout)


def accounting(job_id: str) -> JobInfo | None:
    """A job's end as ``sacct`` recorded it (state, node, elapsed); ``None`` without accounting."""
    done = _asked(["sacct", "-n", "-P", "-X", "-j", job_id, "-o", "JobID,State,NodeList,Elapsed"])
    for line in done.stdout.splitlines() if done is not None and done.returncode == 0 else []:
        fields = line.split("|")
        if len(fields) == 4 and fields[0] == job_id:
            return JobInfo(job_id, fields[1].split()[0], "", fields[2], fields[3], "")
    return None


def ran(job: str, start: float) -> float:
    """Seconds job ``job`` has run: Slurm's accounting (``sacct``'s Elapsed) where it answers, else
    the job's own start (``SLURM_JOB_START_TIME``), else since ``start`` (``time.monotonic``) here."""
    info = accounting(job) if job.isdigit() else None
    elapsed = seconds(info.elapsed) if info is not None else None
    if elapsed is not None:
        return elapsed
    began = os.environ.get("SLURM_JOB_START_TIME", "")
    return time.time() - int(began) if began.isdigit() else time.monotonic() - start


def cancel(ids: Sequence[str]) -> None:
    """``scancel`` the jobs (best effort: the study is ending anyway)."""
    if ids:
        _asked(["scancel", *ids])


def _asked(args: list[str]) -> subprocess.CompletedProcess[str] | None:
    """A Slurm command's answer; ``None`` where it cannot run or does not answer in time."""
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
