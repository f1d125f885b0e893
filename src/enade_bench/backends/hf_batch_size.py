"""``evaluation.batch_size: auto``: the largest batch that fits the device, and that holds.

On CUDA the size is computed from memory, then checked: the probe runs at two small
sizes (:data:`PROBE_ROWS`), the peak allocation of each gives what a row costs (its key/value
cache and activations, the slope) and what does not grow with the rows (the weights, the
intercept), and :func:`rows_for_memory` solves for the rows whose peak reaches
:data:`HEADROOM` of the card (at most :data:`MOST`).  That size is then run as a probe, and
halved on an out-of-memory error (lm-eval's ``find_executable_batch_size``) until one fits.  The probe is
the run's own heaviest work: for every strategy of the run, a chunk of its ``rows``
longest prompts (options included) run through the real code path
(:func:`enade_bench.runner.batch_probe.peak_workload`), so it meets the strategy's true
peak (float32 logits, key/value caches and their copies, the decode loop to
``max_new_tokens``, few-shot prompts of any length); a size passes only if the device's
peak stays within :data:`HEADROOM` of its memory (:func:`measured`).  Without the
run's work (an experiment not planned) the probe is one forward pass of ``rows × length``
tokens with its cache (:func:`probe`).  On the CPU nothing is probed: the batch stays
:data:`CPU_BATCH` (today's default), since a larger one only pads more there.

Should a chunk still run out of memory later (fragmentation, a prompt longer than the
probe's), :func:`run_halving` runs it again in halves, down to single items, and the run
goes on; the pieces are recorded in the strategy's timing file (``halved``).

The resolved number is written to the results as ``evaluation.batch_size``; greedy and
scoring answers do not depend on it (the resume fingerprint leaves it out), so a
resumed run may resolve it again.  Sampled generation seeds its draws per chunk, so
there the number found is part of the fingerprint: a resume that finds another number
starts the strategy over rather than mix two chunkings.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

#: The batch on the CPU, and what a plan uses before the model is loaded.
CPU_BATCH = 8
#: Where the halving search starts on a GPU without a measured size (:func:`find_batch_size`).
START = 128
#: The two sizes whose peaks give a row's memory on a GPU (:func:`rows_for_memory`).
PROBE_ROWS = (4, 8)
#: The most rows a computed size may reach (the ENEM benchmark's 720 questions in a few chunks).
MOST = 1024
#: The share of the device's memory a probe's peak may reach (the rest: fragmentation, other use).
HEADROOM = 0.9

T = TypeVar("T")
R = TypeVar("R")


def is_oom(exc: BaseException) -> bool:
    """Whether ``exc`` is the device running out of memory (torch's error, or its message)."""
    torch = sys.modules.get("torch")  # not imported: no torch error can have been raised
    if torch is not None and isinstance(exc, torch.OutOfMemoryError):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def run_halving(run: Callable[[list[T]], list[R]], items: Sequence[T]) -> tuple[list[R], list[int]]:
    """``run(items)``; on an out-of-memory error, each half in turn (recursively), down to one item.

    Returns the results in order and the sizes of the pieces that ran (``[len(items)]``
    when nothing was halved).  An error other than running out of memory, or one item
    that does not fit, goes through.
    """
    try:
        return run(list(items)), [len(items)]
    except Exception as exc:
        if not is_oom(exc) or len(items) <= 1:
            raise
    _empty_cache()
    half = (len(items) + 1) // 2
    first, sizes = run_halving(run, items[:half])
    second, more = run_halving(run, items[half:])
    return first + second, sizes + more


def find_batch_size(fits: Callable[[int], object], start: int = START) -> int:
    """The largest ``start / 2**k`` for which ``fits(rows)`` returns without running out of memory.

    Raises the last error when even one row does not fit; errors other than running out
    of memory go through at once.
    """
    rows = start
    while True:
        try:
            fits(rows)
            return rows
        except Exception as exc:
            if not is_oom(exc) or rows == 1:
                raise
            _empty_cache()
            rows //= 2


def _empty_cache() -> None:
    import torch  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def probe(model: Any, length: int) -> Callable[[int], None]:
    """``fits(rows)``: one forward pass of ``rows × length`` tokens with its cache, then freed."""
    import torch  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    device = next(model.parameters()).device

    @torch.inference_mode()
    def fits(rows: int) -> None:
        ids = torch.ones((rows, length), dtype=torch.long, device=device)
        out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
        del out
        _empty_cache()

    return fits


def measured(
    workload: Callable[[int], object], device: Any, headroom: float = HEADROOM
) -> Callable[[int], None]:
    """``fits(rows)``: ``workload(rows)``, an out-of-memory error when its peak passes ``headroom``.

    The peak is CUDA's ``max_memory_allocated`` over the workload, against the card's
    total memory: a size that only just fits would fail on the run's next allocation.
    """
    import torch  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    def fits(rows: int) -> None:
        torch.cuda.reset_peak_memory_stats(device)
        workload(rows)
        peak, total = (
            torch.cuda.max_memory_allocated(device),
            torch.cuda.get_device_properties(device).total_memory,
        )
        _empty_cache()
        if peak > headroom * total:
            raise torch.OutOfMemoryError(
                f"out of memory: {rows} rows peaked at {peak / 2**30:.1f} GiB, "
                f"over {headroom:.0%} of the card's {total / 2**30:.1f} GiB"
            )

    return fits


def rows_for_memory(total: int, peaks: dict[int, int], headroom: float = HEADROOM, most: int = MOST) -> int:
    """The rows whose peak allocation reaches ``headroom × total`` bytes, from peaks at two sizes.

    The peak is taken as linear in the rows, :math:`p(r) = a + b\\,r`, with the slope
    :math:`b = (p_2 - p_1) / (r_2 - r_1)` (a row's key/value cache and activations) and
    :math:`a = p_1 - b\\,r_1` (the weights and whatever does not grow); then
    :math:`r^* = \\lfloor (h\\,T - a) / b \rfloor`, between 1 and ``most``.  A slope of
    zero or less (the probe's rows did not grow the peak) gives ``most``.
    """
    if len(peaks) < 2:
        raise ValueError(f"two probe sizes are needed, got {sorted(peaks)}")
    (r1, p1), (r2, p2) = sorted(peaks.items())[:2]
    slope = (p2 - p1) / (r2 - r1)
    if slope <= 0:
        return most
    rows = int((headroom * total - (p1 - slope * r1)) // slope)
    return max(1, min(most, rows))


def peak_bytes(workload: Callable[[int], object], device: Any, rows: int) -> int:
    """CUDA's peak allocation over ``workload(rows)``, in bytes."""
    import torch  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    _empty_cache()
    torch.cuda.reset_peak_memory_stats(device)
    workload(rows)
    peak = int(torch.cuda.max_memory_allocated(device))
    _empty_cache()
    return peak


def auto_batch_size(
    model: Any,
    context_length: int | None,
    start: int | None = None,
    workload: Callable[[int], object] | None = None,
    most: int = MOST,
) -> int:
    """The batch for ``evaluation.batch_size: auto`` (module docstring).

    ``workload(rows)``: the run's heaviest chunk of ``rows`` items through the real code
    path; None: a forward pass of ``rows ×`` the context (at most 2,048 tokens).
    ``start``: where the halving search starts; None: the size computed from memory
    (:func:`rows_for_memory` on the peaks at :data:`PROBE_ROWS`, at most ``most``).
    """
    device = next(model.parameters()).device
    if device.type != "cuda":
        return CPU_BATCH
    if workload is None:
        workload = probe(model, min(context_length or 2048, 2048))
    if start is None:
        import torch  # noqa: PLC0415 (optional or heavy dependency, imported at use)

        total = torch.cuda.get_device_properties(device).total_memory
        peaks = {rows: peak_bytes(workload, device, rows) for rows in PROBE_ROWS}
        start = rows_for_memory(total, peaks, most=most)
    return find_batch_size(measured(workload, device), start)
