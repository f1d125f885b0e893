"""What a results file records about the machine and code that produced it."""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
import sys
from pathlib import Path

from pydantic import JsonValue

PACKAGES = (
    "enade-bench",
    "torch",
    "transformers",
    "tokenizers",
    "accelerate",
    "gguf",
    "numpy",
    "scipy",
    "pandas",
    "pydantic",
    "openai",
    "anthropic",
    "google-genai",
)


def library_versions() -> dict[str, JsonValue]:
    versions: dict[str, JsonValue] = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_commit(start: Path | None = None) -> dict[str, JsonValue]:
    """HEAD commit of the repository holding this package (and whether it is dirty)."""
    where = start or Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=where,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None}
    return {"commit": head, "dirty": bool(dirty)}


def torch_threads() -> int | None:
    """torch's intra-op CPU threads in this process (their count can move a CPU score's last
    bits); ``None`` where torch was not loaded (API models)."""
    torch = sys.modules.get("torch")
    return int(torch.get_num_threads()) if torch is not None else None


def environment() -> dict[str, JsonValue]:
    """Python, platform, library versions, git commit and torch's CPU threads."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "libraries": library_versions(),
        "git": git_commit(),
        "threads": torch_threads(),
    }
