"""The forest plot: its drawing from typed rows, and ``compare --out`` writing one per cell (issue 52, item 3)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.text import Annotation

from enade_bench.cli.main import main
from enade_bench.report.forest import ForestRow, forest_figure


def test_rows_sorted_bounds_as_arrows_from_zero_bands_and_an_unreachable_mdd_as_a_note() -> None:
    rows = [
        ForestRow("a − c", 40.0, "> 0", 0.0, 52.0, 23.0, 54.0, 26.0),
        ForestRow("b − c", 3.0, "interval", -11.0, 18.0, -12.0, 19.0, 21.0),
        ForestRow("c − d", -30.0, "< 0", -45.0, 0.0, -47.0, -10.0, math.inf),
    ]
    fig = forest_figure(rows, "S1: family strategy S1 (3 pairs)")
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["c − d", "b − c", "a − c"]  # by difference
    assert "family strategy S1" in ax.get_title()
    notes = [c for c in ax.get_children() if isinstance(c, Annotation)]
    arrows = [a for a in notes if a.arrow_patch is not None]
    assert sorted((a.xyann, a.xy) for a in arrows) == [((0.0, 0), (-45.0, 0)), ((0.0, 2), (52.0, 2))]
    bands = [
        c for c in ax.collections if c.__class__.__name__ in ("PolyCollection", "FillBetweenPolyCollection")
    ]
    widths = sorted(float(np.ptp(b.get_paths()[0].vertices[:, 0])) for b in bands)
    assert widths == [42.0, 52.0]  # +-MDD; not reachable: no band filling the row (issue 62) but a note
    assert [(a.get_text(), a.xy[1]) for a in notes if a.arrow_patch is None] == [
        ("MDD 80 %: not reachable", 0)
    ]


def test_compare_out_writes_a_forest_plot_per_cell_as_png_and_pdf_named_without_spaces(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(3)
    rows = [
        {
            "model": m,
            "item": f"q{i}",
            "correct": int(rng.random() < p),
            "strategy": s,
            "area": "CH",
            "language": "en",
        }
        for s in ("S1", "S2")
        for m, p in (("alpha", 0.85), ("beta", 0.55), ("gamma", 0.5))
        for i in range(40)
    ]
    pd.DataFrame(rows).to_csv(tmp_path / "long.csv", index=False)
    by = ["--by", "area", "--by", "language"]
    assert main(["compare", str(tmp_path / "long.csv"), "--out", str(tmp_path / "out"), *by]) == 0
    names = sorted(p.name for p in (tmp_path / "out" / "figures").iterdir() if "forest" in p.name)
    cells = ["forest_S1_area-CH_language-en", "forest_S2_area-CH_language-en"]  # no space, comma or bracket
    assert names == sorted(f"{c}.{ext}" for c in cells for ext in ("pdf", "png"))
    assert all((tmp_path / "out" / "figures" / n).stat().st_size > 1000 for n in names)


def test_the_mdd_range_is_drawn_on_both_sides_of_zero() -> None:
    row = ForestRow("a − b", 10.0, "interval", -2.0, 22.0, -4.0, 24.0, 15.0, (12.0, 19.0))
    (ax,) = forest_figure([row], "S1").axes
    ticks = [
        c for c in ax.collections if c.__class__.__name__ == "LineCollection" and c.get_linewidth()[0] == 2.5
    ]
    segments = sorted(tuple(float(x) for x in s[:, 0]) for s in ticks[0].get_segments())
    assert segments == [(-19.0, -12.0), (12.0, 19.0)]
