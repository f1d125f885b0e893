"""The shapes of the public benchmarks, config-only; a headerless CSV never loses a row (issue 60).

Before: MMLU's headerless CSV, mapped by its first row's cells, loaded 4 of its 5 questions with
``ok``; MedMCQA's ``cop: 1`` got a hint about annulled items; ARC's ``choices`` was refused
(``option key 'text' is not a letter``); a stem part holding a list was refused.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from enade_bench.benchmarks import run_config
from enade_bench.cli.main import main
from enade_bench.config import DatasetConfig, load_config
from enade_bench.dataset import load_dataset
from enade_bench.dataset.loader import _check_balance
from enade_bench.errors import UserError
from enade_bench.runner.plan import RunOptions

SHAPES = Path(__file__).parent / "data" / "public_shapes"
#: The gold answers, read by hand from each file (MedMCQA's cop 3, 3, 4, 1, 2; ARC's labels 2 and 1).
GOLD = {
    "mmlu": ["D", "D", "C", "C", "B"],
    "medmcqa": ["C", "C", "D", "A", "B"],
    "arc": ["A", "B", "B", "A", "B"],
    "medqa": ["E", "A"],
}


def _load(name: str, **changes: object) -> list[tuple[str, str, tuple[str, ...]]]:
    cfg = load_config(SHAPES / f"{name}.yaml").dataset
    cfg = DatasetConfig.model_validate({**cfg.model_dump(exclude_unset=True), **changes})
    return [(q.id, q.answer, q.options) for q in load_dataset(cfg, SHAPES).questions]


@pytest.mark.parametrize("name", sorted(GOLD))
def test_each_shape_loads_config_only_in_ten_lines_with_every_gold_right(name: str) -> None:
    assert len((SHAPES / f"{name}.yaml").read_text(encoding="utf-8").splitlines()) <= 10
    loaded = _load(name)
    assert [answer for _, answer, _ in loaded] == GOLD[name]
    assert all(len(options) == (5 if name == "medqa" else 4) for _, _, options in loaded)


def test_a_headerless_csv_is_refused_naming_the_setting_never_loaded_short(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(SHAPES / "mmlu_anatomy_test.csv", tmp_path)
    config = tmp_path / "exam.yaml"
    lines = (SHAPES / "mmlu.yaml").read_text(encoding="utf-8").splitlines()
    config.write_text("\n".join(line for line in lines if "header" not in line), encoding="utf-8")
    assert main(["validate", str(config)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "mmlu_anatomy_test.csv: line 1" in err[0]
    assert "seems to have no header (its cell 'D' reads like an answer letter)" in err[0]
    assert "dataset.header: false" in err[0]
    # the columns named by a list instead of numbers: the same five questions
    names = {"header": ["question", "A", "B", "C", "D", "answer"], "columns": {"stem": "question"}}
    assert [answer for _, answer, _ in _load("mmlu", **names)] == GOLD["mmlu"]
    assert _load("mmlu", **names)[0][2][0] == "The first pharyngeal arch"


def test_a_real_header_is_not_taken_for_data() -> None:
    path = Path(__file__).parents[2] / "data" / "enade_demo.csv"
    assert load_dataset(DatasetConfig(path=str(path), benchmark="enade")).questions


def test_an_answer_given_as_a_number_names_answer_index(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UserError) as caught:
        _load("medmcqa", answer_index=None)
    message = str(caught.value)
    assert "column 'cop': answer '3' is not among the non-empty options (A–D)" in message
    assert "set dataset.answer_index: 1" in message and "annulled" not in message
    # counted from 0, MedMCQA's cop 4 is no option: refused, never shifted quietly
    with pytest.raises(UserError, match=r"answer '4' is not an option's number 0–3"):
        _load("medmcqa", answer_index=0)


def test_a_stem_part_holding_a_list_is_its_texts_joined(tmp_path: Path) -> None:
    cfg = DatasetConfig(
        path=str(SHAPES / "attachments.jsonl"),
        stem=["attachments", "question"],
        columns={"options": "options"},
    )
    first, second = load_dataset(cfg).questions
    assert first.stem == (
        "Texto I: Em 2020, a cidade tinha 40 000 habitantes.\n\nTexto II: Em 2024, a cidade tinha "
        "50 000 habitantes.\n\nSegundo os textos, de quantos por cento cresceu a população entre 2020 e 2024?"
    )
    assert second.stem == "Quanto é 7 vezes 8?"  # an empty list leaves no stray blank line


@pytest.mark.slow
@pytest.mark.parametrize("name", ["medmcqa", "arc"])
def test_a_run_records_every_gold_answer_right(tmp_path: Path, smollm2_backend, name: str) -> None:  # type: ignore[no-untyped-def]
    for path in SHAPES.glob(f"{name}.*"):
        shutil.copy(path, tmp_path)
    config = tmp_path / f"{name}.yaml"
    config.write_text(
        config.read_text(encoding="utf-8") + "evaluation: {method: first_token}\n", encoding="utf-8"
    )
    run_config(config, RunOptions(progress=False, backend_factory=lambda c: smollm2_backend))
    (results,) = (tmp_path / "out").glob(f"{name}*_results.json")
    records = json.loads(results.read_text(encoding="utf-8"))["records"]
    assert [r["answer"] for r in records] == GOLD[name]


def test_a_row_lost_under_no_cause_is_an_error() -> None:
    _check_balance({"loaded": 5, "removed_invalid": 1, "removed_has_image": 1, "kept": 3})
    with pytest.raises(UserError, match=r"5 row\(s\) read, but 3 kept and 1 removed .*1 row\(s\) lost"):
        _check_balance({"loaded": 5, "removed_invalid": 1, "kept": 3})
