"""The shipped item-attribute CSV is what the derivation command writes from the shared question files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from tests.conftest import REPO_ROOT, SHARED_DATA, require_shared

from enade_bench.cli.main import main

SHIPPED = REPO_ROOT / "data" / "enem_item_attributes.csv"


def test_shipped_csv_matches_the_derivation(tmp_path: Path) -> None:
    require_shared("enem", "inep_items.csv")
    out = tmp_path / "attrs.csv"
    args = ["study", "--derive-attributes", str(out), "--enem-data", str(SHARED_DATA / "enem")]
    assert main([*args, "--year", "2019", "--year", "2022", "--year", "2023"]) == 0
    assert out.read_text() == SHIPPED.read_text()


def test_derived_attributes_read_the_text() -> None:
    """Spot checks against the question text itself (not against the code's output)."""
    require_shared("enem", "inep_items.csv")
    table = pd.read_csv(SHIPPED, dtype={"item_id": str})
    assert set(table["year"]) == {2019, 2022, 2023} and table["item_id"].is_unique
    # Every ENEM 2022 math item has a number somewhere; not every humanities item does.
    mt = table[(table["year"] == 2022) & (table["area"] == "MT")]
    ch = table[(table["year"] == 2022) & (table["area"] == "CH")]
    assert mt["has_numbers"].all() and not ch["has_numbers"].all()
    questions = pd.read_csv(SHARED_DATA / "enem" / "questions" / "pt-br" / "ENEM_2022_MT_CO_PROVA_1082.csv")
    described = questions["body"].str.contains("Descrição d", case=False).sum()
    assert abs(int(mt["image_description"].sum()) - int(described)) <= 3
