import json
from pathlib import Path

import pytest

from enade_bench.errors import UserError
from enade_bench.results.records import QuestionRecord
from enade_bench.results.store import IntermediateLog, atomic_write_text


def rec(i: int) -> QuestionRecord:
    return QuestionRecord(id=f"q{i}", year=None, course="", component="", n_options=4, answer="A",
                          prediction="B", correct=False, method="log_prob", shot="zero", strategy="S5",
                          permutation=None, answer_position=0, predicted_position=1, displayed_prediction="B",
                          question_hash="h", prompt_hash="p", prompt="x")  # fmt: skip


def test_atomic_write_replaces_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "f.json"
    atomic_write_text(path, "one")
    atomic_write_text(path, "two")
    assert path.read_text() == "two"
    assert [p.name for p in path.parent.iterdir()] == ["f.json"]  # no temp files left


def test_log_roundtrip_and_torn_last_line(tmp_path: Path) -> None:
    log = IntermediateLog(tmp_path / "i.jsonl", "fp")
    log.start_fresh()
    log.append([rec(0), rec(1)])
    with log.path.open("a") as handle:
        handle.write('{"kind": "record", "record": {"id": "q2", "sh')  # killed mid-write
    loaded = log.load()
    assert sorted(loaded) == [("q0", 0), ("q1", 0)]
    assert log.path.read_text().endswith("}\n")  # the torn line was cut off
    log.append([rec(2)])
    assert sorted(IntermediateLog(log.path, "fp").load()) == [("q0", 0), ("q1", 0), ("q2", 0)]


def test_log_of_another_experiment_is_refused(tmp_path: Path) -> None:
    log = IntermediateLog(tmp_path / "i.jsonl", "fp")
    log.start_fresh()
    with pytest.raises(UserError, match="different experiment setup"):
        IntermediateLog(log.path, "other").load()


def test_corrupt_middle_line_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "i.jsonl"
    path.write_text(json.dumps({"kind": "header", "fingerprint": "fp"}) + "\nGARBAGE\n" + "{}\n")
    with pytest.raises(UserError, match="corrupt line"):
        IntermediateLog(path, "fp").load()
