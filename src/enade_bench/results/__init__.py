"""Result records, atomic files, the resumable intermediate log, and run environment."""

from enade_bench.results.records import QuestionRecord, RunResult
from enade_bench.results.store import (
    IntermediateLog,
    atomic_write_text,
    read_result,
    result_paths,
)

__all__ = [
    "IntermediateLog",
    "QuestionRecord",
    "RunResult",
    "atomic_write_text",
    "read_result",
    "result_paths",
]
