"""E-EVAL (Chinese K-12 multiple choice) on the core runner.

Loader of the E-EVAL layout, the benchmark's answer-only and chain-of-thought
prompts with k-shot dev demonstrations, the Chinese answer-extraction cascade,
per-subject / per-level reports, the leaderboard table, the submission
writer and the ``eeval`` sub-command: everything about E-EVAL lives in this folder.
:data:`BENCHMARK` (:mod:`.benchmark`) is what the registry runs for
``dataset.benchmark: eeval``.
"""

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
