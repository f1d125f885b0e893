"""A config-only exam names its own grouping fields, matches them by regex and filters on any field."""

from __future__ import annotations

from pathlib import Path

import pytest

from enade_bench.config import DatasetConfig
from enade_bench.dataset.loader import load_dataset
from enade_bench.errors import UserError

#: A bar exam: four options, its own columns (edition with the year inside, legal area).
BAR = """numero,edicao,area_juridica,enunciado,A,B,C,D,gabarito
1,2021 - prova 1,civil,Sobre a capacidade civil?,a,b,c,d,A
2,2021 - prova 1,penal,Sobre a legítima defesa?,a,b,c,d,B
3,2022 - prova 2,civil,Sobre contratos?,a,b,c,d,C
4,2022 - prova 2,constitucional,Sobre direitos fundamentais?,a,b,c,d,D
"""
COLUMNS = {"id": "numero", "stem": "enunciado", "answer": "gabarito"}


def bar_exam(tmp_path: Path, **changes: object) -> DatasetConfig:
    path = tmp_path / "oab_2021_2022.csv"
    path.write_text(BAR, encoding="utf-8")
    data: dict[str, object] = {
        "path": str(path),
        "columns": COLUMNS,
        "fields": {"year": "edicao", "area": "area_juridica"},
        "field_patterns": {"year": r"(\d{4})"},
    }
    data.update(changes)
    return DatasetConfig.model_validate(data)


def test_own_fields_under_their_names_with_a_year_out_of_a_column(tmp_path: Path) -> None:
    data = load_dataset(bar_exam(tmp_path))
    assert [q.fields for q in data.questions] == [
        {"year": 2021, "area": "civil"},
        {"year": 2021, "area": "penal"},
        {"year": 2022, "area": "civil"},
        {"year": 2022, "area": "constitucional"},
    ]
    assert [q.year for q in data.questions] == [2021, 2021, 2022, 2022]
    assert all(q.n_options == 4 for q in data.questions)


def test_filters_on_any_field(tmp_path: Path) -> None:
    data = load_dataset(bar_exam(tmp_path, filters={"area": ["civil"], "year": [2022]}))
    assert [q.id for q in data.questions] == ["3"]
    assert data.counts["removed_filter_area"] == 2 and data.counts["removed_filter_year"] == 1


def test_a_year_from_the_file_name(tmp_path: Path) -> None:
    cfg = bar_exam(tmp_path, fields=["area"], field_patterns=None, file_fields=r"oab_(?P<year>\d{4})")
    cfg = cfg.model_copy(update={"fields": {"year": "year", "area": "area_juridica"}})
    data = load_dataset(cfg)
    assert {q.fields["year"] for q in data.questions} == {2021}
    assert [q.fields["area"] for q in data.questions] == ["civil", "penal", "civil", "constitucional"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"filters": {"area": ["tributario"]}}, "values present: civil, constitucional, penal"),
        ({"filters": {"banca": ["FGV"]}}, "no field or column 'banca' in the data"),
        ({"field_patterns": {"year": r"prova (\d)$x"}}, "does not match dataset.field_patterns.year"),
    ],
)
def test_bad_filters_and_patterns_name_the_key(
    tmp_path: Path, changes: dict[str, object], message: str
) -> None:
    with pytest.raises(UserError, match=message):
        load_dataset(bar_exam(tmp_path, **changes))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"field_patterns": {"year": "(\\d{4"}}, "field_patterns.year: .* is not a regular expression"),
        ({"file_fields": r"oab_\d{4}"}, "file_fields: .* has no named group"),
        (
            {"field_patterns": {"edition": r"\d"}},
            r"field_patterns: \['edition'\] are not among dataset.fields",
        ),
    ],
)
def test_config_checks_the_expressions(tmp_path: Path, changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bar_exam(tmp_path, **changes)
