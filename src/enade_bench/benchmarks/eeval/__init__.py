"""E-EVAL (Chinese K-12 multiple choice) on the core runner.

Loader of the E-EVAL layout, the benchmark's answer-only and chain-of-thought
prompts with k-shot dev demonstrations, the Chinese answer-extraction cascade,
per-subject / per-level reports, the leaderboard table, the submission
writer and the ``eeval`` sub-command: everything about E-EVAL lives in this folder.
:data:`BENCHMARK` (:mod:`.benchmark`) is what the registry runs for
``dataset.benchmark: eeval``.

The names below are imported when first read: ``enade-bench eeval --help`` imports the
command's parser (:mod:`.cli`) alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from enade_bench.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from enade_bench.benchmarks.eeval.benchmark import BENCHMARK, EEvalBenchmark
    from enade_bench.benchmarks.eeval.extraction import EEVAL_RULES, extract_chinese
    from enade_bench.benchmarks.eeval.loader import Demo, EEvalData, load_eeval
    from enade_bench.benchmarks.eeval.prompts import EEvalTemplate, build_eeval_prompt, load_templates
    from enade_bench.benchmarks.eeval.report import (
        LeaderboardRow,
        leaderboard,
        leaderboard_csv,
        leaderboard_markdown,
        subject_summary,
    )
    from enade_bench.benchmarks.eeval.settings import (
        LEADERBOARD_SETTINGS,
        EEvalSetting,
        parse_setting,
        plan_settings,
    )
    from enade_bench.benchmarks.eeval.subjects import Subject, parse_subject_file, subject_from_key
    from enade_bench.benchmarks.eeval.submission import build_submission, check_layout, write_submission

#: Each name this package exports -> the module defining it (imported when the name is first read).
_EXPORTS: dict[str, str] = {
    "BENCHMARK": "enade_bench.benchmarks.eeval.benchmark",
    "EEvalBenchmark": "enade_bench.benchmarks.eeval.benchmark",
    "EEVAL_RULES": "enade_bench.benchmarks.eeval.extraction",
    "extract_chinese": "enade_bench.benchmarks.eeval.extraction",
    "Demo": "enade_bench.benchmarks.eeval.loader",
    "EEvalData": "enade_bench.benchmarks.eeval.loader",
    "load_eeval": "enade_bench.benchmarks.eeval.loader",
    "EEvalTemplate": "enade_bench.benchmarks.eeval.prompts",
    "build_eeval_prompt": "enade_bench.benchmarks.eeval.prompts",
    "load_templates": "enade_bench.benchmarks.eeval.prompts",
    "LeaderboardRow": "enade_bench.benchmarks.eeval.report",
    "leaderboard": "enade_bench.benchmarks.eeval.report",
    "leaderboard_csv": "enade_bench.benchmarks.eeval.report",
    "leaderboard_markdown": "enade_bench.benchmarks.eeval.report",
    "subject_summary": "enade_bench.benchmarks.eeval.report",
    "LEADERBOARD_SETTINGS": "enade_bench.benchmarks.eeval.settings",
    "EEvalSetting": "enade_bench.benchmarks.eeval.settings",
    "parse_setting": "enade_bench.benchmarks.eeval.settings",
    "plan_settings": "enade_bench.benchmarks.eeval.settings",
    "Subject": "enade_bench.benchmarks.eeval.subjects",
    "parse_subject_file": "enade_bench.benchmarks.eeval.subjects",
    "subject_from_key": "enade_bench.benchmarks.eeval.subjects",
    "build_submission": "enade_bench.benchmarks.eeval.submission",
    "check_layout": "enade_bench.benchmarks.eeval.submission",
    "write_submission": "enade_bench.benchmarks.eeval.submission",
}
__all__ = [
    "BENCHMARK",
    "EEVAL_RULES",
    "LEADERBOARD_SETTINGS",
    "Demo",
    "EEvalBenchmark",
    "EEvalData",
    "EEvalSetting",
    "EEvalTemplate",
    "LeaderboardRow",
    "Subject",
    "build_eeval_prompt",
    "build_submission",
    "check_layout",
    "extract_chinese",
    "leaderboard",
    "leaderboard_csv",
    "leaderboard_markdown",
    "load_eeval",
    "load_templates",
    "parse_setting",
    "parse_subject_file",
    "plan_settings",
    "subject_from_key",
    "subject_summary",
    "write_submission",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
