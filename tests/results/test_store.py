import json
import os
from pathlib import Path

import pytest

import enade_bench.benchmarks.eeval
import enade_bench.benchmarks.enem
import enade_bench.benchmarks.progress_test  # noqa: F401  (each registers its version-1 fields)
from enade_bench.errors import UserError
from enade_bench.results.log_key import LogKey
from enade_bench.results.records import SCHEMA_VERSION, QuestionRecord
from enade_bench.results.store import IntermediateLog, atomic_write_text, dump_json, read_result


def rec(i: int) -> QuestionRecord:
    return QuestionRecord(
        id=f"q{i}",
        fields={"year": None, "course": "", "component": ""},
        n_options=4,
        answer="A",
        prediction="B",
        correct=False,
        method="log_prob",
        shot="zero",
        strategy="S5",
        permutation=None,
        answer_position=0,
        predicted_position=1,
        displayed_prediction="B",
        question_hash="h",
        prompt_hash="p",
        prompt="x",
    )


def test_atomic_write_replaces_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "f.json"
    atomic_write_text(path, "one")
    atomic_write_text(path, "two")
    assert path.read_text() == "two"
    assert [p.name for p in path.parent.iterdir()] == ["f.json"]  # no temp files left


FP = LogKey({"evaluation.seed": 1, "prompts.files.template": "a" * 64})


def test_log_roundtrip_and_torn_last_line(tmp_path: Path) -> None:
    log = IntermediateLog(tmp_path / "i.jsonl", FP)
    log.start_fresh()
    log.append([rec(0), rec(1)])
    with log.path.open("a") as handle:
        handle.write('{"kind": "record", "record": {"id": "q2", "sh')  # killed mid-write
    loaded = log.load()
    assert sorted(loaded) == [("q0", 0), ("q1", 0)]
    assert log.path.read_text().endswith("}\n")  # the torn line was cut off
    log.append([rec(2)])
    assert sorted(IntermediateLog(log.path, FP).load()) == [("q0", 0), ("q1", 0), ("q2", 0)]


def test_log_of_another_setup_is_refused_naming_each_change(tmp_path: Path) -> None:
    log = IntermediateLog(tmp_path / "i.jsonl", FP)
    log.start_fresh()
    other = LogKey({"evaluation.seed": 2, "prompts.files.template": "b" * 64})
    with pytest.raises(UserError) as refused:
        IntermediateLog(log.path, other).load()
    assert str(refused.value) == (
        f"{log.path}: cannot resume: 2 setting(s) that change the answers differ from the log's "
        f'(evaluation.seed: 1 -> 2; prompts.files.template: "{"a" * 38}… -> "{"b" * 38}…); put them '
        "back, or rerun with --no-resume (asks every question again) or choose another output.dir"
    )


def test_corrupt_middle_line_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "i.jsonl"
    path.write_text(json.dumps(FP.header()) + "\nGARBAGE\n" + "{}\n")
    with pytest.raises(UserError, match="corrupt line"):
        IntermediateLog(path, FP).load()


# -- the one results reader: schema versions and migration --------------------------------
STORED = Path(__file__).resolve().parent / "data"


@pytest.mark.parametrize("name", ["v1_demo_S4_results.json", "v1_demo_S5_results.json"])
def test_stored_v1_files_load_and_write_back_unchanged_but_for_fields(name: str, tmp_path: Path) -> None:
    """Files written before the typed contract (SmolLM2, 3 demo questions) still load; written
    back, they differ from the stored file only in the records' fields, the model identity
    (tests/results/test_identity.py) and the version."""
    path = STORED / name
    result = read_result(path)
    assert result.schema_version == SCHEMA_VERSION == 4
    assert result.totals.n == len(result.records) == result.dataset.n_evaluated == 3
    assert result.totals.correct == sum(r.correct for r in result.records)
    assert result.strategy.id == name.split("_")[2]
    stored = json.loads(path.read_text(encoding="utf-8"))
    for record, old in zip(result.records, stored["records"], strict=True):
        assert record.fields == {k: old[k] for k in ("year", "course", "component")}
        assert list(record.fields) == ["year", "course", "component"]
    written = json.loads(dump_json(result.model_dump(mode="json")))
    for old in stored["records"]:
        old["fields"] = {k: old.pop(k) for k in ("year", "course", "component")}
    for new, old in zip(written["records"], stored["records"], strict=True):
        assert new == old
    assert list(written["records"][0])[:3] == ["id", "shuffle", "fields"]
    assert {
        k: v for k, v in written.items() if k not in ("records", "schema_version", "model", "complete")
    } == {k: v for k, v in stored.items() if k not in ("records", "schema_version", "model")}
    again = tmp_path / name
    again.write_text(dump_json(written), encoding="utf-8")
    assert read_result(again) == result


