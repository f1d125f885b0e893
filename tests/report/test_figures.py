"""The figures a reader looks at (issue 62): readable at 10 models x 6 strategies, in percent,
intervals on every accuracy panel, titles that do not overprint."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.collections import LineCollection
from tests.report.test_unit import write_run

from enade_bench.report.figures import comparison_figure, position_figure, summary_figure
from enade_bench.report.loader import load_results

STRATEGIES = ("S1", "S2", "S3", "S4", "S5", "S6")


def test_ten_models_by_six_strategies_is_one_panel_a_strategy_a_row_a_model(tmp_path: Path) -> None:
    """Before: one strip of 60 bars 33 inches wide, its legend over the intervals, in proportions."""
    models = [f"model{m:02d}" for m in range(10)]
    for m, name in enumerate(models):
        for s in STRATEGIES:
            write_run(tmp_path / name, name, s, [(m + i) % 3 == 0 for i in range(6)])
    fig = comparison_figure(load_results([tmp_path / m for m in models]))
    panels = [ax for ax in fig.axes if ax.get_visible()]
    width, height = fig.get_size_inches()
    assert [ax.get_title() for ax in panels] == list(STRATEGIES)
    assert width <= 10 and 0.5 < height / width < 1.5, (width, height)
    top_down = sorted(panels[0].get_yticklabels(), key=lambda t: -t.get_position()[1])
    assert [t.get_text() for t in top_down] == models  # the first model on top
    assert all(ax.get_legend() is None and ax.get_xlim() == (0, 100) for ax in panels)
    assert "accuracy (%)" in fig.get_supxlabel()
    plt.close(fig)


def _overlap(a: object, b: object) -> bool:
    return bool(a.overlaps(b))  # type: ignore[attr-defined]


def test_summary_panels_have_intervals_and_titles_do_not_overprint(tmp_path: Path) -> None:
    for s in ("S1", "S2"):
        write_run(tmp_path, "alpha", s, [True, False, True, True, False, False])
    entries = load_results([tmp_path])
    fig = summary_figure(entries)
    course, year = fig.axes[1], fig.axes[2]
    for ax in (course, year):  # one error bar per bar drawn (Wilson 95 %), in percent
        bars = [p for p in ax.patches if p.get_height() == p.get_height()]
        caps = [c for c in ax.collections if isinstance(c, LineCollection)]
        assert len(bars) > 0 and sum(len(c.get_segments()) for c in caps) == len(bars)
        assert ax.get_ylim() == (0, 100)
    plt.close(fig)
    fig = position_figure(entries[0])
    assert fig is not None
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    title = fig._suptitle.get_window_extent(renderer)  # type: ignore[union-attr]
    assert not any(_overlap(title, ax.title.get_window_extent(renderer)) for ax in fig.axes)
    plt.close(fig)
