"""E-EVAL (Chinese K-12 multiple choice) on the core runner.

Loader of the E-EVAL layout, the benchmark's answer-only and chain-of-thought
prompts with k-shot dev demonstrations, the Chinese answer-extraction cascade,
per-subject / per-level reports, the leaderboard table, the submission
writer and the ``eeval`` sub-command: everything about E-EVAL lives in this folder.
:data:`BENCHMARK` (:mod:`.benchmark`) is what the registry runs for
``dataset.benchmark: eeval``.

:data:`BENCHMARK` is imported when first read: ``enade-bench eeval --help`` imports the
command's parser (:mod:`.cli`) alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from enade_bench.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from enade_bench.benchmarks.eeval.benchmark import BENCHMARK

__all__ = ["BENCHMARK"]

__getattr__ = lazy_getattr(__name__, {"BENCHMARK": "enade_bench.benchmarks.eeval.benchmark"})
