"""Issue 61: a comparison of many pairs says what it does, with the same numbers; identical copies of a run are
noted; a cell of too many pairs gets a note instead of a forest plot."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from bench.compare_models import long_table
from enade_bench.compare import analysis, render
from enade_bench.compare.analysis import compare_table

DATA = Path(__file__).parent / "data"


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


def test_pairs_csv_at_10_models_is_the_one_before_the_grid() -> None:
    """Issue 61: the grid, the flips of all pairs at once and the MDD kept per rejection region change
    no number: every value of pairs.csv as c6d78f2 wrote it (bench/compare_models.py --digest checks
    50 models and more; docs/comparisons.md)."""
    expected = pd.read_csv(DATA / "pairs_10_models_c6d78f2.csv", keep_default_na=False, na_values=[""])
    got = pd.read_csv(
        io.StringIO(compare_table(long_table(10)).pairs_frame().to_csv(index=False, float_format="%.17g")),
        keep_default_na=False,
        na_values=[""],
    )
    pd.testing.assert_frame_equal(got, expected, check_exact=False, rtol=1e-12, atol=0)


def test_a_cell_of_too_many_pairs_gets_a_note_instead_of_a_forest_plot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(render, "FOREST_PAIRS", 2)
    comp = compare_table(long_table(3, questions=8))
    section = render.comparison_section(comp, tmp_path)
    assert not list(tmp_path.glob("forest_*"))
    assert [n for n in section.notes if n.startswith("forest")] == [
        "forest plot of all not drawn: 3 pairs, more than the 2 one figure can show readably "
        "(comparison/pairs.csv holds every pair's statement)"
    ]
    monkeypatch.setattr(render, "FOREST_PAIRS", 3)
    section = render.comparison_section(comp, tmp_path)
    assert [f.png.name for f in section.figures if f.png.name.startswith("forest")] == ["forest_all.png"]
