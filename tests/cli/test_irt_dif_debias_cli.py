"""``irt dif`` and ``irt debias`` on a real (small) shuffled SmolLM2 run of ENEM 2022 MT."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from tests.conftest import REPO_ROOT, require_shared

from enade_bench.cli.main import main

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def mt_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """First 12 questions × 5 shuffles, first_token (the config of the paper's MT run, shortened)."""
    csv = require_shared("enem", "questions", "pt-br", "ENEM_2022_MT_CO_PROVA_1082.csv")
    work = tmp_path_factory.mktemp("mt")
    config = yaml.safe_load(
        (REPO_ROOT / "configs" / "enem_2022_mt_shuffles.yaml").read_text(encoding="utf-8")
    )
    config["dataset"]["path"] = str(csv)
    config["evaluation"]["n_shuffles"] = 5
    (work / "cfg.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    out = work / "results"
    assert main(["run", str(work / "cfg.yaml"), "--limit", "12", "--output-dir", str(out), "--quiet"]) == 0
    return out


def test_debias_prints_bpc_before_and_after(mt_run: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["irt", "debias", str(mt_run), "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "BPC TVD raw" in text and "letter prior" in text
    (csv,) = tmp_path.glob("*_debiased.csv")
    rows = pd.read_csv(csv)
    assert len(rows) == 60
    assert set(rows["raw_position"]) == {0}  # SmolLM2 answers A throughout
    assert rows["position"].nunique() >= 3  # the corrected picks spread over the letters


def test_dif_lists_items_and_writes_the_table(mt_run: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    enem = require_shared("enem")
    for extra in ([], ["--debias"]):
        assert (
            main(
                [
                    "irt",
                    "dif",
                    str(mt_run),
                    "--enem-data",
                    str(enem),
                    "--out",
                    str(tmp_path),
                    "--min-n",
                    "5",
                    *extra,
                ]
            )
            == 0
        )
    text = capsys.readouterr().out
    assert "ENEM 2022 MT pt-br (booklet 1082): 5 patterns" in text and "[letter-prior corrected]" in text
    raw = pd.read_csv(tmp_path / "dif_2022_MT_1082.csv")
    assert len(raw) >= 10 and (raw["n"] == 5).all()
    assert raw["p"].between(0, 1).all() and (raw["q"] >= raw["p"] - 1e-12).all()
    assert (tmp_path / "dif_2022_MT_1082_debiased.csv").is_file()
    assert "(unit: model; between-shuffle ρ" in text  # the default: the model is the unit
    assert (raw["models"] == 1).all()


def test_dif_unit_pattern_pools_the_shuffles(mt_run: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    enem = require_shared("enem")
    args = ["irt", "dif", str(mt_run), "--enem-data", str(enem), "--min-n", "5", "--unit", "pattern"]
    assert main([*args, "--out", str(tmp_path)]) == 0
    assert "(unit: pattern)" in capsys.readouterr().out
    pooled = pd.read_csv(tmp_path / "dif_2022_MT_1082.csv")
    assert "models" not in pooled.columns and pooled["g2"].notna().all()
    assert main([*args[:-1], "respondent"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")


def test_dif_untested_items_are_noted(mt_run: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["irt", "dif", str(mt_run), "--enem-data", str(require_shared("enem"))]) == 0
    assert "fewer than 10 patterns are not tested" in capsys.readouterr().out


def test_dif_on_a_folder_without_enem_runs_is_one_error_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["irt", "dif", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
