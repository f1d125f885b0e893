import json
from pathlib import Path

import pytest
from tests.scoring.extraction_rules import EXTRACTION_RULES

from enade_bench.scoring.extraction import extract_answer

CASES = json.loads((Path(__file__).parent / "golden" / "extraction_cases.json").read_text("utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[c["why"] for c in CASES])
def test_golden_extraction(case: dict) -> None:
    result = extract_answer(case["text"], case["valid_letters"], case.get("options", ()))
    assert (result.letter, result.rule) == (case["expected_letter"], case["expected_rule"])


def test_golden_cases_cover_every_rule() -> None:
    assert {c["expected_rule"] for c in CASES} == set(EXTRACTION_RULES)
