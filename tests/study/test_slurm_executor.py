"""The Slurm executor's parts that need no controller: Slurm's text (``sinfo``, ``squeue``, times),
what a job asks for, and a job stopped by its time-limit signal.  The real controller runs in
``tests/study/test_slurm.py``."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytest.importorskip("submitit")

from enade_bench.errors import UserError
from enade_bench.study.executors import slurm_cluster as sc
from enade_bench.study.executors.settings import SlurmSettings
from enade_bench.study.executors.sizing import card_memory_gb
from enade_bench.study.executors.slurm import (
    JobRequest,
    check_request,
    in_job,
    jobs_folder,
    last_meaningful_line,
    why_failed,
)
from enade_bench.study.executors.slurm_request import job_request


@dataclass(frozen=True)
class _Task:
    label: str
    gpus: int
    gpu_optional: bool
    memory: int | None = None
    parameters: int | None = None
    tokens: int = 0
    weights_bytes: float | None = None
    gpu_options: list[tuple[str, int, bool]] = field(default_factory=list)

    def host_memory(self, gpus: int) -> int | None:
        return self.memory


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("30", 30),
        ("30:00", 30),
        ("1:30:00", 90),
        ("2-00:00:00", 2880),
        ("1-12", 2160),
        ("infinite", None),
        ("UNLIMITED", None),
    ],
)
def test_slurm_times_in_minutes(text: str, minutes: int | None) -> None:
    assert sc.minutes(text) == minutes


def test_partitions_take_each_partitions_best_node_and_its_smallest_card() -> None:
    text = (
        "gpu*|up|2-00:00:00|64|512000|gpu:a100:4(S:0-1)|(null)\n"
        "gpu*|up|2-00:00:00|32|256000|gpu:8(S:0-1)|a100_80g,ib\n"  # the card named by a feature
        "big|up|1:00:00|32|256000|gpu:h100:8(S:0-1),gpu:t4:1|h100\n"  # a gres type before a feature
        "cpu|up|infinite|128|1024000|(null)|(null)\n"
        "old|down|1:00:00|8|16000|(null)\n"
    )
    parts = sc.parse_partitions(text)
    assert parts["gpu"] == sc.Partition(
        "gpu", True, True, 2880, 64, 512000, 8, 40, "a100"
    )  # a job may land on either
    assert parts["big"].gpus == 9 and (parts["big"].gpu_memory_gb, parts["big"].gpu_card) == (16, "t4")
    assert parts["cpu"] == sc.Partition("cpu", False, True, None, 128, 1024000, 0)
    assert not parts["old"].up


@pytest.mark.parametrize(
    ("name", "gb"),
    [
        ("h100", 80),
        ("H100", 80),
        ("a100", 40),
        ("a100_80g", 80),
        ("A100-80G", 80),
        ("NVIDIA-A100-SXM4-80GB", 80),
        ("nvidia_h200", 141),
        ("l40s", 48),
        ("ib", None),
        ("tpu_v4", None),
    ],
)
def test_a_card_name_gives_its_memory(name: str, gb: float | None) -> None:
    assert card_memory_gb(name) == gb


def test_pending_reasons_that_never_clear() -> None:
    jobs = sc.parse_jobs(
        "7|PENDING|PartitionConfig||0:00|30:00\n8|PENDING|Resources||0:00|30:00\n"
        "9|PENDING|ReqNodeNotAvail, UnavailableNodes:n1||0:00|30:00\n"
    )
    assert [j.never_clears for j in jobs.values()] == [True, False, True]


CPU = sc.Partition("cpu", True, True, 60, 4, 8000, 0)
GPU = sc.Partition("gpu", False, True, 60, 16, 64000, 4)


def test_gpus_follow_where_the_model_runs() -> None:
    settings = SlurmSettings(type="slurm", time=30, cpus_per_task=2)
    auto, cpu, tp2 = _Task("auto", 1, True), _Task("cpu", 0, False), _Task("tp2", 2, False)
    assert check_request(settings, CPU, [auto, cpu]) == {"auto": 0, "cpu": 0}  # a CPU partition: no GPU asked
    assert check_request(settings, GPU, [auto, cpu, tp2]) == {"auto": 1, "cpu": 0, "tp2": 2}
    with pytest.raises(
        UserError, match=r"model tp2: asks for 2 GPU\(s\) per job, but the nodes of partition 'cpu' have none"
    ):
        check_request(settings, CPU, [tp2])
    request = JobRequest("enade-bench-cpu", 30, 2, 0, None, "cpu", None, ())
    assert "gpus_per_node" not in request.submitit("slurm")  # no --gpus-per-node=0 for a CPU partition's gres


def _sbatch(request: JobRequest, folder: Path) -> dict[str, str]:
    """The ``#SBATCH`` lines submitit writes for ``request`` (its own script, nothing submitted)."""
    import submitit

    executor = submitit.AutoExecutor(folder=folder, cluster="slurm")
    executor.update_parameters(**request.submitit("slurm"))
    text = executor._executor._make_submission_file_text("python -m task", "uid")  # type: ignore[attr-defined]
    lines = [
        x.removeprefix("#SBATCH --").split("=", 1) for x in text.splitlines() if x.startswith("#SBATCH --")
    ]
    return {x[0]: x[1] if len(x) == 2 else "" for x in lines}


