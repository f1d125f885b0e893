"""Result records, atomic files, the resumable intermediate log, and run environment."""

from enade_bench.results.records import QuestionRecord, RunResult
from enade_bench.results.store import (
    IntermediateLog,
    RunPaths,
    atomic_write_text,
    read_result,
)

__all__ = [
    "IntermediateLog",
    "QuestionRecord",
    "RunPaths",
    "RunResult",
    "atomic_write_text",
    "read_result",
]
