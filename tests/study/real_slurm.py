"""A real one-node Slurm on this machine for the tests: Debian's slurm-wlm and munge, a
generated ``slurm.conf`` in a temporary folder, loopback only, with or without accounting.

:func:`start_slurm` starts munged, slurmctld and slurmd (as root, which CI is; ``.ci/run``
installs the packages) and returns the environment that points Slurm's commands at it
(``SLURM_CONF``); :func:`stop_slurm` ends the daemons it started, by their pids.
``accounting=True`` adds Debian's ``mariadb-server`` and ``slurmdbd`` (:func:`_start_accounting`):
a private MariaDB (its own datadir in the folder, loopback on a free port, no system service),
slurmdbd on another free port, ``AccountingStorageType=accounting_storage/slurmdbd`` with
``AccountingStoragePass`` set to the munge socket (the socket slurmdbd's messages are signed
through), and the cluster registered with ``sacctmgr`` before slurmctld starts; ``sacct`` then
answers.  It starts in about 6 s, against 1.5 s without accounting.
Partitions: ``debug`` (default, 10 min), ``onecpu`` (``MaxCPUsPerNode=1``: a job of 2 CPUs
pends forever with ``PartitionConfig``, though ``sinfo`` shows nodes of more CPUs). ``node1``
declares at least 4 CPUs, more than a small machine has (``SlurmdParameters=config_overrides``),
so that jobs that only sleep (a time limit's) run beside those that compute.

Short waits, so the tests of a job's end cost little: ``KillWait=2`` (a job past its time
limit is killed 2 s after its ``SIGTERM``), ``MessageTimeout=4`` (a controller that does not
answer is named in about 3 s, not 9), ``OverTimeLimit=0`` (Slurm's default, written out).
Slurm checks time limits every 30 s (``PERIODIC_TIMEOUT``, compiled in), so a job of 1
minute ends ``TIMEOUT`` 60 to 90 s after it started; the ``--signal`` warning comes in the
same check, 15 to 45 s after the start for a 1-minute job.  :func:`restore_node` brings the
node back after a test took it down.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

DAEMONS = ("munged", "slurmctld", "slurmd")
#: What the accounting variant runs besides (Debian's mariadb-server and slurmdbd).
ACCOUNTING = ("mariadb-install-db", "mariadbd", "slurmdbd", "sacctmgr")


@dataclass
class Slurm:
    """A running test cluster: its folder, environment and daemons' pid files."""

    folder: Path
    env: dict[str, str]
    pids: list[Path]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(what: str, ready: Callable[[], bool], log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the test Slurm's {what} did not come up; see {log}")
        time.sleep(0.2)


def _answers(args: list[str], env: dict[str, str]) -> bool:
    return subprocess.run(args, env=env, capture_output=True, timeout=30, check=False).returncode == 0


def _accounting_conf(sock: Path, dbd_port: int) -> str:
    """The lines of ``slurm.conf`` that send the cluster's records to the slurmdbd on ``dbd_port``."""
    return f"""AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort={dbd_port}
AccountingStoragePass={sock}
"""


def _start_accounting(folder: Path, env: dict[str, str], sock: Path, dbd_port: int) -> None:
    """MariaDB (pid file ``mariadb/mariadbd.pid``) and slurmdbd (``slurmdbd.pid``) in ``folder``;
    the cluster registered."""
    db, sql_port = folder / "mariadb", _free_port()
    small = ["--innodb-buffer-pool-size=32M", "--innodb-log-file-size=8M"]  # a few MB on disk, not 110
    subprocess.run(
        [
            "mariadb-install-db",
            "--no-defaults",
            f"--datadir={db / 'data'}",
            "--user=root",
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
            *small,
        ],
        capture_output=True,
        check=True,
    )
    # slurmdbd's own user, over TCP from the loopback (MariaDB's root logs in through its socket only)
    init = db / "init.sql"
    init.write_text(
        "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'enadetest';\n"
        "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';\n",
        encoding="utf-8",
    )
    subprocess.Popen(
        [
            "mariadbd",
            "--no-defaults",
            f"--datadir={db / 'data'}",
            "--user=root",
            f"--socket={db / 'mariadbd.sock'}",
            f"--port={sql_port}",
            "--bind-address=127.0.0.1",
            f"--pid-file={db / 'mariadbd.pid'}",
            f"--log-error={db / 'mariadbd.log'}",
            f"--init-file={init}",
            "--skip-name-resolve",
            *small,
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    dbd = folder / "slurmdbd.conf"  # read from SLURM_CONF's folder; slurmdbd wants it 0600
    dbd.write_text(
        f"""AuthType=auth/munge
AuthInfo=socket={sock}
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort={dbd_port}
SlurmUser=root
PidFile={folder / "slurmdbd.pid"}
LogFile={folder / "slurmdbd.log"}
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={sql_port}
StorageUser=slurm
StoragePass=enadetest
StorageLoc=slurm_acct_db
""",
        encoding="utf-8",
    )
    dbd.chmod(0o600)
    _wait("MariaDB", lambda: (db / "mariadbd.pid").is_file() and not _free(sql_port), db / "mariadbd.log")
    subprocess.run(["slurmdbd"], env=env, check=True)
    _wait("slurmdbd", lambda: _answers(["sacctmgr", "-n", "list", "cluster"], env), folder / "slurmdbd.log")
    subprocess.run(
        ["sacctmgr", "-i", "add", "cluster", "enadetest"], env=env, capture_output=True, check=True
    )


def _free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


#: ``start_slurm(preempt=True)``'s lines: a higher tier's job cancels what it needs room from.
PREEMPTION = """PreemptType=preempt/partition_prio
PreemptMode=CANCEL
PartitionName=urgent Nodes=node1 PriorityTier=10 MaxTime=10 State=UP
"""


def start_slurm(folder: Path, accounting: bool = False, gpus: str = "", preempt: bool = False) -> Slurm:
    """Start munge and a one-node Slurm in ``folder`` (with slurmdbd and MariaDB where
    ``accounting``); skip where the packages or root are missing.

    ``gpus`` (``h100:2``): ``node1`` declares that many fake GPUs of that type (``gres.conf``
    without devices, ``AutoDetect=off``) and the type as a node feature.  ``preempt``: a
    partition ``urgent`` of a higher priority tier on the same node, whose jobs cancel the
    other partitions' jobs they need room from (``preempt/partition_prio``, ``PreemptMode=CANCEL``:
    those end ``PREEMPTED``)."""
    need = DAEMONS + ACCOUNTING if accounting else DAEMONS
    missing = [d for d in need if shutil.which(d) is None]
    if missing or os.geteuid() != 0:
        pkgs = "slurm-wlm munge mariadb-server slurmdbd" if accounting else "slurm-wlm munge"
        why = f"needs {', '.join(missing)} (apt-get install {pkgs})" if missing else "needs root"
        if os.environ.get("CI"):
            pytest.fail(f"a real Slurm {why}; .ci/run installs it")
        pytest.skip(f"a real Slurm {why}")
    for sub in ("spool", "state", "munge"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    munge = folder / "munge"
    munge.chmod(0o700)
    key = munge / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    sock = munge / "munge.sock"
    subprocess.run(
        [
            "munged",
            "--force",
            f"--socket={sock}",
            f"--key-file={key}",
            f"--pid-file={munge / 'pid'}",
            f"--log-file={munge / 'log'}",
            f"--seed-file={munge / 'seed'}",
        ],
        check=True,
    )
    cpus = max(4, os.cpu_count() or 1)  # sleeping jobs beside working ones (config_overrides)
    dbd_port = _free_port()
    storage = (
        _accounting_conf(sock, dbd_port) if accounting else "AccountingStorageType=accounting_storage/none\n"
    )
    conf = folder / "slurm.conf"
    card, _, count = gpus.partition(":")
    if gpus:  # a device file each: regular files (Slurm only counts them; no job here touches a GPU)
        for i in range(int(count)):
            (folder / f"gpu{i}").touch()
        (folder / "gres.conf").write_text(
            f"AutoDetect=off\nNodeName=node1 Name=gpu Type={card} File={folder}/gpu[0-{int(count) - 1}]\n"
        )
    node = f" Gres=gpu:{gpus} Features={card}" if gpus else ""
    conf.write_text(
        f"""ClusterName=enadetest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
AuthInfo=socket={sock}
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={folder / "state"}
SlurmdSpoolDir={folder / "spool"}
SlurmctldPidFile={folder / "slurmctld.pid"}
SlurmdPidFile={folder / "slurmd.pid"}
SlurmctldLogFile={folder / "slurmctld.log"}
SlurmdLogFile={folder / "slurmd.log"}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
GresTypes=gpu
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
ReturnToService=2
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
{storage}MinJobAge=300
KillWait=2
MessageTimeout=4
OverTimeLimit=0
InactiveLimit=0
NodeName=node1 NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={1000 * cpus}{node} State=UNKNOWN
PartitionName=debug Nodes=node1 Default=YES MaxTime=10 State=UP
PartitionName=onecpu Nodes=node1 MaxCPUsPerNode=1 MaxTime=10 State=UP
{PREEMPTION if preempt else ""}""",
        encoding="utf-8",
    )
    env = {**os.environ, "SLURM_CONF": str(conf)}
    dbs = [folder / "mariadb" / "mariadbd.pid", folder / "slurmdbd.pid"] if accounting else []
    slurm = Slurm(folder, env, [munge / "pid", *dbs, folder / "slurmctld.pid", folder / "slurmd.pid"])
    try:
        if accounting:
            _start_accounting(folder, env, sock, dbd_port)
        subprocess.run(["slurmctld", "-i"], env=env, check=True)
        subprocess.run(["slurmd", "-N", "node1"], env=env, check=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = subprocess.run(
                ["sinfo", "-h", "-p", "debug", "-o", "%T"],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            ).stdout.strip()
            if state == "idle":
                return slurm
            time.sleep(0.5)
        raise RuntimeError(f"the test Slurm did not come up (node {state!r}); see {folder}/*.log")
    except BaseException:
        stop_slurm(slurm)
        raise


def stop_slurm(slurm: Slurm) -> None:
    """Cancel the cluster's jobs still running (a job's processes outlive slurmd), then end the
    daemons :func:`start_slurm` started (each by the pid in its pid file)."""
    user = pwd.getpwuid(os.getuid()).pw_name
    subprocess.run(["scancel", f"--user={user}"], env=slurm.env, capture_output=True, timeout=30, check=False)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        active = subprocess.run(
            ["squeue", "-h", "-t", "RUNNING,COMPLETING", "-o", "%i"],
            env=slurm.env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if active.returncode != 0 or not active.stdout.strip():
            break
        time.sleep(0.5)
    for pid_file in reversed(slurm.pids):
        try:
            os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
        except (OSError, ValueError):
            pass


def node_state(slurm: Slurm) -> str:
    """The state of the node as ``sinfo`` prints it (``idle``, ``alloc``, ``down*``, …)."""
    return (
        subprocess.run(
            ["sinfo", "-h", "-N", "-n", "node1", "-o", "%T"],
            env=slurm.env,
            capture_output=True,
            text=True,
            check=False,
        )
        .stdout.strip()
        .split("\n")[0]
    )


def restore_node(slurm: Slurm, timeout: float = 60) -> None:
    """Bring ``node1`` back to ``idle`` after a test set it down (``scontrol … state=resume``)."""
    deadline = time.monotonic() + timeout
    while (state := node_state(slurm)) != "idle":
        if time.monotonic() > deadline:
            raise RuntimeError(f"node1 did not come back ({state!r}); see {slurm.folder}/*.log")
        if state.startswith(("down", "drain")):
            subprocess.run(
                ["scontrol", "update", "nodename=node1", "state=resume"],
                env=slurm.env,
                capture_output=True,
                check=False,
            )
        time.sleep(0.5)
