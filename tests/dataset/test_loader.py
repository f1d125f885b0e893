import csv
import json
from pathlib import Path

import pytest
from tests.conftest import DEMO_CSV, require_shared

from enade_bench.benchmarks.enem import PRESET as ENEM
from enade_bench.config import DatasetConfig
from enade_bench.dataset import load_dataset
from enade_bench.errors import UserError

HEADER = "id,year,course,component,stem,A,B,C,D,E,answer,has_image,cannot_fix\n"


def write(tmp_path: Path, body: str, name: str = "q.csv") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def test_demo_questions_load_with_filter_counts() -> None:
    data = load_dataset(DatasetConfig(path=str(DEMO_CSV)))
    with DEMO_CSV.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    n_image = sum(r["has_image"] == "true" for r in rows)
    n_flawed = sum(r["cannot_fix"] == "true" for r in rows)
    assert data.counts["loaded"] == len(rows)
    assert data.counts["removed_has_image"] == n_image == 1
    assert data.counts["removed_cannot_fix"] == n_flawed == 1
    assert data.counts["kept"] == len(rows) - 2 == len(data.questions)
    four = [q for q in data.questions if q.n_options == 4]
    assert four and all(q.letters == "ABCD" for q in four)
    assert {q.component for q in data.questions} == {"Formação Geral", "Componente Específico"}
    assert len({q.year for q in data.questions}) >= 4


def test_filters_by_year_course_component_are_counted() -> None:
    cfg = DatasetConfig(
        path=str(DEMO_CSV),
        anos=[2019, 2022],
        cursos=["Medicina", "Enfermagem"],
        componentes=["Componente Específico"],
    )
    data = load_dataset(cfg)
    assert all(q.year in (2019, 2022) and q.course in ("Medicina", "Enfermagem") for q in data.questions)
    assert all(q.component == "Componente Específico" for q in data.questions)
    c = data.counts
    removed = sum(v for k, v in c.items() if k.startswith("removed_"))
    assert c["loaded"] - removed == c["kept"] == len(data.questions)
    assert c["removed_year"] > 0 and c["removed_course"] > 0


def test_no_filters_keeps_flagged_items() -> None:
    data = load_dataset(DatasetConfig(path=str(DEMO_CSV), filter_images=False, filter_cannot_fix=False))
    assert data.counts["kept"] == data.counts["loaded"]


def test_jsonl_loads_the_same_questions(tmp_path: Path) -> None:
    with DEMO_CSV.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    path = tmp_path / "demo.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    from_csv = load_dataset(DatasetConfig(path=str(DEMO_CSV))).questions
    from_jsonl = load_dataset(DatasetConfig(path=str(path))).questions
    assert [(q.id, q.options, q.answer) for q in from_csv] == [
        (q.id, q.options, q.answer) for q in from_jsonl
    ]


def test_column_mapping_and_constants(tmp_path: Path) -> None:
    path = write(tmp_path, "qid,texto,a1,a2,a3,gab\nx1,Qual?,um,dois,tres,B\n")
    cfg = DatasetConfig(
        path=str(path),
        columns={"id": "qid", "stem": "texto", "A": "a1", "B": "a2", "C": "a3", "answer": "gab"},
        constants={"course": "Medicina", "year": 2020},
    )
    (q,) = load_dataset(cfg).questions
    assert (q.id, q.stem, q.options, q.answer, q.course, q.year) == (
        "x1",
        "Qual?",
        ("um", "dois", "tres"),
        "B",
        "Medicina",
        2020,
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("id,stem,A,B\nq1,x,a,b\n", "missing column(s) 'answer'"),
        (
            HEADER + "q1,2019,Med,FG,Texto,a,b,c,d,,E,false,false\n",
            "line 2, column 'answer': answer 'E' is not among the non-empty options (A–D)",
        ),
        (HEADER + "q1,2019,Med,FG,Texto,a,b,c,d,e,Z,false,false\n", "column 'answer': answer 'Z'"),
        (HEADER + "q1,2019,Med,FG,,a,b,c,d,e,A,false,false\n", "line 2, column 'stem': empty stem"),
        (
            HEADER + "q1,2019,Med,FG,T,a,b,c,d,e,A,false,false\nq1,2019,Med,FG,T,a,b,c,d,e,A,false,false\n",
            "line 3, column 'id': duplicate id 'q1' (first seen at ",
        ),
        (
            HEADER + "q1,2019,Med,FG,T,a,b,c,d,e,A,false,false\nq1,2020,Med,FG,T,a,b,c,d,e,A,false,false\n",
            "line 2); if ids repeat by design (numbered per edition or booklet), build unique ones with "
            "dataset.id_template, e.g. '{year}:{id}'",
        ),
        (
            HEADER + "q1,2019,Med,FG,T,a,b,c,d,e,A,talvez,false\n",
            "column 'has_image': 'talvez' is not a boolean",
        ),
        (
            HEADER + "q1,dois mil,Med,FG,T,a,b,c,d,e,A,false,false\n",
            "column 'year': year 'dois mil' is not an integer",
        ),
        (HEADER + "q1,2019,Med,FG,T,a,,c,d,e,A,false,false\n", "empty option before a non-empty one"),
        (HEADER + "q1,2019,Med,FG,T,a,b,c,d,e,A,false\n", "line 2: 12 fields, expected 13"),
        (HEADER + 'q1,2019,Med,FG,"T,a,b,c,d,e,A,false,false\n', "q.csv: line"),
        ("", "empty file"),
    ],
)
def test_bad_datasets_name_file_line_and_column(tmp_path: Path, body: str, expected: str) -> None:
    path = write(tmp_path, body)
    with pytest.raises(UserError) as info:
        load_dataset(DatasetConfig(path=str(path)))
    assert expected in str(info.value)
    assert str(path) in str(info.value)


