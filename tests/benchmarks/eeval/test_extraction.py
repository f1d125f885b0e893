"""Golden cases for the Chinese extraction cascade (tests/benchmarks/eeval/data/extraction_golden.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.benchmarks.eeval.helpers import EEVAL_RULES

from enade_bench.benchmarks.eeval.extraction import extract_chinese

GOLDEN = json.loads((Path(__file__).parent / "data" / "extraction_golden.json").read_text(encoding="utf-8"))
CASES = GOLDEN["cases"]


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{c['rule']}" for i, c in enumerate(CASES)])
def test_golden_case(case: dict) -> None:
    got = extract_chinese(case["text"], case["valid"], case.get("options", ()))
    assert (got.letter, got.rule) == (case["letter"], case["rule"]), case.get("note", "")


def test_every_chinese_rule_has_golden_cases() -> None:
    chinese = EEVAL_RULES[: EEVAL_RULES.index("resposta")]
    covered = {c["rule"] for c in CASES}
    assert set(chinese) == {
        "so_answer",
        "answer_is",
        "answer_colon",
        "choose",
        "leading_letter",
        "correct_option",
    }
    assert set(chinese) <= covered
    assert {"fallback", "unanswered", "option_text", "parenthesized", "line_start"} <= covered


def test_rule_names_are_recorded_in_priority_order() -> None:
    # the Chinese closing phrase beats every later rule present in the same text
    text = "A正确。故选B。答案：C\n所以答案是D。"
    assert extract_chinese(text, "ABCD").rule == "so_answer"
    assert extract_chinese(text.replace("所以答案是D。", ""), "ABCD").letter == "C"
    assert extract_chinese("A正确。故选B。", "ABCD").rule == "choose"
