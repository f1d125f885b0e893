"""``irt patterns``: the ENEM shuffle run's response patterns feed ``irt score``."""

import csv
import json
from pathlib import Path

import pytest
from tests.conftest import require_shared
from tests.report.conftest import ENEM_SHUFFLES

from enade_bench.cli.main import main


@pytest.mark.slow
def test_patterns_of_a_real_enem_run_feed_irt_score(results_root: Path, tmp_path: Path) -> None:
    enem = require_shared("enem")
    (result_file,) = sorted((results_root / "enem").glob("*_results.json"))
    records = json.loads(result_file.read_text())["records"]
    # item id of each record, independently: booklet 1082, position = question_number
    with (enem / "inep_items.csv").open() as handle:
        item_at = {r["CO_POSICAO"]: r["CO_ITEM"] for r in csv.DictReader(handle) if r["CO_PROVA"] == "1082"}
    assert (
        main(
            ["irt", "patterns", str(results_root / "enem"), "--out", str(tmp_path), "--enem-data", str(enem)]
        )
        == 0
    )
    with (tmp_path / "enem_2022_MT_1082_responses.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == ENEM_SHUFFLES
    for r in records:
        item = item_at[r["id"].split(":")[1]]
        row = next(x for x in rows if x["respondent_id"].endswith(f"#s{r['shuffle']}"))
        assert row[item] == str(int(r["correct"]))
    out = tmp_path / "scores.csv"
    assert (
        main(
            [
                "irt",
                "score",
                "--items",
                str(tmp_path / "enem_2022_MT_1082_items.csv"),
                "--responses",
                str(tmp_path / "enem_2022_MT_1082_responses.csv"),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    with out.open() as handle:
        scores = list(csv.DictReader(handle))
    assert [s["respondent_id"] for s in scores] == [r["respondent_id"] for r in rows]
    for s, r in zip(scores, rows, strict=True):
        assert int(s["n_correct"]) == sum(v == "1" for k, v in r.items() if k != "respondent_id")
