"""The long-format CSV any harness can export: read strictly, one error line on bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from enade_bench.cli.main import main
from enade_bench.compare.table import read_long_csv

GOOD = "model,item,replicate,correct,cluster,year\na,q1,0,1,s1,2020\na,q1,1,0,s1,2020\nb,q1,0,1,s1,2020\n"


def test_reads_fields_and_defaults(tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    path.write_text("model,item,correct,course\na,q1,1,Med\nb,q1,0,Med\n", encoding="utf-8")
    table = read_long_csv(path)
    assert table["replicate"].tolist() == ["0", "0"] and table["correct"].tolist() == [1, 0]
    assert table["course"].tolist() == ["Med", "Med"] and (table["strategy"] == "-").all()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("model,item\na,q1\n", "missing column(s) correct"),
        ("model,item,correct\na,q1,yes\n", "row 2: column 'correct' is 'yes'; expected 0 or 1"),
        ("model,item,correct\na,,1\n", "row 2: column 'item' is empty"),
        (
            GOOD + "a,q1,1,1,s1,2020\n",
            "row 5: model 'a', item 'q1', replicate '1', year '2020' appears more than once (first at row 3)",
        ),
        ("", "not a readable UTF-8 CSV"),
    ],
)
def test_bad_csv_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str
) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    assert main(["compare", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and expected in err[0], err
    assert not (tmp_path / "out" / "pairs.csv").exists()


def test_one_model_or_unknown_field_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "long.csv"
    path.write_text(GOOD, encoding="utf-8")
    assert main(["compare", str(path), "--out", str(tmp_path / "o"), "--by", "area"]) == 2
    assert "--by area: no such field (fields: year)" in capsys.readouterr().err
    path.write_text("model,item,correct\na,q1,1\n", encoding="utf-8")
    assert main(["compare", str(path), "--out", str(tmp_path / "o")]) == 2
    assert "needs two or more models" in capsys.readouterr().err
