"""Where and in which precision a local model runs: ``model.device`` and ``model.dtype: auto``.

``model.dtype: auto`` (the default) follows the Hugging Face convention on a GPU: the
checkpoint's own dtype (what its ``config.json`` records), with ``bfloat16`` where the
card supports it and ``float16`` where it does not; a checkpoint saved in ``float32``
or one that records nothing (a GGUF file) runs in ``bfloat16`` on such a card.  On the
CPU it is ``float32``, as before.  The resolved dtype is what the model identity
records (``model.dtype`` in the results file), so two runs that resolved differently
are never mixed on resume.
"""

from __future__ import annotations

from typing import Any

#: The dtypes a checkpoint may record that run as they are on a GPU.
HALF = ("bfloat16", "float16")


def resolve_device(device: str) -> str:
    """``model.device``: ``auto`` is ``cuda`` where a GPU is visible, else ``cpu``."""
    if device != "auto":
        return device
    import torch  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    return "cuda" if torch.cuda.is_available() else "cpu"


def bf16_supported(device: str) -> bool:
    """Whether the CUDA card of ``device`` computes in bfloat16 (compute capability 8.0 and up)."""
    import torch  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported(including_emulation=False))


def resolve_dtype(dtype: str, device: str, checkpoint: str | None, bf16: bool | None = None) -> str:
    """The dtype a model is loaded in (module docstring).

    Parameters
    ----------
    dtype
        ``model.dtype``: ``auto``, ``float32``, ``bfloat16`` or ``float16`` (the last three as given).
    device
        The resolved device (``cpu``, ``cuda``, ``cuda:1`` ...).
    checkpoint
        The dtype the checkpoint records (``None``: unknown).
    bf16
        Whether the card computes in bfloat16 (``None``: ask the card).
    """
    if dtype != "auto":
        return dtype
    if not device.startswith("cuda"):
        return "float32"
    if bf16 is None:
        bf16 = bf16_supported(device)
    wanted = checkpoint if checkpoint in HALF else "bfloat16"
    return "float16" if wanted == "bfloat16" and not bf16 else wanted


def checkpoint_dtype(location: str, **kwargs: Any) -> str | None:
    """The dtype a transformers checkpoint records in its config (``None`` if none or unreadable)."""
    import transformers  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    try:
        config = transformers.AutoConfig.from_pretrained(location, **kwargs)
    except (OSError, ValueError):
        return None
    text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    value = getattr(text, "dtype", None) or getattr(config, "dtype", None)
    return str(value).removeprefix("torch.") if value is not None else None


def engine_dtype(dtype: str) -> str:
    """``model.dtype`` for an engine with its own ``auto`` (vLLM): ``auto`` is float32 without a GPU.

    On a GPU vLLM's own ``auto`` is the checkpoint's dtype, the convention above; without
    one the CPU keeps float32 as before ``auto`` was the default.
    """
    if dtype != "auto":
        return dtype
    import torch  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    return "auto" if torch.cuda.is_available() else "float32"


def to_device(values: Any, device: Any, dtype: Any = None) -> Any:
    """Host ``values`` (a tensor or nested lists of numbers) on ``device`` without blocking the host.

    On CUDA the copy comes from pinned memory with ``non_blocking=True`` (the host queues it and
    goes on; the caching host allocator keeps the pinned block until the copy is done); elsewhere
    not pinned (``pin_memory`` raises on a CPU-only torch), the same non-blocking call.  Every host-to-device copy of the
    packed path goes through here, so tests under the forced CUDA policy count them.
    """
    import torch  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    host = values if isinstance(values, torch.Tensor) else torch.tensor(values, dtype=dtype or torch.long)
    if torch.device(device).type == "cuda":
        host = host.pin_memory()
    return host.to(device, non_blocking=True)
