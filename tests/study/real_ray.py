"""A real two-raylet Ray cluster on this machine for the tests: ``ray start --head`` and a
second ``ray start --address``, each with one CPU, in their own temporary folder, without
the dashboard or usage stats, and without the token authentication of Ray 2.60
(``RAY_AUTH_MODE=disabled``: the test machine only).

:func:`stop_ray` ends the processes of this cluster only: those whose command line names its
folder or its GCS port, each by its pid (``ray stop`` would end every Ray on the machine).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))


@dataclass
class RayCluster:
    """A running test cluster: its GCS address, folder and environment."""

    address: str
    folder: Path
    env: dict[str, str]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))  # the kernel's ephemeral range: clear of Ray's worker ports (10002-19999)
        return int(s.getsockname()[1])


def plain_sigint() -> None:
    """In a ``ray start`` child before it runs: SIGINT handled by default and not blocked, as in
    a user's shell.  The suite's process may hold it ignored and blocked (a background job's
    ``&``, a library's set-up in an earlier test of the same worker); the cluster's workers
    inherit that, their Python then installs no ``KeyboardInterrupt`` handler, and no
    ``ray.cancel`` reaches a running task (the Ctrl-C tests failed so in full CI runs)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def start_ray(
    folder: Path, env: dict[str, str], extra: Sequence[str] = (), second: bool = True
) -> RayCluster:
    """Head and a second raylet, one CPU each, in ``folder``; ``env``: the environment of both;
    ``extra``: more ``ray start`` options of both (``--num-gpus 2``: declared fake GPUs);
    ``second``: ``False`` for the head alone."""
    env = {**env, "RAY_AUTH_MODE": "disabled"}
    common = ["--num-cpus", "1", "--object-store-memory", str(80 * 2**20), "--disable-usage-stats", *extra]
    port = _free_port()
    head = subprocess.run(
        [
            RAY,
            "start",
            "--head",
            "--port",
            str(port),
            "--temp-dir",
            str(folder),
            "--include-dashboard",
            "false",
            "--ray-client-server-port",
            str(_free_port()),
            *common,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        preexec_fn=plain_sigint,
    )
    found = re.search(r"ray start --address='([^']+)'", head.stdout + head.stderr)
    if head.returncode != 0 or found is None:
        stop_ray(RayCluster(f":{port}", folder, env))
        raise RuntimeError(f"ray start --head failed: {head.stderr[-2000:]}")
    cluster = RayCluster(found.group(1), folder, env)
    if not second:
        return cluster
    other = subprocess.run(
        [RAY, "start", "--address", cluster.address, *common],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        preexec_fn=plain_sigint,
    )
    if other.returncode != 0:
        stop_ray(cluster)
        raise RuntimeError(f"ray start --address failed: {other.stderr[-2000:]}")
    return cluster


def _ours(cluster: RayCluster) -> list[int]:
    port = cluster.address.rpartition(":")[2]
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(cluster.folder) in cmd or f":{port} " in cmd or cmd.rstrip().endswith(f":{port}"):
            out.append(int(entry.name))
    return out


def stop_ray(cluster: RayCluster) -> None:
    """End this cluster's processes: SIGTERM, then SIGKILL those left after 5 s."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 1.0)):
        pids = _ours(cluster)
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + wait
        while pids and time.monotonic() < deadline:
            time.sleep(0.2)
            pids = _ours(cluster)