def test_bad_jsonl_line(tmp_path: Path) -> None:
    path = write(tmp_path, "\n{not json}\n", "q.jsonl")
    with pytest.raises(UserError, match=r"q.jsonl: line 2: invalid JSON"):
        load_dataset(DatasetConfig(path=str(path)))


def test_missing_file_and_unknown_mapping(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="file not found"):
        load_dataset(DatasetConfig(path=str(tmp_path / "absent.csv")))
    with pytest.raises(UserError, match="unknown field"):
        load_dataset(DatasetConfig(path=str(DEMO_CSV), columns={"enunciado": "stem"}))


def test_enem_files_load_through_the_column_mapping() -> None:
    folder = require_shared("enem", "questions", "pt-br")
    pattern = str(folder / "ENEM_20*.csv")
    with pytest.raises(UserError, match="ENEM_2013_CH_CO_PROVA_187.csv: line 20, column 'body': empty stem"):
        load_dataset(DatasetConfig(path=pattern, benchmark="enem"), preset=ENEM)
    data = load_dataset(DatasetConfig(path=pattern, benchmark="enem", skip_invalid=True), preset=ENEM)
    assert data.counts["removed_invalid"] == len(data.invalid) == 1
    total = 0
    annulled = 0
    for path in sorted(folder.glob("ENEM_20*.csv")):
        with path.open(encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        total += len(rows)
        annulled += sum(r["answer"].strip().lower() == "anulada" for r in rows)
    assert data.counts["loaded"] == total
    assert data.counts["removed_annulled"] == annulled > 0
    assert data.counts["kept"] == total - annulled - 1
    lc = [q for q in data.questions if dict(q.extra).get("source_file") == "ENEM_2022_LC_CO_PROVA_1072.csv"]
    assert len({q.id for q in lc}) == len(lc)  # English and Spanish items 1–5 get distinct ids
    # ENEM's own fields, not ENADE's course/component.
    assert all(
        list(q.fields) == ["year", "area", "booklet", "language", "question_number"] for q in data.questions
    )
    assert all(q.course == q.component == "" for q in data.questions)
    assert {q.fields["area"] for q in data.questions} == {"CH", "CN", "LC", "MT"}
    assert {q.fields["booklet"] for q in lc} == {1072}
    assert {q.fields["language"] for q in lc if q.fields["question_number"] == 1} == {"english", "spanish"}
    assert {q.fields["booklet"] for q in data.questions if q.fields["year"] == 2023} == {0}
    first = next(q for q in data.questions if q.id == "ENEM_2022_LC_CO_PROVA_1072:1:spanish")
    assert first.fields == {
        "year": 2022,
        "area": "LC",
        "booklet": 1072,
        "language": "spanish",
        "question_number": 1,
    }


def test_preset_fields_come_from_file_name_constants_and_columns(tmp_path: Path) -> None:
    from enade_bench.dataset.presets import DatasetPreset

    path = tmp_path / "EXAM_B7.csv"
    path.write_text(
        "id,stem,A,B,answer,year,area,num\nq1,s,a,b,A,2020,bio,3\nq2,s,a,b,B,,chem,x\n", encoding="utf-8"
    )
    preset = DatasetPreset(
        "x",
        fields=("year", "area", "booklet", "kind", "num"),
        field_columns={"area": "area"},
        file_fields=r"_B(?P<booklet>\d+)",
        constants={"kind": "mock"},
        int_fields=frozenset({"year", "booklet", "num"}),
    )
    with pytest.raises(UserError, match=r"EXAM_B7.csv: line 3, column 'num': num 'x' is not an integer"):
        load_dataset(DatasetConfig(path=str(path)), preset=preset)
    path.write_text(path.read_text(encoding="utf-8").replace(",x\n", ",\n"), encoding="utf-8")
    first, second = load_dataset(DatasetConfig(path=str(path)), preset=preset).questions
    assert first.fields == {"year": 2020, "area": "bio", "booklet": 7, "kind": "mock", "num": 3}
    assert second.fields == {"year": None, "area": "chem", "booklet": 7, "kind": "mock", "num": None}


def test_hf_datasets_path_goes_through_datasets(tmp_path: Path) -> None:
    # No hub is reachable here: a local folder is a valid `datasets.load_dataset` source, so the
    # real hf:// code path runs on it (same rows as the CSV).
    folder = tmp_path / "enade_hf"
    folder.mkdir()
    (folder / "train.csv").write_bytes(DEMO_CSV.read_bytes())
    from_hf = load_dataset(DatasetConfig(path=f"hf://{folder}:train"))
    from_csv = load_dataset(DatasetConfig(path=str(DEMO_CSV)))
    assert [(q.id, q.options, q.answer, q.year) for q in from_hf.questions] == [
        (q.id, q.options, q.answer, q.year) for q in from_csv.questions
    ]
    with pytest.raises(UserError, match="cannot load Hugging Face dataset"):
        load_dataset(DatasetConfig(path=f"hf://{tmp_path}/absent-dataset"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2019", 2019),
        ("2019.0", 2019),
        ("", None),
        ("2.019", "not an integer"),
        ("inf", "not an integer"),
        ("nan", "not an integer"),
        ("20190", "not a year between 1900 and 2100"),
        ("1899", "not a year between"),
    ],
)
def test_years_are_whole_numbers_in_a_sane_range(text: str, expected: object) -> None:
    from enade_bench.dataset.loader import whole_number

    if not isinstance(expected, str):
        assert whole_number("year", text, "f.csv: line 2, column 'ano'") == expected
        return
    with pytest.raises(UserError, match=f"f.csv: line 2, column 'ano': year '{text}' is {expected}"):
        whole_number("year", text, "f.csv: line 2, column 'ano'")


def test_semicolon_excel_export_reads_as_is(tmp_path: Path) -> None:
    """A spreadsheet's UTF-8 CSV export: ``;``-separated, with trailing empty unnamed columns."""
    rows = [
        HEADER.strip().replace(",", ";") + ";;",
        "q1;2019;Medicina;Formação Geral;Qual, afinal?;um;dois;três;quatro;;B;false;false;;",
        "q2;2021;Enfermagem;Formação Geral;Outra;um;dois;três;quatro;cinco;E;false;false;;",
    ]
    path = write(tmp_path, "\r\n".join(rows) + "\r\n")
    data = load_dataset(DatasetConfig(path=str(path)))
    assert [(q.id, q.year, q.stem, q.answer, q.n_options) for q in data.questions] == [
        ("q1", 2019, "Qual, afinal?", "B", 4),
        ("q2", 2021, "Outra", "E", 5),
    ]
    assert load_dataset(DatasetConfig(path=str(path), delimiter=";")).questions == data.questions
    with pytest.raises(
        UserError, match="line 1: the header is one column when split at ','; the file looks ';'-separated"
    ):
        load_dataset(DatasetConfig(path=str(path), delimiter=","))
    with pytest.raises(UserError, match="dataset.delimiter: expected one character"):
        load_dataset(DatasetConfig(path=str(path), delimiter=";;"))


def test_a_filter_that_matches_nothing_lists_the_values() -> None:
    with pytest.raises(
        UserError,
        match=r"dataset.anos: \[1999\] matches none of the \d+ questions; "
        r"the data has year 2010, .*2023",
    ):
        load_dataset(DatasetConfig(path=str(DEMO_CSV), anos=[1999]))
