"""The rule names :func:`enade_bench.scoring.extraction.extract_answer` records, in priority order."""

EXTRACTION_RULES = (
    "resposta",
    "alternativa",
    "parenthesized",
    "line_start",
    "lone_letter",
    "option_text",
    "fallback",
    "unanswered",
)
