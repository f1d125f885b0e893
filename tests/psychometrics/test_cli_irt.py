"""``enade-bench irt score`` / ``irt calibrate``: outputs, the oracle end to end, bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from enade_bench.benchmarks.enem.inep import booklet_items, patterns_to_matrix
from enade_bench.cli.main import main
from enade_bench.psychometrics.estimation import Quadrature, estimate_theta
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.psychometrics.personfit import simulate_responses

from .oracle import Oracle

ITEMS_CSV = "item_id,a,b,c\nq1,1.2,0.0,0.2\nq2,0.8,-1.0,\nq3,1.5,1.0,0.1\nq4,1.0,0.5,0.2\n"
RESPONSES_CSV = "respondent_id,q1,q2,q3,q4\nm1,1,0,1,0\nm2,1,1,1,1\nm3,,0,1,\n"


def _write(tmp_path: Path, items: str = ITEMS_CSV, responses: str = RESPONSES_CSV) -> tuple[Path, Path]:
    (tmp_path / "items.csv").write_text(items, encoding="utf-8")
    (tmp_path / "responses.csv").write_text(responses, encoding="utf-8")
    return tmp_path / "items.csv", tmp_path / "responses.csv"


def _score(tmp_path: Path, *extra: str) -> int:
    items, responses = tmp_path / "items.csv", tmp_path / "responses.csv"
    return main(
        [
            "irt",
            "score",
            "--items",
            str(items),
            "--responses",
            str(responses),
            "--out",
            str(tmp_path / "out.csv"),
            *extra,
        ]
    )


def test_score_writes_the_contract_columns(tmp_path: Path) -> None:
    _write(tmp_path)
    assert _score(tmp_path) == 0
    out = pd.read_csv(tmp_path / "out.csv")
    assert list(out.columns) == ["respondent_id", "theta", "se", "lz", "lz_star", "n_items", "n_correct"]
    items = ItemParams.from_arrays([1.2, 0.8, 1.5, 1.0], [0.0, -1.0, 1.0, 0.5], [0.2, 0.0, 0.1, 0.2])
    x = np.array([[1, 0, 1, 0], [1, 1, 1, 1], [np.nan, 0, 1, np.nan]])
    expected = estimate_theta(x, items, "eap")
    np.testing.assert_allclose(out["theta"], expected.theta, atol=1e-8)
    assert out["n_items"].tolist() == [4, 4, 2]
    assert out["n_correct"].tolist() == [2, 4, 1]
    assert out["lz"].isna().iloc[1]  # all correct: not assessable
    assert out["lz_star"].isna().all()  # EAP: no correction


def test_score_ml_scale_and_quadrature_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path)
    assert _score(tmp_path, "--method", "ml", "--scale", "enem:MT") == 0
    out = pd.read_csv(tmp_path / "out.csv")
    assert out.loc[1, "theta"] == np.inf
    assert np.isfinite(out["lz_star"].to_numpy()[0])
    finite = np.isfinite(out["theta"])
    np.testing.assert_allclose(out.loc[finite, "score"], 129.646 * out.loc[finite, "theta"] + 500.02)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("note: theta is not finite for 1 respondent(s): ")
    assert "(+inf: all 4 correct)" in err[0] and "use --method map, wle or eap" in err[0]
    assert _score(tmp_path, "--quadpts", "40", "--theta-lim", "4") == 0
    inep = pd.read_csv(tmp_path / "out.csv")
    items = ItemParams.from_arrays([1.2, 0.8, 1.5, 1.0], [0.0, -1.0, 1.0, 0.5], [0.2, 0.0, 0.1, 0.2])
    expected = estimate_theta(np.array([[1, 0, 1, 0]]), items, "eap", Quadrature(40, 4.0))
    assert inep.loc[0, "theta"] == pytest.approx(expected.theta[0], abs=1e-8)
    assert "lz_star" in capsys.readouterr().err


def test_score_reproduces_the_published_rows(
    tmp_path: Path, oracle: Oracle, inep_items: pd.DataFrame
) -> None:
    """End to end through CSV files: booklet 520 rows against mirt θ/SE and PerFit l_z."""
    rows = oracle.rows
    rows = rows[rows["CO_PROVA"].astype(str) == "520"].head(50)
    booklet = booklet_items(inep_items, 520)
    scored = booklet[booklet["scored"]]
    scored[["item_id", "a", "b", "c"]].to_csv(tmp_path / "items.csv", index=False)
    x = patterns_to_matrix(rows["RESPONSE_PATTERN"].tolist(), booklet)
    wide = pd.DataFrame(x, columns=scored["item_id"]).astype("Int64")
    wide.insert(0, "respondent_id", rows["ID"].to_numpy())
    wide.to_csv(tmp_path / "responses.csv", index=False)
    assert _score(tmp_path) == 0
    out = pd.read_csv(tmp_path / "out.csv")
    np.testing.assert_allclose(out["theta"], rows["IRT_SCORE"], atol=1e-3)
    np.testing.assert_allclose(out["se"], rows["IRT_SCORE_SE"], atol=1e-3)
    np.testing.assert_allclose(out["lz"], rows["LZ_SCORE"], atol=1e-3)


@pytest.mark.parametrize(
    ("items", "responses", "message"),
    [
        (ITEMS_CSV, "respondent_id,q1,q9\nm1,1,0\n", "column 'q9' is not an item"),
        (ITEMS_CSV, "respondent_id,q1,q2\nm1,1,2\n", "line 2, column 'q2': '2'; expected 1, 0 or empty"),
        (ITEMS_CSV, "respondent_id,q1,q2\nm1,1,0\nm2,yes,0\n", "line 3, column 'q1'"),
        (ITEMS_CSV, "q1,q2\n1,0\n", "missing column 'respondent_id'"),
        (ITEMS_CSV, "respondent_id,q1,q1\nm1,1,0\n", "repeated"),
        ("item_id,a,b,c\nq1,0,0,0.2\n", RESPONSES_CSV, "line 2, column a: 0.0 must be > 0"),
        ("item_id,a,b,c\nq1,1,0,0.2\nq2,-1,0,0\n", RESPONSES_CSV, "line 3, column a"),
        ("item_id,a,b,c\nq1,1,0,1.0\n", RESPONSES_CSV, "column c: 1.0 must be in [0, 1)"),
        ("item_id,a,b,c\nq1,1,0,-0.1\n", RESPONSES_CSV, "column c"),
        ("item_id,a,b\nq1,1,abc\n", RESPONSES_CSV, "column b: 'abc' is not a number"),
        ("item_id,a\nq1,1\n", RESPONSES_CSV, "missing column 'b'"),
        ("item_id,a,b\nq1,1,0\nq1,1,1\n", RESPONSES_CSV, "appears twice"),
    ],
)
def test_bad_input_exits_2_with_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], items: str, responses: str, message: str
) -> None:
    _write(tmp_path, items, responses)
    assert _score(tmp_path) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("error: ")
    assert message in err[0]
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--scale", "enem:XX"], "--scale"),
        (["--scale", "sat:MT"], "--scale"),
        (["--quadpts", "1"], "--quadpts"),
        (["--theta-lim", "-2"], "--theta-lim"),
        (["--method", "mle"], "invalid choice"),
    ],
)
def test_bad_options_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    _write(tmp_path)
    assert _score(tmp_path, *extra) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("error: ")
    assert message in err[0]


def test_missing_files_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["irt", "score", "--items", str(tmp_path / "nope.csv"), "--responses", "x", "--out", "y"])
    assert code == 2
    assert "nope.csv: file not found" in capsys.readouterr().err
    _write(tmp_path)
    code = main(
        [
            "irt",
            "score",
            "--items",
            str(tmp_path / "items.csv"),
            "--responses",
            str(tmp_path / "responses.csv"),
            "--out",
            str(tmp_path / "no" / "dir" / "out.csv"),
        ]
    )
    assert code == 2
    assert "does not exist" in capsys.readouterr().err


def test_calibrate_round_trip(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    true = ItemParams.from_arrays(
        rng.uniform(0.8, 1.8, 6), rng.uniform(-1, 1, 6), None, [f"i{k}" for k in range(6)]
    )
    theta = rng.normal(size=800)
    x = simulate_responses(theta, true, rng).astype(int)
    frame = pd.DataFrame(x, columns=list(true.item_ids))
    frame.insert(0, "respondent_id", [f"r{k}" for k in range(800)])
    frame.to_csv(tmp_path / "responses.csv", index=False)
    code = main(
        [
            "irt",
            "calibrate",
            "--responses",
            str(tmp_path / "responses.csv"),
            "--out",
            str(tmp_path / "items.csv"),
        ]
    )
    assert code == 0
    table = pd.read_csv(tmp_path / "items.csv")
    assert {"item_id", "a", "b", "c", "se_a", "se_b", "sx2_p"} <= set(table.columns)
    assert np.sqrt(np.mean((table["b"] - true.b) ** 2)) < 0.2
    # The calibrated table feeds irt score directly.
    assert _score(tmp_path) == 0


def test_calibrate_tidy_input_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tidy = "respondent,shuffle,item_id,correct\n" + "".join(
        f"m{r},{s},q{j},{(r + j + s) % 2}\n" for r in range(6) for s in range(2) for j in range(4)
    )
    (tmp_path / "tidy.csv").write_text(tidy, encoding="utf-8")
    code = main(
        ["irt", "calibrate", "--responses", str(tmp_path / "tidy.csv"), "--out", str(tmp_path / "t.csv")]
    )
    assert code == 0
    assert len(pd.read_csv(tmp_path / "t.csv")) == 4
    (tmp_path / "bad.csv").write_text("respondent,shuffle,item_id,correct\nm,0,q,3\n", encoding="utf-8")
    code = main(
        ["irt", "calibrate", "--responses", str(tmp_path / "bad.csv"), "--out", str(tmp_path / "t.csv")]
    )
    assert code == 2
    assert "line 2, column 'correct'" in capsys.readouterr().err
