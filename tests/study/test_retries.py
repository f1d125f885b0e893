"""``executor.retries``: a task lost with its node or its worker is submitted again, each try
named at once, and the study completes (exit 0):

* Slurm ``NODE_FAIL``: a real one-node Slurm whose node is set down under the job;
* Slurm ``PREEMPTED``: a job of a higher-priority partition takes the node;
* Ray: a real one-raylet cluster whose worker is SIGKILLed (``max_jobs: 1`` keeps one task in
  flight on its 2 CPUs), and a cluster whose raylet running the task is SIGKILLed (its node dies).

About two minutes of real clusters, past the issue's CI budget: the suite skips this module and
``bench/cluster_tests.sh`` runs it (with the accounting variant of ``test_slurm.py``; docs/studies.md).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.study.real_ray import start_ray, stop_ray
from tests.study.real_slurm import Slurm, restore_node, start_slurm, stop_slurm
from tests.study.slow_models import CLI as SLOW_CLI
from tests.study.test_executors import CLI, ENV
from tests.study.test_executors import write_study as ray_study
from tests.study.test_generic_study import SMOLLM2
from tests.study.test_slurm import job_env, queue, sbatch_refusing_from, write_study

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("ENADE_BENCH_CLUSTER_TESTS") != "1", reason="bench/cluster_tests.sh runs it (2 min)"
    ),
]


class Lines:
    """A process's stderr lines as they come, each with its time (a thread reads them)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.seen: list[tuple[float, str]] = []
        self._thread = threading.Thread(
            target=lambda: self.seen.extend((time.monotonic(), x.rstrip("\n")) for x in proc.stderr or [])
        )
        self._thread.start()

    def wait_for(self, prefix: str, proc: subprocess.Popen[str], within_s: float) -> float:
        """When a line starting with ``prefix`` came (fails after ``within_s`` or if ``proc`` ended)."""
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            found = [t for t, x in self.seen if x.startswith(prefix)]
            if found:
                return found[0]
            assert proc.poll() is None, self.seen
            time.sleep(0.2)
        raise AssertionError(f"no line {prefix!r} within {within_s} s: {self.seen}")

    def join(self) -> list[str]:
        self._thread.join()
        return [x for _, x in self.seen]


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Slurm]:
    pytest.importorskip("submitit")
    cluster = start_slurm(tmp_path_factory.mktemp("slurm"), preempt=True)
    yield cluster
    stop_slurm(cluster)