def test_each_job_asks_for_the_time_cpus_and_memory_of_its_task_unless_set(tmp_path: Path) -> None:
    """Two tasks of different sizes: a 135M model on the CPU and a 70B one on 2 GPUs, in the
    sbatch script submitit writes (the formula of :mod:`enade_bench.study.executors.sizing`)."""
    from enade_bench.study.executors import sizing

    small = _Task("small", 0, False, memory=2 * 2**30 + 1, parameters=135 * 10**6, tokens=20_000)
    big = _Task("big", 2, False, memory=2 * 2**30, parameters=70 * 10**9, tokens=200_000)
    settings = SlurmSettings(type="slurm", threads=3)
    a, b = (_sbatch(job_request(settings, GPU, t, t.gpus), tmp_path) for t in (small, big))
    small_s = 2 * (60 + 135e6 * 4 / sizing.LOAD_BYTES_PER_S + 2 * 135e6 * 20_000 / (3 * sizing.CPU_FLOPS))
    assert (a["time"], a["cpus-per-task"], a["mem"]) == (str(max(10, -(-small_s // 60))), "3", "2560MB"), a
    assert "gpus-per-node" not in a and b["gpus-per-node"] == "2"
    big_s = 2 * (60 + 70e9 * 2 / sizing.LOAD_BYTES_PER_S + 2 * 70e9 * 200_000 / (2 * sizing.GPU_FLOPS))
    assert big_s / 60 > 60 and b["time"] == "60", b  # the estimate, within the partition's 60 min
    assert (b["cpus-per-task"], b["mem"]) == ("4", "2GB"), b  # 2 CPUs per GPU; the weights are on the GPUs
    fixed = SlurmSettings(type="slurm", time=30, cpus_per_task=2, mem_gb=8)  # set in the block: as set
    assert job_request(fixed, GPU, big, 2) == JobRequest("enade-bench-big", 30, 2, 2, 8, None, None, ())
    unknown = job_request(settings, None, _Task("api", 0, False, memory=0), 0)  # no size: the default limit
    assert (unknown.minutes, unknown.mem_gb) == (sizing.DEFAULT_MINUTES, 1)  # never --mem=0 (all of a node)
    with pytest.raises(
        UserError,
        match=r"^model huge: needs about 300 GB of host memory, but the nodes of "
        r"partition 'gpu' have at most 62.5 GB; ",
    ):
        job_request(settings, GPU, _Task("huge", 0, False, memory=300 * 2**30, parameters=10**9), 0)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"time": 61}, "executor.time: 61 min, but partition 'cpu' allows at most 60 min"),
        (
            {"cpus_per_task": 5},
            "executor.cpus_per_task: 5, but the nodes of partition 'cpu' have at most 4 CPUs",
        ),
        ({"mem_gb": 8}, "executor.mem_gb: 8, but the nodes of partition 'cpu' have at most 7.8 GB"),
    ],
)
def test_a_request_beyond_the_partition_is_one_line(change: dict[str, object], expected: str) -> None:
    with pytest.raises(UserError) as caught:
        check_request(
            SlurmSettings.model_validate({"type": "slurm", "time": 30, **change}), CPU, [_Task("m", 0, False)]
        )
    assert str(caught.value) == expected


