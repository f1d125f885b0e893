"""The ``ray`` executor: each task a Ray task that asks for the GPUs its model needs.

``ray.init(address=...)`` joins a running cluster (``address: auto`` or ``HOST:PORT``;
``ray start --head`` / ``ray start --address``), without an address a cluster starts on
this machine.  Each task is ``ray.remote(run).options(num_gpus=..., num_cpus=...)``; Ray
sets its ``CUDA_VISIBLE_DEVICES``, so 8 GPUs run 8 one-GPU models at once and a model with
``tensor_parallel_size: 4`` waits for 4 free GPUs.  Ray's queue keeps no order, so the driver
sends each task, longest first, only once the cluster has room for it (its GPUs, CPUs and
memory among those its running tasks leave; a later task goes first only where the earlier
cannot start yet), as Slurm starts its jobs.  Ray does not retry a task itself
(``max_retries=0``): one whose worker or node is lost (:data:`LOST`: not its own error, not
Ray's out-of-memory kill) is submitted again by the driver with ``retries: N``, each try
named; else the study names it and the same command resumes it.  The memory of each GPU is
``gpu_memory_gb``, else read from the nodes' ``accelerator_type:NAME`` resources.
Ctrl-C cancels the tasks (``ray.cancel``: a ``KeyboardInterrupt`` in each, so its run
locks are removed) and re-raises.  A task still running :data:`CANCEL_REPEAT_S` later is
cancelled again, since an interrupt can be lost: it is raised wherever the task's Python runs
at that moment, and one that comes while a finaliser runs (``__del__``, a weakref callback) is
printed and dropped.  A worker that inherited SIGINT ignored and blocked from the process
that ran ``ray start`` gets no interrupt at all.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc
import ray
from ray._private.services import canonicalize_bootstrap_address
from ray.core.generated import gcs_service_pb2, gcs_service_pb2_grpc
from ray.exceptions import (
    LocalRayletDiedError,
    NodeDiedError,
    ObjectLostError,
    RayError,
    RayTaskError,
    WorkerCrashedError,
)

from enade_bench.errors import UserError
from enade_bench.study.executors.base import (
    R,
    T,
    Task,
    Work,
    check_gpu_memory,
    last_try,
    retry_line,
)
from enade_bench.study.executors.settings import RaySettings
from enade_bench.study.executors.sizing import smallest_card

#: Seconds to reach a cluster's address, and again for its GCS to answer (Ray itself retries for minutes).
CONNECT_TIMEOUT_S = 4.0
#: Seconds a cancelled task is given to clean up (remove its locks) before the driver leaves.
CANCEL_GRACE_S = 30.0
#: Seconds after which a cancelled task still running is cancelled again (its interrupt lost).
CANCEL_REPEAT_S = 10.0
#: A task lost with its worker process or its node (its result with it): submitted again with ``retries``.
LOST = (WorkerCrashedError, NodeDiedError, LocalRayletDiedError, ObjectLostError)


def _check_reachable(address: str) -> None:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UserError(f"executor.address: expected 'auto' or HOST:PORT, got {address!r}")
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise UserError(
            f"executor.address: no Ray cluster answers at {address} ({exc.strerror or exc}); "
            "start one with `ray start --head` or fix the address"
        ) from None


def _check_gcs(address: str) -> None:
    """``address`` is a Ray cluster's GCS: it answers ``GetClusterId`` (gRPC) within the timeout.

    A server that is not Ray (HTTP, SSH, another gRPC service) is one ``error:`` line here,
    before ``ray.init``, whose own retries take half a minute and log each try.  A GCS that
    asks for a token (``RAY_AUTH_MODE=token``) is Ray: ``ray.init`` brings the token.
    """

    with grpc.insecure_channel(address) as channel:
        stub = gcs_service_pb2_grpc.NodeInfoGcsServiceStub(channel)
        try:
            stub.GetClusterId(gcs_service_pb2.GetClusterIdRequest(), timeout=CONNECT_TIMEOUT_S)  # type: ignore[attr-defined]
        except grpc.RpcError as exc:
            code = exc.code()
            if code == grpc.StatusCode.UNAUTHENTICATED:
                return
            raise UserError(
                f"executor.address: {address} answers, but not as a Ray cluster "
                f"({getattr(code, 'name', code)} from its GCS); give the head node's GCS "
                "address (`ray start --head` prints it; default port 6379)"
            ) from None


def _resolve(address: str) -> str:
    """``auto``: the cluster ``ray start`` left its address for on this machine (one line if none)."""
    if address != "auto":
        return address

    try:
        found = canonicalize_bootstrap_address("auto")
    except (ConnectionError, ValueError):
        found = None
    if found is None:
        raise UserError(
            "executor.address: auto, but no Ray cluster runs on this machine; start one with "
            "`ray start --head`, or give HOST:PORT"
        )
    return found


def plain_log_prefix() -> None:
    """Ray's prefix of its workers' lines (``(run pid=…)``) without colour codes where stderr is
    no terminal (a log file, a pipeline); ``RAY_COLOR_PREFIX`` set by the user is kept."""
    if not sys.stderr.isatty():
        os.environ.setdefault("RAY_COLOR_PREFIX", "0")


def _call(run: Callable[[T], R], task: T) -> R:
    """What a Ray worker runs: ``run(task)`` (Ray takes functions, not ``functools.partial``)."""
    return run(task)


def _cancel(refs: list[Any]) -> None:
    """Cancel the tasks of ``refs`` and wait up to :data:`CANCEL_GRACE_S` for them to end,
    cancelling those still running again every :data:`CANCEL_REPEAT_S` (module docstring)."""
    deadline = time.monotonic() + CANCEL_GRACE_S
    while refs:
        for ref in refs:
            ray.cancel(ref)  # force=False: KeyboardInterrupt inside the task, its finally blocks run
        wait = min(CANCEL_REPEAT_S, deadline - time.monotonic())
        if wait <= 0:
            return
        _, refs = ray.wait(refs, num_returns=len(refs), timeout=wait)


class RayExecutor:
    """Tasks on a Ray cluster (joined or started here)."""

    name = "ray"

    def __init__(self, settings: RaySettings) -> None:
        self.settings = settings
        self._connected = False
        self._gpus: dict[str, float] = {}
        self._memory: dict[str, int] = {}

    def _connect(self) -> None:
        s = self.settings
        plain_log_prefix()
        address = s.address
        if address is not None:  # anything but a Ray cluster: one line within seconds, before ray.init
            address = _resolve(address)
            _check_reachable(address.removeprefix("ray://"))
            if not address.startswith("ray://"):  # Ray Client speaks another protocol
                _check_gcs(address)
        if ray.is_initialized():  # this process already joined a cluster (a notebook, the tests)
            return
        if address is not None:
            try:  # close() disconnects; the cluster stays
                ray.init(
                    address=address,
                    include_dashboard=False,
                    logging_level=logging.WARNING,
                    configure_logging=False,
                )
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise UserError(
                    f"executor.address: cannot join the Ray cluster at {s.address!r} "
                    f"({str(exc).splitlines()[0]})"
                ) from None
        else:
            ray.init(
                num_cpus=s.num_cpus,
                object_store_memory=s.object_store_mb * 2**20,
                include_dashboard=False,
                logging_level=logging.WARNING,
                configure_logging=False,
            )
        self._connected = True

    def check(self, tasks: Sequence[Task]) -> None:
        """Join or start the cluster; each task's GPUs must exist there (one ``error:`` line if not)."""
        self._connect()
        resources = ray.cluster_resources()
        cpus, alive = float(resources.get("CPU", 0)), [n["Resources"] for n in ray.nodes() if n.get("Alive")]
        have = max((float(r.get("GPU", 0)) for r in alive), default=0.0)  # a task runs on one node
        if self.settings.cpus_per_model > cpus:
            raise UserError(
                f"executor.cpus_per_model: {self.settings.cpus_per_model} CPUs per model, "
                f"but the Ray cluster has {cpus:g}"
            )
        for task in tasks:
            explicit = self.settings.gpus_per_model
            need = float(explicit if explicit is not None else task.gpus)
            if have == 0 and explicit is None and task.gpu_optional:
                need = 0  # a CPU-only cluster: a device: auto model runs on the CPU (as on Slurm)
            if need > have:
                where = "executor.gpus_per_model" if explicit is not None else f"model {task.label}"
                fix = (
                    "join a cluster with GPUs, or set the model's device: cpu (or auto)"
                    if have == 0
                    else "add a node with more GPUs, or lower tensor_parallel_size"
                )
                raise UserError(
                    f"{where}: asks for {need:g} GPU(s) per model, but the Ray cluster has "
                    f"{'none' if have == 0 else f'at most {have:g} on a node'}; {fix}"
                )
            self._gpus[task.label] = need
        card = smallest_card([k.split(":", 1)[1] for k in resources if k.startswith("accelerator_type:")])
        # the executor's gpu_memory_gb, else the cluster's smallest card, as its nodes declare it
        cluster = None if card is None else (card[0], f"the Ray cluster's {card[1]} GPUs, accelerator_type")
        check_gpu_memory(tasks, self._gpus, self.settings.gpu_memory_gb, cluster, have)
        self._check_memory(tasks)

    def _check_memory(self, tasks: Sequence[Task]) -> None:
        """Each task's memory reservation; one that no node holds is one error line."""
        explicit = self.settings.memory_per_model_gb
        largest = max(
            (float(n["Resources"].get("memory", 0)) for n in ray.nodes() if n.get("Alive")), default=0.0
        )
        for task in tasks:
            own = task.host_memory(math.ceil(self._gpus.get(task.label, 0)))
            need = int(explicit * 2**30) if explicit is not None else (own or 0)
            if need > largest:
                if explicit is not None:  # the value set, named as set; the fix is another value
                    head, fix = f"executor.memory_per_model_gb: {explicit:g} GB per model", "lower it"
                else:
                    head = f"model {task.label}: needs {need / 2**30:.1f} GB of memory (weights × dtype plus room)"
                    fix = "set executor.memory_per_model_gb"
                raise UserError(
                    f"{head}, but the largest node of the Ray cluster offers {largest / 2**30:.1f} GB; "
                    f"add a larger node, or {fix}"
                )
            self._memory[task.label] = need

    def describe(self, task: Task) -> str:
        """The task's Ray resources, on the cluster :meth:`check` joined."""
        where = self.settings.address or "a Ray cluster started here"
        memory = self._memory.get(task.label)
        reserved = f"memory={memory / 2**30:.1f} GB" if memory else "memory not known (none reserved)"
        return (
            f"a Ray task: num_gpus={self._gpus.get(task.label, 0):g}, "
            f"num_cpus={self.settings.cpus_per_model:g}, {reserved}, on {where}"
        )

    def slots(self, tasks: Sequence[Task]) -> int | None:
        """The most of ``tasks`` the cluster runs at once: its CPUs over each task's, and its GPUs
        over the narrowest GPU task's where every task asks for GPUs (an upper bound, so that
        a model's tasks share a load only where no slot idles for it)."""
        total = ray.cluster_resources()
        by_cpu = int(float(total.get("CPU", 0)) // self.settings.cpus_per_model)
        widths = [self._gpus.get(t.label, 0) for t in tasks]
        if not widths or min(widths) == 0:
            return max(1, by_cpu)
        return max(1, min(by_cpu, int(float(total.get("GPU", 0)) // min(widths))))

    def run(self, tasks: Sequence[T], work: Work[T, R]) -> list[R]:
        remote: Any = ray.remote(_call)
        refs: dict[Any, int] = {}
        out: dict[int, R] = {}
        pending: list[Any] = []
        tries, retries = [1] * len(tasks), self.settings.retries

        def submit(i: int) -> None:
            t = tasks[i]
            ref = remote.options(
                num_gpus=self._gpus.get(t.label, 0),
                num_cpus=self.settings.cpus_per_model,
                memory=self._memory.get(t.label) or None,
                max_retries=0,
                name=f"enade-bench:{t.label}",
            ).remote(work.run, t)
            refs[ref] = i
            pending.append(ref)

        sent: set[int] = set()  # tasks sent (a retry sends one again: it is still the same task in flight)
        total = ray.cluster_resources()
        free = {k: float(total.get(k, 0)) for k in ("GPU", "CPU", "memory")}

        def needs(i: int) -> dict[str, float]:
            label = tasks[i].label
            gpus, memory = self._gpus.get(label, 0), float(self._memory.get(label) or 0)
            return {"GPU": gpus, "CPU": self.settings.cpus_per_model, "memory": memory}

        def top_up() -> None:
            """The tasks in order, each as the cluster has room for it (Ray's own queue keeps no
            order): longest first, a later one only where the earlier cannot start yet."""
            for i in range(len(tasks)):
                flying = len(sent) - len(out)
                if self.settings.max_jobs is not None and flying >= self.settings.max_jobs:
                    return
                if i in sent or (flying and any(v > free[k] + 1e-9 for k, v in needs(i).items())):
                    continue
                for k, v in needs(i).items():
                    free[k] -= v
                sent.add(i)
                submit(i)

        top_up()
        try:
            while pending:
                ready, pending[:] = ray.wait(pending, num_returns=1)
                for ref in ready:
                    i = refs[ref]
                    try:
                        outcome = ray.get(ref)
                    except RayTaskError as exc:  # an error the task itself raised
                        outcome = work.lost(tasks[i], f"{type(exc.cause).__name__}: {exc.cause}")
                    except RayError as exc:  # worker killed, node lost, out of memory
                        why = f"its Ray worker was lost ({type(exc).__name__})"
                        if isinstance(exc, LOST) and tries[i] <= retries:
                            work.retried(tasks[i], retry_line(why, tries[i], retries))
                            tries[i] += 1
                            submit(i)
                            continue
                        outcome = work.lost(tasks[i], last_try(why, tries[i], retries))
                    out[i] = outcome
                    for k, v in needs(i).items():
                        free[k] += v
                    work.done(outcome)
                top_up()
        except KeyboardInterrupt:
            _cancel(pending)
            raise
        return [out[i] for i in range(len(tasks))]

    def close(self) -> None:
        if self._connected and ray.is_initialized():
            ray.shutdown()
