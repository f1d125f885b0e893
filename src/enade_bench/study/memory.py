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
import struct
from math import prod
from pathlib import Path

from enade_bench.config import ModelConfig

#: Room beyond the weights: a share of them, and a fixed amount for the process.
SHARE, FIXED = 1.2, 2**30


def _gguf_parameters(path: Path) -> int:
    from gguf import GGUFReader  # noqa: PLC0415 (the GGUF stack, only for a GGUF model)

    return sum(int(t.n_elements) for t in GGUFReader(path).tensors)


def _safetensors_parameters(path: Path) -> int:
    """Parameters in a safetensors file, from its JSON header (the first 8 bytes: its length)."""
    with path.open("rb") as handle:
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


def model_memory(model: ModelConfig) -> int | None:
    """Host memory (bytes) the model needs: :math:`P b \\cdot 1.2 + 1` GiB; 0 for an API model."""
    if model.type == "api":
        return 0
    count = parameters(model)
    return None if count is None else int(count * bytes_per_parameter(model) * SHARE + FIXED)
