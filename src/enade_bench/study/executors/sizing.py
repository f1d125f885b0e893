"""What a task asks of a cluster when the ``executor:`` block does not say: the memory of each
GPU (from the card's name), and a Slurm job's time, CPUs and memory (from the task's estimate).

GPU memory.  Slurm names a node's cards in its generic resources (``gpu:h100:8``) or its
features (``h100``, ``a100_80g``); Ray in a node's ``accelerator_type:H100`` resource.  The
name is read through :data:`CARD_MEMORY_GB`, the memory of each card as its maker sells it
(NVIDIA's and AMD's data sheets); a size in the name (``a100_80g``, ``A100-80G``) wins over the
table.  Where a card has two sizes (A100, V100) the table holds the smaller, so a model
is never sent to a card that cannot hold it.  An unknown name is no size (the check is
skipped, as without ``gpu_memory_gb``).

Job size.  A job's time limit is

.. math:: t = \\max\\left(t_{min},\\ 2 \\left(60 + \\frac{P b}{L} + \\frac{2 P T}{F}\\right)\\right)

seconds, rounded up to minutes: the load (60 s to start, and the weights, :math:`P`
parameters of :math:`b` bytes as stored, a GGUF file its own size, read at :math:`L` =
:data:`LOAD_BYTES_PER_S`), the compute of
the task's estimate (:math:`2PT` FLOPs, :mod:`enade_bench.study.planner`) at :math:`F` =
:data:`GPU_FLOPS` per GPU or :data:`CPU_FLOPS` per thread, and a factor 2 of room, at least
:data:`MIN_MINUTES`.  The rates are deliberately low (batch-1 generation is bound by memory,
not compute): a job's limit must hold it, and an unused limit costs nothing.  A task of
unknown size gets :data:`DEFAULT_MINUTES`.  Its CPUs are the threads it computes with (a
GPU task at least 2 per GPU: the tokenizer, vLLM's workers); its memory the host memory the
task needs (:func:`~enade_bench.study.memory.model_memory`), rounded up to 0.5 GB, at least
1 GB (an API model's process; Slurm reads ``--mem=0`` as all of a node's memory).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from enade_bench.study.executors.base import Task

#: Memory (GB) of each GPU by card name (lower case; a size in the name wins).
CARD_MEMORY_GB: dict[str, float] = {
    "b300": 288,
    "gb300": 288,
    "b200": 180,
    "gb200": 186,
    "h200": 141,
    "gh200": 96,
    "h100": 80,
    "h800": 80,
    "h20": 96,
    "a100": 40,
    "a800": 40,
    "l40s": 48,
    "l40": 48,
    "a40": 48,
    "a6000": 48,
    "a30": 24,
    "a10g": 24,
    "a10": 24,
    "l4": 24,
    "v100": 16,
    "t4": 16,
    "p100": 16,
    "rtx4090": 24,
    "rtx3090": 24,
    "mi300x": 192,
    "mi250x": 128,
    "mi250": 128,
    "mi210": 64,
    "mi100": 32,
}

#: Bytes a second a model's weights load at (a shared filesystem; deliberately low).
LOAD_BYTES_PER_S = 2e8
#: FLOP/s assumed of one GPU in batch-1 generation, and of one CPU thread.
GPU_FLOPS, CPU_FLOPS = 1e12, 1e10
#: The shortest limit estimated, and the limit of a task of unknown size (minutes).
MIN_MINUTES, DEFAULT_MINUTES = 10, 240


def card_memory_gb(name: str) -> float | None:
    """The memory of one card named ``name`` (``h100``, ``a100_80g``, ``NVIDIA-A100-SXM4-80GB``,
    ``A100-80G``); ``None`` where the name is no known card."""
    words = re.split(r"[^a-z0-9]+", name.lower())
    card = next((w for w in words if w in CARD_MEMORY_GB), None)
    if card is None:
        return None
    size = next((m.group(1) for w in words if (m := re.fullmatch(r"(\d+)gb?", w))), None)
    return float(size) if size is not None else CARD_MEMORY_GB[card]


def smallest_card(names: list[str]) -> tuple[float, str] | None:
    """The smallest known card among ``names`` (a job may land on any): its GB and its name."""
    known = [(gb, n) for n in names if (gb := card_memory_gb(n)) is not None]
    return min(known) if known else None


@dataclass(frozen=True)
class JobSize:
    """A job's time (minutes), CPUs and memory (GB; ``None``: the cluster's default)."""

    minutes: int
    cpus: int
    mem_gb: float | None


def seconds(
    parameters: int, tokens: int, gpus: int, threads: int = 1, weights: float | None = None
) -> tuple[float, float]:
    """The load and the compute (seconds) of ``parameters`` × ``tokens`` on ``gpus`` GPUs (0:
    ``threads`` CPU threads), at the module's deliberately low rates; ``weights``: the bytes
    read as the model loads (a GGUF file's size; ``None``: :math:`P b`, ``b`` 2 on GPUs, 4 on
    the CPU)."""
    rate = GPU_FLOPS * gpus if gpus else CPU_FLOPS * threads
    read = weights if weights is not None else parameters * (2 if gpus else 4)
    return 60 + read / LOAD_BYTES_PER_S, 2.0 * parameters * tokens / rate


def estimate(task: Task, gpus: int, threads: int) -> JobSize:
    """The job of ``task`` on ``gpus`` GPUs (0: ``threads`` CPU threads; see the module's formula)."""
    parameters, memory = task.parameters, task.host_memory(gpus)
    if parameters is None:
        minutes = DEFAULT_MINUTES
    else:
        load, compute = seconds(parameters, task.tokens, gpus, threads, task.weights_bytes)
        minutes = max(MIN_MINUTES, math.ceil(2 * (load + compute) / 60))
    mem = None if memory is None else max(1.0, math.ceil(memory / 2**30 * 2) / 2)  # --mem=0 is all of it
    return JobSize(minutes, max(threads, 2 * gpus), mem)
