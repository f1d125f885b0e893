"""ENEM: Brazil's national high-school exam, with INEP's 3PL item parameters.

Everything about ENEM lives in this folder: the file layout of the question files
(:data:`PRESET`), the ENEM prompts, INEP's item tables and booklet linking
(:mod:`.inep`), the one function that finds the ENEM data folder (:mod:`.data`), the
published LLM response patterns (:mod:`.published`), the psychometric analysis of
ENEM runs (:mod:`.analysis`, with its tables and figures), the study (:mod:`.study`) and
its command-line tools (:mod:`.cli`: the ``irt`` sub-commands, ``study --derive-attributes``,
``report --enem-data``).

The names below are imported when first read: ``enade-bench irt --help`` imports the
commands' parsers (:mod:`.cli`) alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from enade_bench.benchmarks.enem.files import v1_fields
from enade_bench.lazy_exports import lazy_getattr
from enade_bench.results.store import V1Fields, register_v1_fields

if TYPE_CHECKING:
    from enade_bench.benchmarks.enem.benchmark import BENCHMARK, PRESET, PROMPTS, EnemBenchmark

#: Each name this package exports -> the module defining it (imported when the name is first read).
_EXPORTS: dict[str, str] = {
    name: "enade_bench.benchmarks.enem.benchmark"
    for name in ("BENCHMARK", "PRESET", "PROMPTS", "EnemBenchmark")
}
__all__ = ["BENCHMARK", "PRESET", "PROMPTS", "EnemBenchmark"]

__getattr__ = lazy_getattr(__name__, _EXPORTS)

# Results files written before each exam had its own fields (schema version 1).
register_v1_fields("enem", V1Fields(v1_fields, {"component": "area"}))  # type: ignore[arg-type]
