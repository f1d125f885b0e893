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

On its GPUs a model needs its weights as they sit there, plus 10 % (:func:`gpu_options`):
:math:`P b` with :math:`b` 4 for ``float32``, 2 for ``bfloat16``/``float16``/``auto``, 0.5 with
``load_in_4bit`` (bitsandbytes' 4-bit weights), and for vLLM's ``quantization`` the bits of
its method (:data:`QUANTIZED_BYTES`: ``fp8``, ``int8`` 1; ``awq``, ``gptq``, ``bitsandbytes``
0.5); a GGUF file that vLLM loads keeps its own quantized size (the file's bytes), while the
``causal_lm`` backend converts a GGUF to torch weights of the dtype (:math:`P b`).
"""

from __future__ import annotations

import json
import mmap
import struct
from math import prod
from pathlib import Path

from enade_bench.config import ModelConfig, VllmConfig
from enade_bench.regular_file import open_regular

#: Room beyond the weights: a share of them, and a fixed amount for the process.
SHARE, FIXED = 1.2, 2**30
#: Room beyond the weights on GPUs: the KV cache and activations of short prompts.
GPU_SHARE = 1.1
#: Bytes of a parameter under vLLM's ``quantization`` methods (their common bit widths).
QUANTIZED_BYTES = {"fp8": 1.0, "fbgemm_fp8": 1.0, "int8": 1.0, "experts_int8": 1.0, "awq": 0.5, "gptq": 0.5}
QUANTIZED_BYTES |= {"awq_marlin": 0.5, "gptq_marlin": 0.5, "bitsandbytes": 0.5, "load_in_4bit": 0.5}


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


def stored_bytes(model: ModelConfig, count: int) -> float:
    """Bytes read when the model loads: a GGUF file's size, else its ``count`` parameters in a
    checkpoint's bfloat16 (2 bytes each)."""
    gguf = _gguf_path(model)
    return float(gguf.stat().st_size) if gguf is not None and gguf.is_file() else 2.0 * count


def bytes_per_parameter(model: ModelConfig) -> int:
    """Bytes of one parameter as the model is loaded (see the module's formula)."""
    dtype = model.dtype
    if dtype == "float32":
        return 4
    if dtype in {"bfloat16", "float16"}:
        return 2
    return 2 if on_gpu(model) else 4


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


def _card_bytes(model: ModelConfig, count: int) -> float:
    """Bytes of the weights on the GPUs (see the module's formula)."""
    vllm = model.vllm if model.type == "vllm" else None
    if model.type == "vllm" and _gguf_path(model) is not None:
        return stored_bytes(model, count)  # vLLM keeps a GGUF's quantized tensors
    quantized = vllm.quantization if vllm is not None else "load_in_4bit" if model.load_in_4bit else None
    if quantized in QUANTIZED_BYTES:
        return count * QUANTIZED_BYTES[quantized]
    return count * (4.0 if model.dtype == "float32" else 2.0)  # auto: a GPU's bfloat16/float16


def gpu_options(model: ModelConfig) -> list[tuple[str, int, bool]]:
    """The model as it is (``""``) and each setting not set yet that makes it smaller on its GPUs:
    the bytes it then needs on its GPUs together, its weights there (the module's formula) × 1.1
    (10 % for the KV cache and activations of a benchmark's short prompts), and whether it then
    runs on vLLM (which may split it over GPUs with ``tensor_parallel_size``).  The settings:
    ``bfloat16`` in place of ``float32``, vLLM's ``fp8``, and for a transformers model
    ``load_in_4bit`` and vLLM itself; a GGUF file has none (its size is its own).  Empty for an
    API model, one that stays on the CPU (``device: cpu``), or a size unknown here."""
    count = parameters(model) if model.type != "api" and model.device != "cpu" else None
    if count is None:
        return []
    vllm, changes = model.type == "vllm", [("", model)]
    if _gguf_path(model) is None:
        if model.dtype == "float32":
            changes.append(("model.dtype: bfloat16", model.model_copy(update={"dtype": "bfloat16"})))
        if vllm and (model.vllm is None or model.vllm.quantization is None):
            fp8 = (model.vllm or VllmConfig()).model_copy(update={"quantization": "fp8"})
            changes.append(("model.vllm.quantization: fp8", model.model_copy(update={"vllm": fp8})))
        if not vllm and not model.load_in_4bit:
            changes.append(("model.load_in_4bit: true", model.model_copy(update={"load_in_4bit": True})))
        if not vllm:
            changes.append(
                ("model.type: vllm", model.model_copy(update={"type": "vllm", "load_in_4bit": False}))
            )
    return [
        (name, int(_card_bytes(changed, count) * GPU_SHARE), changed.type == "vllm")
        for name, changed in changes
    ]
