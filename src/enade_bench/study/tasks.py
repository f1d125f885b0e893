"""The unit of work of a study: one model with its runs on one exam (:class:`ModelTask`), and how it runs.

Both studies plan the same tasks (:mod:`enade_bench.study.planner`: one per model × exam; an
ENEM exam is an area × language) and hand them to an executor (:mod:`enade_bench.study.executors`): in this
process, as Ray tasks, or as Slurm jobs.  :func:`run_task` is what runs where the task lands:
it checks that the study folder is visible there, loads the model once, runs or resumes every
run (the runner's append-only logs skip each answered question), and releases the model
(:func:`release`) whatever happened.  A model that fails is an outcome with an ``error``, not
an exception: the other tasks go on.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import shutil
import socket
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Protocol

import yaml

from enade_bench.backends.base import Backend
from enade_bench.backends.factory import check_capabilities
from enade_bench.config import ExperimentConfig
from enade_bench.environ import environ_set
from enade_bench.errors import UserError
from enade_bench.results.records import QuestionRecord
from enade_bench.results.safe_write import output_root, real_folder
from enade_bench.results.shared_paths import shared_values
from enade_bench.results.store import IntermediateLog, atomic_write_text
from enade_bench.runner.batch_probe import peak_workload
from enade_bench.runner.outputs import RunOutcome
from enade_bench.runner.plan import Experiment, RunOptions
from enade_bench.runner.retry import split_logged
from enade_bench.runner.work import with_current_fields, with_current_key
from enade_bench.runner.write import log_key
from enade_bench.study.memory import gpu_options, model_memory, parameters, stored_bytes

#: Characters per token where no tokenizer is read (as the dry-run's estimate for API models).
CHARS_PER_TOKEN = 4
#: Loads a model from its experiment config (:func:`enade_bench.study.execute.load_model`).
BackendFactory = Callable[[ExperimentConfig], Backend]


class RunsExperiments(Protocol):
    """What runs a prepared experiment once its model is loaded: the run's benchmark
    (:class:`~enade_bench.benchmarks.base.Benchmark`'s ``run``)."""

    def run(self, exp: Experiment, options: RunOptions) -> RunOutcome:
        """Run (or resume) ``exp``; its results and files."""
        ...


@dataclass(frozen=True)
class TaskRun:
    """One run of a task's model: its prepared experiment and where it is written."""

    config: ExperimentConfig
    config_path: Path
    experiment: Experiment
    options: RunOptions
    benchmark: RunsExperiments
    description: str
    #: Where the run is one shard of a whole run (:mod:`enade_bench.study.shards`).
    shard: Shard | None = None

    @property
    def planned(self) -> int:
        """Work items of the run (question × shuffle × strategy), as planned before the model loads."""
        return sum(len(p.items) for p in self.experiment.plans)

    @property
    def logs(self) -> list[Path]:
        """The runner's append-only logs of this run (one per strategy)."""
        return [p.paths.intermediate for p in self.experiment.plans]


@dataclass(frozen=True)
class Shard:
    """A run's place as one of ``siblings``, the shards of ``whole``."""

    whole: TaskRun
    siblings: tuple[TaskRun, ...]


def shards_folder(run: TaskRun) -> Path:
    """The folder of every shard of ``run``: beside its run folder, ``<folder>.shards``."""
    out = run.experiment.output_dir
    return out.with_name(out.name + ".shards")


def merged(shard: Shard, loaded: Experiment, runs: RunsExperiments) -> list[Path]:
    """The whole run of ``shard`` written from its shards' logs once every shard is finished (else nothing).

    ``loaded``: the shard's experiment with its model loaded (the whole run takes its model and
    resolved ``batch_size``).  Each shard's log must be keyed as the whole run is (its config,
    strategy, prompts and model identity: a shard of another config or model is refused in one
    line); their records, in the whole run's order, become its log, and the whole run resumes from
    it: nothing is asked again, and its files are those of the run unsplit (timings aside).  The
    shards' folder is removed then.  Another process merging it (the run's lock held) leaves it to that one.
    """
    whole = shard.whole
    if not all(finished(s) for s in shard.siblings):
        return []
    config = whole.experiment.config.model_copy(update={"evaluation": loaded.config.evaluation})
    exp = dataclasses.replace(whole.experiment, backend=loaded.backend, config=config)
    with ExitStack() as stack:
        try:
            stack.enter_context(exp.lock())
        except UserError:
            return []  # the job of another shard merges it now
        written = [] if finished(whole) else _merge(shard, exp, runs)
    shutil.rmtree(shards_folder(whole), ignore_errors=True)
    return written


def _merge(shard: Shard, exp: Experiment, runs: RunsExperiments) -> list[Path]:
    """:func:`merged`'s work, under the whole run's lock."""
    for plan in exp.plans:
        key, found = log_key(exp, plan.strategy), dict[tuple[str, int], QuestionRecord]()
        for sibling in shard.siblings:
            (part,) = (p for p in sibling.experiment.plans if p.strategy.id == plan.strategy.id)
            found |= IntermediateLog(part.paths.intermediate, key).load(write=False)
        IntermediateLog(plan.paths.intermediate, key).write_all([found[i.key] for i in plan.items])
    return runs.run(exp, shard.whole.options).written


def tokens(run: TaskRun) -> int:
    """Estimated tokens a run processes: each item's question and options, and its answer."""
    ev = run.config.evaluation
    answer = ev.max_new_tokens if ev.method == "generation" else 1
    total = 0
    for plan in run.experiment.plans:
        out = ev.cot_max_new_tokens if plan.strategy.chain_of_thought else answer
        for item in plan.items:
            chars = len(item.question.stem) + sum(len(o) for o in item.question.options)
            total += -(-chars // CHARS_PER_TOKEN) + out
    return total


def finished(run: TaskRun) -> bool:
    """Whether every strategy of ``run`` is finished, read from its files without the model.

    Finished: its results file was written after its log's last line, and the log (with the
    settings known without the model, :func:`~enade_bench.runner.write.log_key`) holds every
    planned item answered, none to ask again and none re-scored against a changed answer key.
    Anything else, or a log the run would refuse, is not finished: the run loads its model.
    """
    exp = run.experiment
    if not exp.config.output.save_intermediate or not exp.plans:
        return False
    for plan in exp.plans:
        results, path = plan.paths.results, plan.paths.intermediate
        if not results.is_file() or not path.is_file() or results.stat().st_mtime < path.stat().st_mtime:
            return False
        try:
            raw = with_current_fields(
                IntermediateLog(path, log_key(exp, plan.strategy, with_model=False)).load(write=False),
                exp.questions,
            )
            logged = with_current_key(raw, exp.questions, path)
        except UserError:
            return False
        keys = {item.key for item in plan.items}
        done, again = split_logged({k: r for k, r in logged.items() if k in keys})
        if again or len(done) < len(keys) or any(r.answer != raw[k].answer for k, r in done.items()):
            return False
    return True


@dataclass(frozen=True)
class ModelTask:
    """One model of a study with its runs on one exam (``local``: on all, :func:`~enade_bench.study.planner.by_model`);
    ``output`` is the study folder."""

    label: str
    runs: tuple[TaskRun, ...]
    output: Path
    #: The study's model this task runs (``None``: the label; a task of one model × exam has its own label).
    model: str | None = None
    #: The exam of a task of one model × exam (``""``: every run of the model, or the study's one dataset).
    exam: str = ""

    @property
    def gpus(self) -> int:
        """GPUs the model asks for on a GPU node: a vLLM model its ``tensor_parallel_size`` (a
        study refuses ``data_parallel_size`` > 1: one copy per task), another local model 1 (0
        with ``device: cpu``), an API 0."""
        model = self.runs[0].config.model
        if model.type == "vllm":
            vllm = model.vllm
            return 1 if vllm is None else vllm.tensor_parallel_size
        if model.type == "api" or model.device == "cpu":
            return 0
        return 1

    @cached_property
    def memory(self) -> int | None:
        """Host memory (bytes) the model needs (:func:`~enade_bench.study.memory.model_memory`:
        weights × dtype plus room); ``None`` where its size cannot be known before it loads."""
        return model_memory(self.runs[0].config.model)

    def host_memory(self, gpus: int) -> int | None:
        """Host memory (bytes) the task needs where it is given ``gpus`` GPUs: :attr:`memory`, but
        the process only (not the weights) for a model whose weights go to those GPUs."""
        if gpus > 0:
            return model_memory(self.runs[0].config.model, gpus=True)
        return self.memory

    @cached_property
    def gpu_options(self) -> list[tuple[str, int, bool]]:
        """The bytes the model needs on its GPUs, as it is and with each lighter setting
        (:func:`~enade_bench.study.memory.gpu_options`)."""
        return gpu_options(self.runs[0].config.model)

    @cached_property
    def parameters(self) -> int | None:
        """The model's parameters, read from its weights' headers (``None``: an API model, or unknown here)."""
        model = self.runs[0].config.model
        return None if model.type == "api" else parameters(model)

    @cached_property
    def weights_bytes(self) -> float | None:
        """Bytes read as the model loads (:func:`~enade_bench.study.memory.stored_bytes`; ``None``: unknown)."""
        count = self.parameters
        return None if count is None else stored_bytes(self.runs[0].config.model, count)

    @cached_property
    def tokens(self) -> int:
        """Estimated tokens of every run of the task (:func:`tokens`: questions, options, answers)."""
        return sum(tokens(r) for r in self.runs)

    @property
    def gpu_optional(self) -> bool:
        """Whether the model runs on the CPU where no GPU is offered (a local model with
        ``device: auto``); ``device: cuda`` and vLLM need their GPUs."""
        model = self.runs[0].config.model
        return model.type not in {"vllm", "api"} and model.device == "auto"

    @property
    def planned(self) -> int:
        """Work items of every run of the model."""
        return sum(r.planned for r in self.runs)

    def unfinished(self) -> ModelTask | None:
        """This task with only its runs not :func:`finished` (``None``: every run is)."""
        left = tuple(r for r in self.runs if not finished(r))
        if not left:
            return None
        return self if len(left) == len(self.runs) else dataclasses.replace(self, runs=left)


@dataclass
class TaskOutcome:
    """How one task ended, and where it ran."""

    label: str
    written: list[Path] = field(default_factory=list)
    error: str | None = None
    worker: str = ""
    node: str = ""
    device: str = ""
    seconds: float = 0.0

    @property
    def where(self) -> str:
        """``worker PID on node, device`` for the progress lines."""
        return f"worker {self.worker} on {self.node}, {self.device}"


def where_am_i(gpus: int = 1) -> tuple[str, str, str]:
    """This process's worker id, node (Slurm's name for it in a job, as Slurm's messages name
    it; else the host name) and device: the GPUs it may see for a task that asks for
    ``gpus`` > 0, else the CPU (a CPU model on a GPU node is not shown on a GPU)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    device = f"GPU {visible}" if gpus > 0 and visible not in {"", "-1"} else "CPU"
    return f"pid {os.getpid()}", os.environ.get("SLURMD_NODENAME") or socket.gethostname(), device


def release(backend: object | None) -> None:
    """Free a model: close it (vLLM: its engine shuts down), collect it, empty the CUDA cache."""
    close = getattr(backend, "close", None)
    if callable(close):
        close()
    del backend
    gc.collect()
    torch = sys.modules.get("torch")  # loaded by the backend if it needed it; never imported here
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


def started_file(task: ModelTask) -> Path:
    """The file a worker writes as it starts a task (the driver prints the start line from it)."""
    return task.output / ".study" / f"{task.label}.started"


#: The variables that size the CPU thread pools of the libraries not yet loaded.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@contextmanager
def task_threads(threads: int | None) -> Iterator[Callable[[], None]]:
    """Compute with ``threads`` intra-op CPU threads for the task, then restore this process's.

    Yields ``apply``: call it after the model loads (torch may have been imported by it).
    ``None``: leave the process as it is.
    """
    if threads is None:
        yield lambda: None
        return
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None

    def apply() -> None:
        loaded = sys.modules.get("torch")
        if loaded is not None and loaded.get_num_threads() != threads:
            loaded.set_num_threads(threads)

    with environ_set({name: str(threads) for name in THREAD_VARIABLES}):
        apply()
        try:
            yield apply
        finally:
            loaded = sys.modules.get("torch")
            if loaded is not None and before is not None:
                loaded.set_num_threads(before)


def run_task(
    task: ModelTask,
    factory: BackendFactory,
    log: Callable[[str], None] | None = None,
    threads: int | None = None,
) -> TaskOutcome:
    """Run or resume every run of ``task`` with its model loaded once; release it after.

    ``threads``: torch's intra-op CPU threads while the task runs (the executor's
    ``threads``; recorded in each results file).  Returns the outcome; a failure to load or
    run is its ``error`` (``KeyboardInterrupt`` propagates, after the model is released and
    the run locks are removed).
    """
    with task_threads(threads) as apply:
        return _run_task(task, factory, log, apply)


def _run_task(
    task: ModelTask, factory: BackendFactory, log: Callable[[str], None] | None, apply: Callable[[], None]
) -> TaskOutcome:
    worker, node, device = where_am_i(task.gpus)
    outcome = TaskOutcome(task.label, worker=worker, node=node, device=device)
    start = time.perf_counter()
    if not task.output.is_dir():
        outcome.error = (
            f"the study folder {task.output} is not visible on node {node}; "
            "put it on a filesystem every node shares"
        )
        return outcome
    backend: Backend | None = None
    try:
        with output_root(task.output):  # in every worker: never through a linked folder of the study
            atomic_write_text(started_file(task), f"{worker}\t{node}\t{device}\n")
            for run in [*task.runs, *(r.shard.whole for r in task.runs if r.shard)]:  # a shard's whole too
                real_folder(run.config_path.parent, task.output, run.config_path)
                config = shared_values(
                    run.config.public_dict(), run.config_path.parent
                )  # paths from its folder
                atomic_write_text(
                    run.config_path, yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
                )
            backend = factory(task.runs[0].config)
            apply()  # the model may have brought torch in
            for run in task.runs:
                check_capabilities(backend, {s.method for s in run.experiment.strategies}, [run.config.name])
                if log is not None:
                    log(run.description)
                loaded = run.experiment.with_backend(backend, peak_workload)
                outcome.written += run.benchmark.run(loaded, run.options).written
                if run.shard is not None:
                    outcome.written += merged(run.shard, loaded, run.benchmark)
    except UserError as exc:
        outcome.error = str(exc)
    except Exception as exc:  # noqa: BLE001 - one model's failure is reported, the others run
        outcome.error = f"{type(exc).__name__}: {exc}"
    finally:
        release(backend)
        del backend
    outcome.seconds = time.perf_counter() - start
    return outcome