@pytest.mark.parametrize(
    ("name", "state"), [("flaky", "NODE_FAIL"), ("preempted", "PREEMPTED"), ("refused", "NODE_FAIL")]
)
def test_a_job_lost_with_its_node_is_submitted_again_and_the_study_completes(
    slurm: Slurm, tmp_path: Path, name: str, state: str
) -> None:
    """``NODE_FAIL``: the node set down under the job, back once the loss is named; ``PREEMPTED``:
    a job of the higher-priority partition takes the whole node for 3 s (the study's job is
    cancelled to make room); ``refused``: sbatch refuses the second try, a job has run: the task
    is lost (exit 3), not bad input."""
    path = write_study(tmp_path, {"retries": 1}, models=[{**SMOLLM2, "name": name}])
    started = tmp_path / "study" / ".study" / f"{name}.started"
    env = {**job_env(slurm), "ENADE_BENCH_TEST_ONCE": str(tmp_path / "once")}  # the first load sleeps
    if name == "refused":
        env["PATH"] = f"{sbatch_refusing_from(tmp_path, 2)}:{env.get('PATH', os.environ['PATH'])}"
    proc = subprocess.Popen(
        [*SLOW_CLI, "study", str(path), "--quiet"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = Lines(proc)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and not started.is_file():
            time.sleep(0.2)
        job = next(x.split("|")[0] for x in queue(slurm) if x.endswith(f"|RUNNING|None|enade-bench-{name}"))
        take = (
            ["scontrol", "update", "nodename=node1", "state=down", "reason=test"]
            if state == "NODE_FAIL"
            else [
                "sbatch",
                "-p",
                "urgent",
                "--exclusive",
                "-J",
                "urgent",
                "-o",
                "/dev/null",
                "--wrap",
                "sleep 3",
            ]
        )
        subprocess.run(take, env=slurm.env, check=True, capture_output=True)
        taken = time.monotonic()
        retried = lines.wait_for(f"{name}: lost on try 1 of 2", proc, 60)
        if state == "NODE_FAIL":
            restore_node(slurm)  # the second try runs once the node is back
        proc.wait(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
        if state == "NODE_FAIL":
            restore_node(slurm)
    out = lines.join()
    assert retried - taken < 60, out  # named under --quiet, as soon as it is seen
    again = [x for x in out if x.startswith(f"{name}: lost on try 1 of 2")]
    assert re.fullmatch(
        rf"{name}: lost on try 1 of 2 \(job {job} ended without a result \({state}\) on node node1 "
        r"after .*\); submitted again: try 2 of 2",
        again[0],
    ), again
    if name == "refused":
        assert proc.returncode == 3, out
        lost = [x for x in out if x.startswith(f"{name}: failed: did not finish: job {job} ended")]
        assert lost and lost[0].endswith(
            "sbatch refused to submit it again (try 2): sbatch: error: Batch job submission failed: "
            "Socket timed out on send/recv operation; rerun the same command"
        ), out
        return
    assert proc.returncode == 0, out
    assert (tmp_path / "study" / "runs" / name / f"{name}_S1_results.json").is_file()
    states = {x.split("|")[0]: x.split("|")[1] for x in queue(slurm) if x.endswith(f"|enade-bench-{name}")}
    assert states.pop(job) == state and list(states.values()) == ["COMPLETED"], states  # one job per try


def _ray_study_losing_a_try(
    tmp_path: Path,
    address: str,
    models: list[dict[str, object]],
    kill: Callable[[int], None],
    **executor: object,
) -> tuple[int, list[str]]:
    """``study`` with ``retries: 1`` on the Ray cluster at ``address``; once smollm2's first try
    has started, ``kill`` gets its worker's pid.  The exit status and the stderr lines."""
    path = ray_study(
        tmp_path,
        strategies=["S1"],
        limit=2,
        models=models,
        executor={"type": "ray", "address": address, "retries": 1, **executor},
    )
    started = tmp_path / "study" / ".study" / "smollm2.started"
    proc = subprocess.Popen(
        [*CLI, "study", str(path)], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    lines = Lines(proc)
    try:
        lines.wait_for("smollm2: started", proc, 120)  # its first try's start, shown
        kill(int(started.read_text(encoding="utf-8").split("\t")[0].removeprefix("pid ")))
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, lines.join()


def _kill_raylet_of(worker: int) -> None:
    """SIGKILL the raylet that started ``worker`` (its parent): the node dies, its workers with it."""
    raylet = int(Path(f"/proc/{worker}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[1])
    assert "raylet" in Path(f"/proc/{raylet}/cmdline").read_bytes().decode(errors="replace")
    os.kill(raylet, signal.SIGKILL)


def test_a_killed_ray_worker_is_submitted_again_one_task_in_flight(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    folder = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # short: Ray's socket paths
    real = start_ray(folder, ENV, ["--num-cpus", "2"], second=False)  # the last --num-cpus counts
    try:
        code, out = _ray_study_losing_a_try(
            tmp_path,
            real.address,
            [SMOLLM2, {**SMOLLM2, "name": "second"}],
            lambda pid: os.kill(pid, signal.SIGKILL),
            max_jobs=1,
        )
    finally:
        stop_ray(real)
        shutil.rmtree(folder, ignore_errors=True)
    assert code == 0, out
    first, second = "smollm2", "second"
    assert (
        f"{first}: lost on try 1 of 2 (its Ray worker was lost (WorkerCrashedError)); submitted again: "
        "try 2 of 2"
    ) in out, out
    assert len([x for x in out if x.startswith(f"{first}: started")]) == 2, out  # each try's start
    ends = [i for i, x in enumerate(out) if x.startswith(f"{first}: finished")]
    starts = [i for i, x in enumerate(out) if x.startswith(f"{second}: started")]
    assert len(ends) == len(starts) == 1 and ends[0] < starts[0], out  # max_jobs: 1, though 2 CPUs are free
    for name in (first, second):
        assert (tmp_path / "study" / "runs" / name / f"{name}_S1_results.json").is_file()


def test_a_ray_task_whose_node_dies_is_submitted_again_on_another(tmp_path: Path) -> None:
    """A head without CPUs and two raylets of one CPU: the raylet that runs the task is SIGKILLed
    (its node dies with it), the task goes out again and finishes on the other raylet."""
    pytest.importorskip("ray")
    from tests.study.real_ray import RAY, plain_sigint

    folder = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # short: Ray's socket paths
    real = start_ray(folder, ENV, ["--num-cpus", "0"], second=False)
    try:
        for _ in range(2):
            subprocess.run(
                [
                    RAY,
                    "start",
                    "--address",
                    real.address,
                    "--num-cpus",
                    "1",
                    "--object-store-memory",
                    str(80 * 2**20),
                    "--disable-usage-stats",
                ],
                env={**ENV, "RAY_AUTH_MODE": "disabled"},
                capture_output=True,
                timeout=300,
                check=True,
                preexec_fn=plain_sigint,
            )
        code, out = _ray_study_losing_a_try(tmp_path, real.address, [SMOLLM2], _kill_raylet_of)
    finally:
        stop_ray(real)
        shutil.rmtree(folder, ignore_errors=True)
    assert code == 0, out
    lost = [x for x in out if x.startswith("smollm2: lost on try 1 of 2 (its Ray worker was lost (")]
    assert len(lost) == 1, out
    # NodeDiedError in the runs here; WorkerCrashedError where the worker is seen gone first
    assert re.fullmatch(
        r".*\((NodeDiedError|WorkerCrashedError)\)\); submitted again: try 2 of 2", lost[0]
    ), lost
    assert len([x for x in out if x.startswith("smollm2: started")]) == 2, out
    assert (tmp_path / "study" / "runs" / "smollm2" / "smollm2_S1_results.json").is_file()
