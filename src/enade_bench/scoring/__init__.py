"""Pure scoring functions: answer extraction and choices from option scores (no I/O)."""

from enade_bench.scoring.choice import (
    OptionScores,
    choose_first_token,
    choose_log_prob,
)
from enade_bench.scoring.extraction import EXTRACTION_RULES, Extraction, extract_answer

__all__ = [
    "EXTRACTION_RULES",
    "Extraction",
    "OptionScores",
    "choose_first_token",
    "choose_log_prob",
    "extract_answer",
]
