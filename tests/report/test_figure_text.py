"""Data text in figures is drawn as written, and a run with no scored answer draws no bar (issue 32).

Before: a group value ``Química ($\\ce{H_2O}$)`` made ``report`` fail with a mathtext
traceback while saving the figures, ``R$ 10 e R$ 20`` was drawn as maths, and a model
whose every answer was an error sat in ``comparison.png``'s legend with no bar.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.text import Text

from enade_bench.metrics import field_breakdowns, position_bias, summarize
from enade_bench.report import load_results, write_report
from enade_bench.report.figures import comparison_figure, core_figures, save, summary_figure
from enade_bench.results.records import QuestionRecord, RunResult

CHEMISTRY, MONEY = r"Química ($\ce{H_2O}$)", "R$ 10 e R$ 20"


def _record(i: int, course: str, ok: bool, error: str | None = None) -> QuestionRecord:
    return QuestionRecord(
        id=f"q{i}",
        fields={"year": 2020, "course": course},
        n_options=4,
        answer="A",
        prediction=None if error else ("A" if ok else "B"),
        correct=ok and not error,
        method="generation",
        shot="zero",
        strategy="S1",
        permutation=None,
        answer_position=0,
        predicted_position=None if error else (0 if ok else 1),
        displayed_prediction=None if error else "A",
        extraction_rule=None if error else "resposta",
        question_hash="h",
        prompt_hash="p",
        prompt="...",
        error=error,
    )


def _write(folder: Path, name: str, records: list[QuestionRecord]) -> None:
    result = RunResult.model_validate(
        dict(
            experiment=name,
            strategy={
                "id": "S1",
                "label": "generation, zero-shot",
                "method": "generation",
                "shot": "zero",
                "shuffle": False,
                "n_shuffles": 1,
            },
            config={"name": name, "model": {"name": f"model {name}"}},
            seed=1,
            environment={"python": "3.11", "libraries": {}, "git": {}},
            model={"backend": "test", "name": name},
            dataset={"sources": [], "filter_counts": {}, "invalid_rows": [], "n_evaluated": len(records)},
            prompts={},
            totals=summarize(records),
            breakdowns=field_breakdowns(records, ("year", "course")),
            position_bias=position_bias(records),
            records=records,
        )
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}_S1_results.json").write_text(
        json.dumps(result.model_dump(mode="json")), encoding="utf-8"
    )


def _texts(fig: plt.Figure) -> list[Text]:
    fig.canvas.draw()  # mathtext is parsed here: a bad formula raised before
    return [t for t in fig.findobj(Text) if "$" in t.get_text()]


def test_dollar_signs_in_group_values_are_drawn_literally(tmp_path: Path) -> None:
    _write(tmp_path / "r", "alpha", [_record(i, [CHEMISTRY, MONEY][i % 2], i % 3 == 0) for i in range(6)])
    entries = load_results([tmp_path / "r"])
    fig = summary_figure(entries)
    drawn = _texts(fig)
    assert {t.get_text() for t in drawn} >= {CHEMISTRY, MONEY}
    # matplotlib's own test of whether a text goes through mathtext
    assert not [t.get_text() for t in drawn if t._preprocess_math(t.get_text())[1]]  # type: ignore[attr-defined]
    plt.close(fig)
    report = write_report(entries, tmp_path / "out", folders=[tmp_path / "r"])  # saved as PNG and PDF
    assert all(f.png.stat().st_size > 1000 for f in report.figures)


def test_a_model_whose_every_answer_is_an_error_is_left_out_and_said(tmp_path: Path) -> None:
    _write(tmp_path / "r", "alpha", [_record(i, "Medicina", i % 2 == 0) for i in range(4)])
    _write(tmp_path / "r", "broken", [_record(i, "Medicina", False, error="HTTP 401") for i in range(4)])
    entries = load_results([tmp_path / "r"])
    fig = comparison_figure(entries)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["alpha"]
    plt.close(fig)
    (comparison, *_) = core_figures(entries, tmp_path / "figures")
    assert "Left out, every answer an error (no accuracy): broken S1." in comparison.caption


def test_control_characters_in_names_are_drawn_as_escapes_without_warnings(tmp_path: Path) -> None:
    """Issue 51 (unclear case decided): a NUL or an ESC in a group value gave 5-10 glyph warnings."""
    _write(
        tmp_path / "r",
        "alpha",
        [_record(i, ["Medi\x00cina", "Enf\x1b[31m"][i % 2], i % 2 == 0) for i in range(4)],
    )
    entries = load_results([tmp_path / "r"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a glyph warning would fail the test
        saved = save(summary_figure(entries), tmp_path / "fig", "summary", "")
    assert saved.png.stat().st_size > 1000