def _signalled(task: str) -> str:
    os.kill(os.getpid(), signal.SIGUSR2)  # what submitit's --signal=USR2@T sends near the limit
    return "not reached"


def test_the_time_limit_signal_stops_the_task_and_names_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    monkeypatch.setenv("SLURMD_NODENAME", "gpu07")
    previous = signal.getsignal(signal.SIGUSR2)
    try:
        out = in_job(_signalled, lambda task, why: f"{task}: {why}", "smollm2", 240)
    finally:
        signal.signal(signal.SIGUSR2, previous)
    assert out.startswith(
        "smollm2: job 42 hit its time limit (240 min) on node gpu07 after 0 s of its 240 min"
    ), out


def test_a_signal_before_the_task_started_is_the_time_limit_too() -> None:
    """submitit's own USR2 handler (before :func:`in_job` set its own) raises this; it is the limit."""
    running = sc.JobInfo("7", "RUNNING", "None", "node1", "0:20", "1:00")
    error = "Traceback (most recent call last):\nsubmitit.core.utils.UncompletedJobError: Job not requeued because: timed-out and not checkpointable."
    assert (
        why_failed("7", error, running, 1)
        == "job 7 hit its time limit (1 min) on node node1 before its task started"
    )
    assert why_failed("7", "Traceback …\nValueError: bad", running, 1) == "job 7 failed: ValueError: bad"


def test_jobs_are_not_requeued_after_a_node_failure() -> None:
    """Slurm's default (``JobRequeue=1``) would requeue the job, and the study would wait for the node."""
    request = JobRequest("enade-bench-m", 60, 1, 0, None, None, None, ())
    assert request.submitit("slurm")["slurm_additional_parameters"] == {"no-requeue": True}


def test_submitits_files_go_outside_the_results_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENADE_BENCH_CACHE", str(tmp_path / "cache"))
    output = tmp_path / "results" / "study"
    folder = jobs_folder(SlurmSettings(type="slurm"), output)
    assert folder.parent == tmp_path / "cache" / "slurm" and folder.name.startswith("study-")
    assert output not in folder.parents
    assert jobs_folder(SlurmSettings(type="slurm", jobs=str(tmp_path / "j")), output) == tmp_path / "j"


def test_times_read_in_the_jobs_own_terms() -> None:
    assert [sc.seconds(x) for x in ("0:25", "1:02", "01:00:05", "1-00:00:00")] == [25, 62, 3605, 86400]
    assert [sc.duration(x) for x in (25, 62, 3605)] == ["25 s", "1 min 02 s", "1 h 00 min"]


def test_the_last_meaningful_line_is_the_tasks_own_not_submitit_or_srun() -> None:
    log = (
        "loading model\nanswered 12 of 30\n"
        "submitit INFO (2026-12-06 00:40:01,123) - Job completed successfully\n"
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
        "slurmstepd: error: *** STEP 9.0 ON node1 CANCELLED AT 2026-12-06T00:40:02 ***\n"
        "slurmstepd-node1: error: *** STEP 6.0 ON node1 CANCELLED AT 2026-12-06T00:40:02 ***\n"
        "srun: error: node1: task 0: Terminated\n"
    )
    assert last_meaningful_line(log) == "answered 12 of 30"
    assert last_meaningful_line("submitit INFO (x) - Starting with JobEnvironment\n") is None


def test_max_jobs_caps_the_tasks_in_flight() -> None:
    from enade_bench.study.executors.base import to_submit

    assert to_submit(0, 0, 5, None) == 5  # no cap: every task at once
    assert to_submit(0, 0, 5, 2) == 2
    assert to_submit(2, 0, 5, 2) == 0  # two in flight: wait
    assert to_submit(2, 1, 5, 2) == 1  # one ended: the next goes out
    assert to_submit(5, 4, 5, 2) == 0  # none left to submit
