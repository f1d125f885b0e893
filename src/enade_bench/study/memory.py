"""The host memory a model needs while it loads and runs, known before it loads.

An executor that packs several models on one node (Ray) reserves this much for each task,
so that a node never starts more loads than its memory holds.  The estimate is

.. math:: M = P \\cdot b \\cdot 1.2 + 1\\,\\mathrm{GiB}

with :math:`P` the model's parameters and :math:`b` the bytes of a parameter in the dtype
it is loaded in (``float32`` 4; ``bfloat16``/``float16`` 2; ``auto``: 4 on the CPU, where the
backends load float32, 2 on a GPU); the 20 % and the GiB are room for activations, the
tokenizer and the Python process.  :math:`P` comes from the weights without reading them
in full: a GGUF file's tensor shapes (its header), a folder's safetensors headers, or the
hub's safetensors metadata.  An API model needs none; a model whose size cannot be known
here is ``None`` (the executor reserves nothing for it and says so).
"""

from __future__ import annotations

import json
import mmap
import struct
from math import prod
from pathlib import Path

from enade_bench.config import ModelConfig
from enade_bench.regular_file import open_regular

#: Room beyond the weights: a share of them, and a fixed amount for the process.
SHARE, FIXED = 1.2, 2**30
#: Room beyond the weights on GPUs: the KV cache and activations of short prompts.
GPU_SHARE = 1.1


#: Bytes of each fixed-size GGUF value type (the GGUF specification's ``gguf_type``: 8 is a
#: string, 9 an array).
_GGUF_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def _skip_gguf_value(buf: mmap.mmap, at: int, kind: int) -> int:
    """The offset just past one metadata value of type ``kind`` at ``at``."""
    if kind in _GGUF_SIZES:
        return at + _GGUF_SIZES[kind]
    if kind == 8:  # string: uint64 length, then the bytes
        return at + 8 + struct.unpack_from("<Q", buf, at)[0]
    if kind != 9:
        raise ValueError(f"GGUF value type {kind}")
    inner, count = struct.unpack_from("<IQ", buf, at)
    at += 12
    if inner in _GGUF_SIZES:
        return at + count * _GGUF_SIZES[inner]
    for _ in range(count):  # strings (a tokenizer's vocabulary) or nested arrays
        at = _skip_gguf_value(buf, at, inner)
    return at


def _gguf_parameters(path: Path) -> int:
    """Parameters of a GGUF file (version 2 or 3) from its tensor infos, past its metadata.

    ``gguf.GGUFReader`` parses every metadata value into arrays: 27 s for Gemma 3 270M's
    262 144-token vocabulary here; this reads only the shapes (well under a second).
    """
    with open_regular(path) as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        magic, version, tensors, fields = struct.unpack_from("<4sIQQ", buf, 0)
        if magic != b"GGUF" or version < 2:
            raise ValueError(f"{path}: not a GGUF file of version 2 or 3")
        at = 24
        for _ in range(fields):  # key (string), value type, value
            at += 8 + struct.unpack_from("<Q", buf, at)[0]
            (kind,) = struct.unpack_from("<I", buf, at)
            at = _skip_gguf_value(buf, at + 4, kind)
        total = 0
        for _ in range(tensors):  # name (string), dimensions, their sizes, type, offset
            at += 8 + struct.unpack_from("<Q", buf, at)[0]
            (dims,) = struct.unpack_from("<I", buf, at)
            total += prod(struct.unpack_from(f"<{dims}Q", buf, at + 4))
            at += 4 + 8 * dims + 4 + 8
        return total


def _safetensors_parameters(path: Path) -> int:
    """Parameters in a safetensors file, from its JSON header (the first 8 bytes: its length)."""
    with open_regular(path) as handle:
        (length,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(length))
    return sum(prod(v["shape"]) for k, v in header.items() if k != "__metadata__")


def _gguf_path(model: ModelConfig) -> Path | None:
    name = model.name or ""
    if name.startswith("pypi:"):
        from enade_bench.backends.hf_load import _packaged_gguf  # noqa: PLC0415

        return _packaged_gguf(name)
    if model.gguf_file:
        folder = Path(name).expanduser()
        return folder / model.gguf_file if folder.is_dir() else Path(model.gguf_file).expanduser()
    return Path(name).expanduser() if name.endswith(".gguf") else None


def parameters(model: ModelConfig) -> int | None:
    """The model's parameter count without loading it; ``None`` where it cannot be known here."""
    try:
        gguf = _gguf_path(model)
        if gguf is not None:
            return _gguf_parameters(gguf) if gguf.is_file() else None
        folder = Path(model.name or "").expanduser()
        if folder.is_dir():
            files = sorted(folder.glob("*.safetensors"))
            return sum(_safetensors_parameters(p) for p in files) if files else None
        from huggingface_hub import get_safetensors_metadata  # noqa: PLC0415

        meta = get_safetensors_metadata(model.name or "", revision=model.revision)
        return int(sum(meta.parameter_count.values()))
    except Exception:  # noqa: BLE001 - an estimate: anything unreadable or out of reach is unknown
        return None


def bytes_per_parameter(model: ModelConfig) -> int:
    """Bytes of one parameter as the model is loaded (see the module's formula)."""
    dtype = model.dtype
    if dtype == "float32":
        return 4
    if dtype in {"bfloat16", "float16"}:
        return 2
    return 2 if model.type == "vllm" or str(model.device).startswith("cuda") else 4


def on_gpu(model: ModelConfig) -> bool:
    """Whether the model's weights load onto GPUs wherever it runs (vLLM, ``device: cuda``)."""
    return model.type == "vllm" or str(model.device).startswith("cuda")


def model_memory(model: ModelConfig, gpus: bool = False) -> int | None:
    """Host memory (bytes) the model needs: :math:`P b \\cdot 1.2 + 1` GiB; 0 for an API model.

    A model whose weights load onto GPUs (:func:`on_gpu`, or ``gpus``: a ``device: auto``
    model given GPUs) keeps only the process on the host: 2 GiB (the interpreter, the CUDA
    context, the tokenizer), not its weights.
    """
    if model.type == "api":
        return 0
    if on_gpu(model) or (gpus and model.device != "cpu"):
        return 2 * FIXED
    count = parameters(model)
    return None if count is None else int(count * bytes_per_parameter(model) * SHARE + FIXED)


def gpu_memory(model: ModelConfig) -> int | None:
    """Bytes the model needs on its GPUs together: :math:`P b \\cdot 1.1` (the weights, and 10 % for
    the KV cache and activations of a benchmark's short prompts); ``None``: an API model, one
    that may stay on the CPU (``device: cpu``), or a size unknown here."""
    if model.type == "api" or model.device == "cpu":
        return None
    count = parameters(model)
    on_card = 4 if model.dtype == "float32" else 2  # auto: a GPU's bfloat16/float16
    return None if count is None else int(count * on_card * GPU_SHARE)
