"""Cells are read exactly as the config maps them, or the load is refused (issue 26).

Each case was loaded wrong without a word before: a ``dataset.fields`` entry naming
no column gave every record ``''``; options A and B mapped to one column loaded rows
with A = B; JSON list and object cells became Python reprs (``['a', 'b']``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from enade_bench.config import DatasetConfig
from enade_bench.dataset import load_dataset
from enade_bench.errors import UserError

DATA = Path(__file__).parent / "data"
#: A third-party ENEM file: options as a JSON list (``alternatives``), the key in ``label``.
ENEM_JSONL = DATA / "enem_alternatives.jsonl"
ENEM_COLUMNS = {"id": "id", "stem": "question", "answer": "label", "options": "alternatives"}
CSV = "id,area,stem,A,B,C,answer\nq1,civil,Qual?,um,dois,três,A\nq2,penal,Qual outra?,um,dois,três,B\n"


def config(path: Path, **changes: object) -> DatasetConfig:
    return DatasetConfig.model_validate({"path": str(path), **changes})


def write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def test_a_field_that_names_no_column_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "q.csv", CSV)
    assert [q.fields["area"] for q in load_dataset(config(path, fields=["area"])).questions] == [
        "civil",
        "penal",
    ]
    # before: every record got area '' (one blank group); now the field is refused, naming the column
    with pytest.raises(UserError, match=r"q.csv: missing column\(s\) 'banca' \(for dataset.fields banca\)"):
        load_dataset(config(path, fields=["area", "banca"]))
    with pytest.raises(UserError, match=r"'area_juridica' \(for dataset.fields area\)"):
        load_dataset(config(path, fields={"area": "area_juridica"}))


def test_a_field_from_the_file_name_or_a_constant_needs_no_column(tmp_path: Path) -> None:
    path = write(tmp_path, "oab_2021.csv", CSV)
    cfg = config(
        path, fields=["year", "banca"], file_fields=r"oab_(?P<year>\d{4})", constants={"banca": "FGV"}
    )
    assert [q.fields for q in load_dataset(cfg).questions] == [{"year": 2021, "banca": "FGV"}] * 2


def test_two_options_mapped_to_one_column_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "q.csv", CSV)
    # before: both rows loaded with options ('um', 'um', 'três')
    with pytest.raises(UserError, match="dataset.columns: options A and B both read column 'A'"):
        load_dataset(config(path, columns={"B": "A"}))
    with pytest.raises(UserError, match="options A and C both read column 'x'"):
        load_dataset(config(path, columns={"A": "x", "C": "x"}))


@pytest.mark.parametrize(
    ("cell", "kind"), [(["a", "b"], "list"), ({"pt": "texto"}, "object")], ids=["list", "object"]
)
def test_list_and_object_cells_are_an_error_naming_the_cell(tmp_path: Path, cell: object, kind: str) -> None:
    rows = [
        {"id": "q1", "stem": "Qual?", "A": "um", "B": "dois", "answer": "A"},
        {"id": "q2", "stem": cell, "A": "um", "B": "dois", "answer": "A"},
    ]
    path = write(tmp_path, "q.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    # before: q2's stem was the Python repr "['a', 'b']" (or "{'pt': 'texto'}")
    with pytest.raises(
        UserError, match=rf"q.jsonl: line 2, column 'stem': a JSON {kind}, but stem expects a text"
    ):
        load_dataset(config(path))


def test_a_list_in_an_option_column_points_to_the_options_mapping(tmp_path: Path) -> None:
    row = {"id": "q1", "stem": "Qual?", "A": ["um", "dois"], "B": "dois", "answer": "A"}
    path = write(tmp_path, "q.jsonl", json.dumps(row) + "\n")
    with pytest.raises(UserError, match=r"column 'A': a JSON list.*dataset.columns: \{options: 'A'\}"):
        load_dataset(config(path))


def test_a_list_in_a_field_column_is_an_error(tmp_path: Path) -> None:
    row = {"id": "q1", "stem": "Qual?", "A": "um", "B": "dois", "answer": "A", "area": ["civil", "penal"]}
    path = write(tmp_path, "q.jsonl", json.dumps(row) + "\n")
    with pytest.raises(UserError, match="line 1, column 'area': a JSON list, but area expects a text"):
        load_dataset(config(path, fields=["area"]))


def test_a_third_party_enem_file_with_a_list_of_alternatives_loads() -> None:
    data = load_dataset(config(ENEM_JSONL, columns=ENEM_COLUMNS, fields={"year": "exam"}))
    first = json.loads(ENEM_JSONL.read_text(encoding="utf-8").splitlines()[0])
    assert [q.id for q in data.questions] == ["questao_136", "questao_137", "questao_138"]
    assert (
        data.questions[0].options == tuple(first["alternatives"]) == ("200", "500", "1 000", "2 000", "4 000")
    )
    assert [q.answer for q in data.questions] == ["D", "B", "C"]
    assert [q.fields["year"] for q in data.questions] == [2022, 2022, 2021]
    # lists nobody reads stay in the records as JSON text, not as Python reprs
    figures = dict(data.questions[1].extra)["figures"]
    assert json.loads(figures) == ["https://example.org/fig137.png"]


def test_the_options_mapping_reads_a_json_list_in_a_csv_cell(tmp_path: Path) -> None:
    path = write(tmp_path, "q.csv", 'id,stem,opcoes,answer\nq1,Qual?,"[""um"", ""dois"", 3]",C\n')
    [question] = load_dataset(config(path, columns={"options": "opcoes"})).questions
    assert question.options == ("um", "dois", "3") and question.answer == "C"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("um ou dois", r"column 'alternatives': expected a JSON list of option texts"),
        (["a", "b", "c", "d", "e", "f"], "6 options, at most 5"),
        (["a", ["b"]], r"option B is \[\"b\"\], expected a text"),
        (["a", "", "c"], "empty option before a non-empty one"),
    ],
)
def test_a_bad_list_of_options_names_the_cell(tmp_path: Path, options: object, message: str) -> None:
    row = {"id": "q1", "question": "Qual?", "alternatives": options, "label": "A"}
    path = write(tmp_path, "q.jsonl", json.dumps(row) + "\n")
    with pytest.raises(UserError, match=message):
        load_dataset(config(path, columns=ENEM_COLUMNS))


@pytest.mark.parametrize(
    ("columns", "extra", "message"),
    [
        ({**ENEM_COLUMNS, "A": "a"}, {}, r"maps option column\(s\) \['A'\] and options"),
        (ENEM_COLUMNS, {"options_in_text": True}, "maps options, but dataset.options_in_text is on"),
        (
            {**ENEM_COLUMNS, "options": "alternativas"},
            {},
            r"missing column\(s\) 'alternativas' \(for options\)",
        ),
    ],
)
def test_the_options_mapping_conflicts_are_errors(
    columns: dict[str, str], extra: dict[str, object], message: str
) -> None:
    with pytest.raises(UserError, match=message):
        load_dataset(config(ENEM_JSONL, columns=columns, **extra))


#: Questions numbered per booklet (Caderno); Bloco is filled in 2 of 6 rows only.
BOOKLETS = (
    "Bloco,Caderno,Número,Texto,A,B,Resposta\n"
    "I,1,1,Qual?,a,b,A\nI,1,2,Qual?,a,b,A\n,1,3,Qual?,a,b,A\n"
    ",2,1,Qual?,a,b,A\n,2,2,Qual?,a,b,A\n,2,3,Qual?,a,b,A\n"
)
BOOKLET_COLUMNS = {"id": "Número", "stem": "Texto", "answer": "Resposta"}


def test_the_duplicate_id_hint_proposes_only_a_column_that_makes_the_ids_unique(tmp_path: Path) -> None:
    path = write(tmp_path, "prova.csv", BOOKLETS)
    with pytest.raises(UserError) as caught:
        load_dataset(config(path, columns=BOOKLET_COLUMNS))
    message = str(caught.value)
    assert "line 5, column 'Número': duplicate id '1' (first seen at" in message
    # before: the first other column, '{Bloco}:{Número}', which gives duplicate id ':1' in turn
    assert "'{Bloco}:{Número}'" not in message
    assert message.endswith("build unique ones with dataset.id_template, e.g. '{Caderno}:{Número}'")
    cfg = config(path, columns=BOOKLET_COLUMNS, id_template="{Caderno}:{Número}")
    assert [q.id for q in load_dataset(cfg).questions] == ["1:1", "1:2", "1:3", "2:1", "2:2", "2:3"]


def test_a_template_on_a_column_with_empty_cells_says_so(tmp_path: Path) -> None:
    path = write(tmp_path, "prova.csv", BOOKLETS)
    with pytest.raises(UserError) as caught:
        load_dataset(config(path, columns=BOOKLET_COLUMNS, id_template="{Bloco}:{Número}"))
    message = str(caught.value)
    assert "line 7, id_template: duplicate id ':3' (first seen at" in message
    assert "in id_template, column 'Bloco' is empty in 4 of 6 rows" in message
    assert "e.g. '{Caderno}:{Bloco}:{Número}'" in message


def test_no_hint_when_no_column_makes_the_ids_unique(tmp_path: Path) -> None:
    path = write(tmp_path, "q.csv", "id,year,stem,A,B,answer\nq1,2019,T,a,b,A\nq1,2019,U,a,b,A\n")
    with pytest.raises(UserError, match="no other column makes the ids of this file unique"):
        load_dataset(config(path))
