"""``irt baseline``, ``irt cat`` and ``irt debias``: outputs and one-line errors on bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.conftest import require_shared

from enade_bench.cli.main import main

ITEMS_CSV = "item_id,a,b,c\n" + "".join(
    f"q{k},{1 + 0.1 * k:.2f},{-1.5 + 0.3 * k:.2f},0.15\n" for k in range(12)
)


def _files(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    (tmp_path / "items.csv").write_text(ITEMS_CSV, encoding="utf-8")
    rows = ["respondent_id," + ",".join(f"q{k}" for k in range(12))]
    for i in range(6):
        rows.append(f"r{i}," + ",".join(str(int(v)) for v in rng.random(12) < 0.5))
    (tmp_path / "responses.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return tmp_path / "items.csv", tmp_path / "responses.csv"


def test_cat_on_a_patterns_file_writes_per_pattern_csv_and_figure(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    items, responses = _files(tmp_path)
    out = tmp_path / "cat"
    args = [
        "irt",
        "cat",
        "--items",
        str(items),
        "--responses",
        str(responses),
        "--rule",
        "additive",
        "--target-se",
        "0.6",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "CAT over 6 patterns" in text and "items used: median" in text
    assert "SE <= max(0.6, full-test SE + 0.05)" in text
    per = pd.read_csv(out / "cat_patterns.csv")
    assert list(per["respondent_id"]) == [f"r{i}" for i in range(6)]
    assert ((per["se_cat"] <= per["target_se"]) | (per["n_items"] == 12)).all()
    assert np.allclose(per["target_se"], np.maximum(0.6, per["se_full"] + 0.05), atol=1e-5)
    assert (out / "cat_curve.png").is_file() and (out / "cat_curve.csv").is_file()


def test_cat_default_rule_is_the_quadrature_margin_after_15_items(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    items, responses = _files(tmp_path)
    out = tmp_path / "cat"
    assert (
        main(
            [
                "irt",
                "cat",
                "--items",
                str(items),
                "--responses",
                str(responses),
                "--min-items",
                "4",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert "SE <= max(0, sqrt(full-test SE² + 0.1²)) (at least 4 items)" in capsys.readouterr().out
    per = pd.read_csv(out / "cat_patterns.csv")
    assert np.allclose(per["target_se"], np.sqrt(per["se_full"] ** 2 + 0.1**2), atol=1e-5)
    assert (per["n_items"] >= 4).all()


def test_baseline_with_items_file_and_seed_spread(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    items, _ = _files(tmp_path)
    out = tmp_path / "base"
    args = [
        "irt",
        "baseline",
        "--items",
        str(items),
        "--shuffles",
        "20",
        "--seeds",
        "4",
        "--shuffle-counts",
        "5,20",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "accuracy" in text and "seed-to-seed spread" in text
    per = pd.read_csv(out / "baseline_shuffles.csv")
    assert len(per) == 20 and per["accuracy"].between(0, 1).all()
    spread = pd.read_csv(out / "baseline_seed_spread.csv")
    assert list(spread["n_shuffles"]) == [5, 20]
    assert (out / "baseline_seed_spread.json").is_file()


def test_baseline_enem_year_reproduces_the_table_layout(capsys) -> None:  # type: ignore[no-untyped-def]
    enem = require_shared("enem")
    assert main(["irt", "baseline", "--year", "2022", "--area", "MT", "CH", "--enem-data", str(enem)]) == 0
    text = capsys.readouterr().out
    header = text.splitlines()[1]
    for col in ("exam", "items", "accuracy", "θ (EAP)", "SE", "l_z", "ENEM score"):
        assert col in header
    assert "\n  MT " in text and "\n  CH " in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["irt", "baseline", "--year", "2022", "--shuffles", "0"], "--shuffles 0"),
        (["irt", "baseline", "--year", "2020", "--area", "MT"], "no MT 2020 booklet with INEP parameters"),
        (["irt", "baseline", "--year", "2022", "--area", "XX"], "--area XX"),
        (["irt", "baseline"], "give --year"),
        (["irt", "cat", "--items", "x.csv"], "--items and --responses go together"),
        (["irt", "cat", "--randomesque", "0"], "--randomesque 0"),
        (["irt", "debias", "/nonexistent-folder"], "nonexistent"),
    ],
)
def test_bad_input_is_one_error_line(args: list[str], message: str, capsys) -> None:  # type: ignore[no-untyped-def]
    if "--year" in args and "--shuffles" not in args:
        args = [*args, "--enem-data", str(require_shared("enem"))]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0]


def test_cat_live_refuses_a_config_whose_questions_are_not_enem(capsys) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import REPO_ROOT

    require_shared("enem")
    assert main(["irt", "cat-live", str(REPO_ROOT / "configs" / "demo.yaml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "dataset.path" in err[0] and "ENEM_2019_MT_CO_PROVA_522" in err[0]