def test_v1_files_from_earlier_builds_are_completed(tmp_path: Path) -> None:
    """Early version-1 files lack dataset.invalid_rows and totals.n_questions."""
    data = json.loads((STORED / "v1_demo_S4_results.json").read_text(encoding="utf-8"))
    del data["dataset"]["invalid_rows"], data["totals"]["n_questions"], data["schema_version"]
    path = tmp_path / "old_results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = read_result(path)
    assert result.dataset.invalid_rows == []
    assert result.totals.n_questions == len({r.id for r in result.records})
    assert list(result.totals.model_dump())[:7] == [
        "n",
        "correct",
        "accuracy",
        "ci95",
        "unanswered",
        "errors",
        "n_questions",
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(schema_version=SCHEMA_VERSION + 1), "newer than this enade-bench reads"),
        (lambda d: d.update(schema_version="one"), "schema_version: expected a positive integer"),
        (lambda d: d["totals"].pop("correct"), "totals.correct"),
        (lambda d: d["strategy"].update(colour="red"), "strategy.colour"),
    ],
)
def test_bad_results_files_are_one_error_naming_the_file(tmp_path: Path, change, message: str) -> None:  # type: ignore[no-untyped-def]
    data = json.loads((STORED / "v1_demo_S5_results.json").read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "bad_results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(UserError, match=message) as info:
        read_result(path)
    assert str(path) in str(info.value)


def test_stored_v1_enem_file_gets_enem_fields() -> None:
    """An ENEM run written by version 1 (SmolLM2, LC 2022, 3 questions x 2 shuffles): area, booklet,
    language and position, squeezed into course/component and the id, become ENEM's fields."""
    path = STORED / "v1_enem_results.json"
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert stored["schema_version"] == 1 and {r["course"] for r in stored["records"]} == {"ENEM"}
    result = read_result(path)
    assert result.schema_version == SCHEMA_VERSION == 4
    for record, old in zip(result.records, stored["records"], strict=True):
        stem, number, language = old["id"].split(":")
        assert record.fields == {
            "year": old["year"],
            "area": old["component"],
            "booklet": int(stem.split("_")[-1]),
            "language": language,
            "question_number": int(number),
        }
    assert {r.fields["booklet"] for r in result.records} == {1072}
    assert {r.fields["area"] for r in result.records} == {"LC"}
    assert list(result.breakdowns) == ["year", "area", "n_options"]  # ENEM's constant 'course' is gone
    assert result.breakdowns["area"]["LC"].model_dump(mode="json") == stored["breakdowns"]["component"]["LC"]


def test_v1_eeval_file_gets_subject_and_level(tmp_path: Path) -> None:
    """E-EVAL version-1 files kept the subject in course and the level in component."""
    import enade_bench.benchmarks.eeval.report  # noqa: F401 (registers its version-1 fields, as the command line does)

    data = json.loads((STORED / "v1_demo_S4_results.json").read_text(encoding="utf-8"))
    data["config"]["dataset"]["preset"] = "eeval"
    for r in data["records"]:
        r["course"], r["component"] = "high_school_biology", "high"
    path = tmp_path / "eeval_results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = read_result(path)
    assert {tuple(r.fields.items()) for r in result.records} == {
        (("subject", "high_school_biology"), ("level", "high"))
    }
    assert list(result.breakdowns) == ["year", "subject", "level", "n_options"]


def test_v1_log_records_load_with_enade_fields(tmp_path: Path) -> None:
    """A version-1 intermediate log still resumes: its records load (the runner then gives each
    the fields of its loaded question, see tests/runner/test_work.py)."""
    path = tmp_path / "log.jsonl"
    path.write_bytes((STORED / "v1_enem_intermediate.jsonl").read_bytes())
    fingerprint = json.loads(path.read_text(encoding="utf-8").splitlines()[0])["fingerprint"]
    done = IntermediateLog(path, LogKey({}, legacy=fingerprint)).load()
    assert len(done) == 6
    assert {tuple(r.fields) for r in done.values()} == {("year", "course", "component")}


def test_atomic_write_gives_the_umask_permissions(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        atomic_write_text(tmp_path / "a.json", "{}\n")
    finally:
        os.umask(old)
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o640
