"""E-EVAL (Chinese K-12 multiple choice) on the core runner.

Loader of the E-EVAL layout, the benchmark's answer-only and chain-of-thought
prompts with k-shot dev demonstrations, the Chinese answer-extraction cascade,
per-subject / per-level reports, the leaderboard table and the submission
writer.  See docs/eeval.md.
"""

from enade_bench.eeval.experiment import load_eeval_experiment, run_loaded
from enade_bench.eeval.extraction import EEVAL_RULES, extract_chinese
from enade_bench.eeval.loader import Demo, EEvalData, load_eeval
from enade_bench.eeval.prompts import EEvalTemplate, build_eeval_prompt, load_templates
from enade_bench.eeval.report import (
    LeaderboardRow,
    leaderboard,
    leaderboard_csv,
    leaderboard_markdown,
    subject_summary,
)
from enade_bench.eeval.settings import LEADERBOARD_SETTINGS, EEvalSetting, parse_setting, plan_settings
from enade_bench.eeval.subjects import Subject, parse_subject_file, subject_from_key
from enade_bench.eeval.submission import build_submission, check_layout, write_submission

__all__ = [
    "EEVAL_RULES",
    "LEADERBOARD_SETTINGS",
    "Demo",
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
    "load_eeval_experiment",
    "load_templates",
    "parse_setting",
    "parse_subject_file",
    "plan_settings",
    "run_loaded",
    "subject_from_key",
    "subject_summary",
    "write_submission",
]
