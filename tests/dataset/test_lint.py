"""The exam-file lint and ``dataset.strip`` on what PDF extraction leaves (issue 42).

Before: a page footer ending option D of 6 of 20 questions, stems cut into option A,
chart residue, a questionnaire glued onto an option and ``[[placeholder]]`` image
markers all reached the model without a word.  ``data/pdf_debris/README.md`` says
which question of the fixture carries which debris.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from enade_bench.benchmarks import load_experiment
from enade_bench.cli.main import main
from enade_bench.config import DatasetConfig
from enade_bench.dataset import load_dataset
from enade_bench.dataset.lint import lint
from enade_bench.dataset.schema import Question
from enade_bench.errors import UserError
from enade_bench.runner.plan import RunOptions

DEBRIS = Path(__file__).parent / "data" / "pdf_debris"
DEMO = Path(__file__).parents[2] / "data" / "enade_demo.csv"
FOOTER = ["2", "5", "8", "11", "14", "17"]


def _config(**changes: object) -> DatasetConfig:
    raw = yaml.safe_load((DEBRIS / "exam.yaml").read_text(encoding="utf-8"))["dataset"]
    return DatasetConfig.model_validate({**raw, "path": str(DEBRIS / "questoes.json"), **changes})


def _by_check(warnings: list) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for w in warnings:
        out.setdefault(w.check, []).append(w.qid)
    return out


def test_each_shape_is_flagged_on_its_questions_and_no_clean_one_is() -> None:
    found = _by_check(load_dataset(_config()).warnings)
    assert found == {
        "repeated_tail": FOOTER,
        "stem_in_option": ["3", "9"],
        "numeric_residue": ["7"],
        "long_option": ["13"],
        "image_marker": ["16", "19", "20"],
        "duplicate_stem": ["21"],
    }


def test_the_demo_exam_has_no_warning() -> None:
    assert lint(load_dataset(DatasetConfig(path=str(DEMO), benchmark="enade")).questions) == []


def test_phrases_shared_by_design_are_not_footers() -> None:
    # assertion-reason options repeat whole; "… está correta." ends options after varied text;
    # "Assinale a opção correta." ends stems after a full stop: none is debris
    questions = [
        Question(
            id=f"q{i}",
            stem=f"Texto {i} sobre o tema {i * 7}. Assinale a opção correta.",
            options=(
                f"Apenas a afirmativa {'I' * (i % 3 + 1)} está correta.",
                "As asserções I e II são proposições verdadeiras, e a II é uma justificativa da I.",
                f"Nenhuma afirmativa sobre {i} está correta.",
            ),
            answer="A",
        )
        for i in range(12)
    ]
    assert lint(questions) == []


def test_strip_removes_the_footer_and_records_it() -> None:
    loaded = load_dataset(
        _config(strip=["2023 SEGUNDA EDIÇÃO", {"regex": r"(?:\s\d+){5} Homem Mulher Ambos$"}])
    )
    by_id = {q.id: q for q in loaded.questions}
    assert all(not q.options[3].endswith("EDIÇÃO") for q in loaded.questions)
    assert by_id["2"].options[3] == "Observar a evolução clínica de a hipertensão arterial sem intervenção."
    assert by_id["7"].options[2].endswith("exige acompanhamento.")
    assert loaded.counts["stripped"] == 7
    assert set(_by_check(loaded.warnings)) == {
        "stem_in_option",
        "long_option",
        "image_marker",
        "duplicate_stem",
    }


def test_a_bad_strip_regex_is_refused() -> None:
    with pytest.raises(ValueError, match="not a regular expression"):
        _config(strip=[{"regex": "(unclosed"}])
    with pytest.raises(ValueError, match="matches the empty text"):
        _config(strip=[{"regex": "x*"}])


def test_a_strip_that_empties_a_stem_is_an_error() -> None:
    with pytest.raises(UserError, match=r"line \d+, column 'enunciado': empty stem once dataset.strip"):
        load_dataset(_config(strip=[{"regex": r"^Paciente de$"}]))


@pytest.mark.parametrize(
    ("name", "body", "columns"),
    [
        ("q.csv", "id,stem,A,B,answer\n1,Veja [[placeholder]] e responda.,a,b,A\n2,Qual?,a,b,B\n", None),
        (
            "q.jsonl",
            '{"id": 1, "stem": "Qual?", "A": "<img src=x>", "B": "b", "answer": "A"}\n'
            '{"id": 2, "stem": "Qual?!", "A": "a", "B": "b", "answer": "B"}\n',
            None,
        ),
        (
            "q.json",
            json.dumps(
                [
                    {"n": 1, "t": "Observe (figura 2).", "o": ["a", "b"], "g": "A"},
                    {"n": 2, "t": "Qual?", "o": ["a", "b"], "g": "B"},
                ]
            ),
            {"id": "n", "stem": "t", "options": "o", "answer": "g"},
        ),
    ],
)
def test_image_markers_drop_the_questions_in_every_file_shape(
    tmp_path: Path, name: str, body: str, columns: dict | None
) -> None:
    (tmp_path / name).write_text(body, encoding="utf-8")
    cfg = DatasetConfig.model_validate({"path": str(tmp_path / name), "columns": columns})
    assert [w.qid for w in load_dataset(cfg).warnings] == ["1"]
    loaded = load_dataset(cfg.model_copy(update={"image_markers": True}))
    assert [q.id for q in loaded.questions] == ["2"] and loaded.counts["removed_has_image"] == 1


def test_validate_prints_the_warnings_and_strict_makes_them_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("enade_bench.runner.run.create_backend", lambda *_: pytest.fail("no model loads"))
    raw = yaml.safe_load((DEBRIS / "exam.yaml").read_text(encoding="utf-8"))
    raw["dataset"]["path"] = str(DEBRIS / "questoes.json")
    raw["output"]["dir"] = str(tmp_path / "out")
    config = tmp_path / "exam.yaml"
    config.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    assert main(["validate", str(config)]) == 0
    out = capsys.readouterr().out
    assert "exam-file lint: 14 warnings (--strict makes them problems)" in out
    assert (
        "warning: question '2': option D ends with '2023 SEGUNDA EDIÇÃO', as do texts of 6 questions" in out
    )
    assert main(["validate", str(config), "--strict"]) == 2
    captured = capsys.readouterr()
    assert "problem: lint: question '16': stem holds '[[placeholder]]'" in captured.out
    assert "14 problem(s) found" in captured.err and "Traceback" not in captured.err


def test_the_strip_is_part_of_the_recorded_config_and_counts(tmp_path: Path) -> None:
    """What ``dataset.strip`` removed is recorded: the config a results file holds, and ``filter_counts``."""
    raw = yaml.safe_load((DEBRIS / "exam.yaml").read_text(encoding="utf-8"))
    strip = ["2023 SEGUNDA EDIÇÃO", {"regex": r"(?:\s\d+){5} Homem Mulher Ambos$"}]
    raw["dataset"] |= {"path": str(DEBRIS / "questoes.json"), "strip": strip}
    raw["output"]["dir"] = str(tmp_path / "out")
    config = tmp_path / "exam.yaml"
    config.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    _, exp = load_experiment(config, RunOptions(strategies=["S1"]))
    assert exp.config.public_dict()["dataset"]["strip"] == strip  # type: ignore[index,call-overload]
    assert exp.dataset.counts["stripped"] == 7
