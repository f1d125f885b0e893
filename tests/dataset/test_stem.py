"""Stems composed from several fields, config-only (issue 50, item 5)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from enade_bench.cli.main import main
from enade_bench.config import DatasetConfig
from enade_bench.dataset import load_dataset
from enade_bench.dataset.stem import StemTemplate
from enade_bench.errors import UserError

ENEM2025 = Path(__file__).parent / "data" / "enem2025_shape"


def _cells(**values: str):
    return lambda name: values.get(name, "")


@pytest.mark.parametrize(
    ("spec", "cells", "stem"),
    [
        (["context", "question"], {"context": "Texto.", "question": "Pergunta?"}, "Texto.\n\nPergunta?"),
        (
            ["context", "question"],
            {"context": "  ", "question": "Pergunta?"},
            "Pergunta?",
        ),  # no stray blank line
        ("{context}\n\n{question}", {"context": "", "question": "Pergunta?"}, "Pergunta?"),
        ("{context}\n\n{question}", {"context": "T.", "question": "P?"}, "T.\n\nP?"),
        (["question", "Imagem: {image_description}"], {"question": "P?"}, "P?"),  # no label alone
        (
            ["question", "Imagem: {image_description}"],
            {"question": "P?", "image_description": "Um mapa."},
            "P?\n\nImagem: Um mapa.",
        ),
    ],
)
def test_parts_joined_by_a_blank_line_and_empty_parts_left_out(
    spec: str | list[str], cells: dict[str, str], stem: str
) -> None:
    assert StemTemplate(spec).render(_cells(**cells)) == stem


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ([], "no part"),
        (["Imagem: sem coluna"], "names no column"),
        (["{0}"], "names no column"),
        (["{ctx"], "not a template"),
    ],
)
def test_a_part_that_reads_no_column_is_an_error(spec: list[str], message: str) -> None:
    with pytest.raises(UserError, match=message):
        StemTemplate(spec)


def test_enem_2025_loads_config_only_with_the_composed_stem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("enem2025.jsonl", "exam.yaml"):
        shutil.copy(ENEM2025 / name, tmp_path / name)
    config = tmp_path / "exam.yaml"
    raw = yaml.safe_load(config.read_text(encoding="utf-8"))["dataset"]
    questions = {q.id: q for q in load_dataset(DatasetConfig.model_validate(raw), tmp_path).questions}
    assert questions["2025_1"].stem.startswith("Em 2024, uma cidade registrou")
    assert questions["2025_1"].stem.endswith(
        "\n\nNessas condições, a razão entre os casos do verão e os do inverno é"
    )
    assert questions["2025_2"].stem == "Qual é a quantidade de S₁, em litro, que será retirada?"
    assert questions["2025_3"].stem.endswith(
        "\n\nDescrição da imagem: Gráfico de linhas com a temperatura de "
        "janeiro (31 °C) a dezembro (29 °C), mínimo em julho (18 °C)."
    )
    assert questions["2025_3"].has_image and questions["2025_1"].answer == "C"
    assert not any(k in ("context", "question") for q in questions.values() for k, _ in q.extra)
    assert main(["validate", str(config), "--strategy", "S1"]) == 0
    out = capsys.readouterr().out
    assert (
        "Em 2024, uma cidade registrou 1 200 casos de dengue no verão e 300 no inverno.\n\nNessas condições"
        in out
    )


def test_stem_and_columns_stem_together_is_an_error(tmp_path: Path) -> None:
    raw = {
        "path": str(ENEM2025 / "enem2025.jsonl"),
        "stem": ["context", "question"],
        "columns": {"stem": "question", "options": "alternatives", "answer": "label"},
    }
    with pytest.raises(UserError, match="remove one of the two"):
        load_dataset(DatasetConfig.model_validate(raw))
    raw = {**raw, "columns": {"options": "alternatives", "answer": "label"}, "stem": ["contexto", "question"]}
    with pytest.raises(UserError, match=r"'contexto' \(for stem\).*closest to 'contexto': 'context'"):
        load_dataset(DatasetConfig.model_validate(raw))
