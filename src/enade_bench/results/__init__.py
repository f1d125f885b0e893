"""Result records, atomic files, the resumable intermediate log, and run environment.

The names below are imported when first read (PEP 562), so a command that only checks
an output folder (:mod:`.writable`) or writes a CSV (:mod:`.csv_safe`) does not import the
record models (pydantic) at ``--help``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from enade_bench.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from enade_bench.results.records import QuestionRecord, RunResult
    from enade_bench.results.store import IntermediateLog, RunPaths, atomic_write_text, read_result

#: Each name this package exports -> the module defining it.
_EXPORTS: dict[str, str] = {
    "QuestionRecord": "enade_bench.results.records",
    "RunResult": "enade_bench.results.records",
    "IntermediateLog": "enade_bench.results.store",
    "RunPaths": "enade_bench.results.store",
    "atomic_write_text": "enade_bench.results.store",
    "read_result": "enade_bench.results.store",
}
__all__ = [
    "IntermediateLog",
    "QuestionRecord",
    "RunPaths",
    "RunResult",
    "atomic_write_text",
    "read_result",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
