"""Issue 61: a comparison of many pairs says what it does; identical copies of a run are noted."""

from __future__ import annotations

import pandas as pd
import pytest

from bench.compare_models import long_table
from enade_bench.compare import analysis
from enade_bench.compare.analysis import compare_table


def test_a_long_comparison_announces_its_pairs_and_its_progress(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(analysis, "MANY_PAIRS", 3)
    monkeypatch.setattr(analysis, "PROGRESS_S", 0.0)  # every step said
    comparison = compare_table(long_table(3, questions=8))
    err = capsys.readouterr().err.splitlines()
    assert len(comparison.pairs) == 3
    assert err[0] == "compare: 3 pairs of models to test in 1 cell(s), then their adjusted intervals"
    assert [line.split(" (")[0] for line in err if "pairs tested" in line] == [
        f"compare: pairs tested: {k} for 3 pairs" for k in (1, 2, 3)
    ]
    assert any(line.startswith("compare: detectable differences computed: 3 for 3 pairs") for line in err)
    monkeypatch.setattr(analysis, "MANY_PAIRS", 4)
    monkeypatch.setattr(analysis, "PROGRESS_S", 60.0)
    compare_table(long_table(3, questions=8))
    assert capsys.readouterr().err == ""  # a short comparison: silent


def test_two_identical_copies_of_a_run_are_noted() -> None:
    table = long_table(3, questions=8)
    copy = table[table["model"] == "m001"].assign(model="m001_copy")
    notes = compare_table(pd.concat([table, copy], ignore_index=True)).notes
    assert [n for n in notes if "copies" in n] == [
        "all: m001, m001_copy have the same score and prediction on every question (copies of one run?): "
        "their differences are 0 by construction"
    ]
    assert not [n for n in compare_table(table).notes if "copies" in n]
