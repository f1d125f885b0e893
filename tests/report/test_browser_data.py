"""The question browser's data (issue 54): each prompt stored once, outcomes, safe inside a page."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from scipy import special
from tests.report.test_unit import _records, write_run

from enade_bench.report.browser import RECORD_COLUMNS, browser_data, option_values, outcome, score_columns
from enade_bench.report.loader import load_results
from enade_bench.report.table import HTML_ROWS, Table


def test_models_that_share_a_prompt_store_it_once(tmp_path: Path) -> None:
    write_run(tmp_path / "a", "alpha", "S1", [True, False, True])
    write_run(tmp_path / "b", "beta", "S1", [False, False, True])
    data = browser_data(load_results([tmp_path / "a", tmp_path / "b"]))
    assert len(data.records) == 6 and len(data.questions) == 3
    assert data.prompts == ["..."]  # the helper's records all read the same prompt
    assert {r[RECORD_COLUMNS.index("prompt")] for r in data.records} == {0}
    outcomes = [r[RECORD_COLUMNS.index("outcome")] for r in data.records]
    assert outcomes == ["right", "wrong", "right", "wrong", "wrong", "right"]


def test_a_question_carries_the_lint_checks_that_flagged_it_in_any_run(tmp_path: Path) -> None:
    paths = [
        write_run(tmp_path / "a", "alpha", "S1", [True, False]),
        write_run(tmp_path / "b", "beta", "S1", [True, True]),
    ]
    qid = json.loads(paths[0].read_text(encoding="utf-8"))["records"][0]["id"]
    for path, checks in zip(paths, (["image_reference"], ["image_reference", "short_stem"]), strict=True):
        raw = json.loads(path.read_text(encoding="utf-8"))
        raw["dataset"]["lint"] = {qid: checks}
        path.write_text(json.dumps(raw), encoding="utf-8")
    data = browser_data(load_results([tmp_path / "a", tmp_path / "b"]))
    flags = {q["id"]: q["lint"] for q in data.questions}
    assert flags[qid] == ["image_reference", "short_stem"] and sum(bool(f) for f in flags.values()) == 1


def test_outcomes_and_a_closing_tag_in_an_output() -> None:
    right, wrong = _records([True, False], [0, 1])
    unanswered = wrong.model_copy(update={"prediction": None, "raw_output": "</script><script>alert(1)"})
    error = wrong.model_copy(update={"prediction": None, "error": "HTTP 500"})
    assert [outcome(r) for r in (right, wrong, unanswered, error)] == [
        "right",
        "wrong",
        "unanswered",
        "error",
    ]


def test_the_document_cannot_close_its_script_element(tmp_path: Path) -> None:
    path = write_run(tmp_path / "a", "alpha", "S1", [True])
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["records"][0]["raw_output"] = "</script><!-- x"
    path.write_text(json.dumps(raw), encoding="utf-8")
    text = browser_data(load_results([tmp_path / "a"])).to_json()
    assert "<" not in text
    assert json.loads(text)["records"][0][RECORD_COLUMNS.index("raw")] == "</script><!-- x"


def test_a_long_table_shows_its_first_rows_and_names_its_file() -> None:
    """Before: the item flips of ten models (97,226 rows) made 34 MB of the page's HTML."""
    frame = pd.DataFrame({"item": [f"q{i}" for i in range(HTML_ROWS + 50)]})
    html = Table("comparison_flips", "Item flips", frame, frame).to_html()
    assert (
        html.count("<tr>") == 1 + HTML_ROWS + 1
        and f"q{HTML_ROWS - 1}<" in html
        and f"q{HTML_ROWS}<" not in html
    )
    assert "50 more rows in tables/comparison_flips.csv" in html


def test_scores_are_named_and_normalised_as_the_choice_is_made() -> None:
    """Before (issue 62): a log_prob record's "Option probabilities" were its mean log-probabilities
    per token (-3.059 = -125.43 / 41).  Now each value is named, and the probability beside it is the
    softmax of the means (scipy's), the quantity the choice maximises."""
    (record,) = _records([True], [0])
    sums, tokens = {"A": -125.43, "B": -60.2, "C": -300.0}, {"A": 41, "B": 12, "C": 90}
    scored = record.model_copy(
        update={
            "method": "log_prob",
            "n_options": 3,
            "option_scores": {c: sums[c] / tokens[c] for c in sums},
            "score_details": {c: {"sum_logprob": sums[c], "n_tokens": tokens[c]} for c in sums},
        }
    )
    names = score_columns("log_prob")
    assert names[:3] == ["mean log-probability per token", "summed log-probability", "tokens"]
    values = option_values(scored)
    assert values is not None
    expected = special.softmax([sums[c] / tokens[c] for c in "ABC"])
    for row, c, p in zip(values, "ABC", expected, strict=True):
        assert row[:3] == [sums[c] / tokens[c], sums[c], tokens[c]] and row[3] == pytest.approx(p, rel=1e-12)
    assert round(values[0][0], 3) == -3.059 and names[3].startswith("probability")


def test_a_records_usage_is_its_tokens_and_seconds_where_measured(tmp_path: Path) -> None:
    path = write_run(tmp_path / "a", "alpha", "S1", [True, False, True])
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["records"][0]["usage"] = {"input_tokens": 31, "output_tokens": 4, "seconds": 0.25}
    raw["records"][1]["usage"] = {"input_tokens": 164, "output_tokens": 6}  # a local model: no seconds
    path.write_text(json.dumps(raw), encoding="utf-8")
    data = browser_data(load_results([tmp_path / "a"]))
    usage = [r[RECORD_COLUMNS.index("usage")] for r in data.records]
    assert usage == [[31, 4, 0.25], [164, 6, None], None]
