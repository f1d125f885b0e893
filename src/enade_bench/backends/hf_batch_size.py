"""``evaluation.batch_size: auto``: the largest batch that fits the device, found once.

As lm-eval's ``--batch_size auto`` (``find_executable_batch_size``): start large, run a
probe of that many rows, halve on an out-of-memory error until one fits.  The probe is
what a chunk of the run costs at most: ``rows`` prompts of ``length`` tokens in one
forward pass that keeps its key/value cache (generation prefills so; scoring packs the
same tokens in one row).  On the CPU nothing is probed: the batch stays
:data:`CPU_BATCH` (today's default), since a larger one only pads more there.

The resolved number is written to the results as ``evaluation.batch_size``; greedy and
scoring answers do not depend on it (the resume fingerprint leaves it out), so a
resumed run may resolve it again.  Sampled generation seeds its draws per chunk, so
there the number found is part of the fingerprint: a resume that finds another number
starts the strategy over rather than mix two chunkings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: The batch on the CPU, and what a plan uses before the model is loaded.
CPU_BATCH = 8
#: Where the search starts on a GPU.
START = 128


def is_oom(exc: BaseException) -> bool:
    """Whether ``exc`` is the device running out of memory (CUDA's error or its message)."""
    import torch  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    if isinstance(exc, torch.cuda.OutOfMemoryError):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


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


def auto_batch_size(model: Any, context_length: int | None, start: int = START) -> int:
    """The batch for ``evaluation.batch_size: auto`` (module docstring)."""
    device = next(model.parameters()).device
    if device.type != "cuda":
        return CPU_BATCH
    length = min(context_length or 2048, 2048)
    return find_batch_size(probe(model, length), start)
