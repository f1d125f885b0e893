"""Options inside the question text: the splitter (golden cases) and the loader on a team-written exam."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from enade_bench.config import DatasetConfig
from enade_bench.dataset import load_dataset
from enade_bench.dataset.inline_options import USUAL_SHARE, OptionSplitError, split_options, usual_count
from enade_bench.errors import UserError, as_given

DATA = Path(__file__).parent / "data"
CASES: list[dict[str, Any]] = json.loads((DATA / "inline_options_cases.json").read_text(encoding="utf-8"))
EXAM = DATA / "options_in_text"  # two files of a team-written residency exam, with real-world defects
COLUMNS = {"id": "Número", "stem": "Texto", "answer": "Resposta Correta", "year": "Ano", "course": "Área"}
#: The columns of the files these tests write (every mapped column must be in the file).
WRITTEN = {k: v for k, v in COLUMNS.items() if k not in ("year", "course")}
# A team-written progress test (4 options) with each pattern of issue #21, and what it must load to.
PROGRESS = DATA / "teste_de_progresso" / "teste_de_progresso_2023.csv"
#: How messages name these files: from the current folder when under it (issue 51), as given.
SHOWN_PROGRESS, SHOWN_EXAM = as_given(PROGRESS), Path(as_given(EXAM))
PROGRESS_EXPECTED: dict[str, Any] = json.loads(
    (PROGRESS.parent / "expected.json").read_text(encoding="utf-8")
)
PROGRESS_COLUMNS = {
    "id": "questao",
    "stem": "enunciado",
    "answer": "gabarito",
    "year": "ano",
    "course": "area",
}


@pytest.mark.parametrize("case", CASES, ids=[c["why"] for c in CASES])
def test_split_options_golden_cases(case: dict[str, Any]) -> None:
    args = (case["text"], case.get("pattern"), case.get("min_options", 2))
    if "error" in case:
        with pytest.raises(OptionSplitError) as info:
            split_options(*args)
        assert case["error"] in str(info.value)
    else:
        result = split_options(*args)
        assert (result.stem, list(result.options)) == (case["stem"], case["options"])
        assert result.letters == "ABCDE"[: len(case["options"])]


def _progress(**extra: Any) -> DatasetConfig:
    return DatasetConfig(path=str(PROGRESS), columns=PROGRESS_COLUMNS, **{"options_in_text": {}, **extra})


def test_progress_test_loads_every_well_formed_row_right_with_the_defaults() -> None:
    data = load_dataset(_progress(skip_invalid=True))
    expected = PROGRESS_EXPECTED["questions"]
    assert [q.id for q in data.questions] == list(expected)
    for question in data.questions:
        want = expected[question.id]
        assert (question.stem, list(question.options), question.answer) == (
            want["stem"],
            want["options"],
            want["answer"],
        ), want["pattern"]
    assert data.invalid == [f"{SHOWN_PROGRESS}: {reason}" for reason in PROGRESS_EXPECTED["invalid"]]
    assert (data.counts["loaded"], data.counts["removed_annulled"], data.counts["removed_invalid"]) == (
        30,
        1,
        9,
    )


def test_progress_test_without_skip_invalid_stops_at_the_first_problem_by_line() -> None:
    # Line 10 is flagged by the file-level count check, which needs the whole file: it still comes
    # first, before the row-level error of line 13.
    with pytest.raises(UserError) as info:
        load_dataset(_progress())
    assert str(info.value) == f"{SHOWN_PROGRESS}: {PROGRESS_EXPECTED['invalid'][0]}"
    assert str(info.value).startswith(f"{SHOWN_PROGRESS}: line 10, column 'enunciado': 3 options found (A–C)")


def test_allow_other_counts_loads_rows_of_another_count() -> None:
    data = load_dataset(_progress(skip_invalid=True, options_in_text={"allow_other_counts": True}))
    counted = [r for r in PROGRESS_EXPECTED["invalid"] if "allow_other_counts" in r]
    assert data.invalid == [
        f"{SHOWN_PROGRESS}: {r}" for r in PROGRESS_EXPECTED["invalid"] if r not in counted
    ]
    by_id = {q.id: q for q in data.questions}
    assert (by_id["5"].letters, by_id["23"].letters) == ("ABC", "ABCDE")
    # What the check protects from: '(E)' after a space inside option D read as a fifth option.
    assert by_id["23"].options[3:] == (
        "rifampicina (R), isoniazida (H), pirazinamida (Z) e etambutol",
        "em dose fixa combinada.",
    )


@pytest.mark.parametrize(
    ("counts", "usual"),
    [
        ([4] * 717 + [3, 3, 5], (4, 717, 720)),
        ([4, 4, 4, 3], (4, 3, 4)),  # 3/4: the share needed
        ([4, 4, 3], None),  # 2/3: no usual count, nothing flagged
        ([5, 4, 4, 3, 4, 3], None),  # a mixed exam (the residency files)
        ([], None),
    ],
)
def test_usual_count_needs_three_quarters_of_the_rows(
    counts: list[int], usual: tuple[int, int, int] | None
) -> None:
    found = usual_count(counts)
    assert (found and (found.options, found.rows, found.total)) == usual
    assert USUAL_SHARE == 0.75


def test_the_count_check_is_per_file_and_only_for_options_in_the_text(tmp_path: Path) -> None:
    four = '{n},"Q{n}? (A) a (B) b (C) c (D) d",A\n'
    three = '{n},"Q{n}? (A) a (B) b (C) c",A\n'
    header = "Número,Texto,Resposta Correta\n"
    (tmp_path / "p1.csv").write_text(header + "".join(four.format(n=n) for n in range(4)) + three.format(n=9))
    (tmp_path / "p2.csv").write_text(header + "".join(three.format(n=n) for n in range(10, 15)))
    cfg = DatasetConfig(path=str(tmp_path / "p*.csv"), columns=WRITTEN, options_in_text={}, skip_invalid=True)
    data = load_dataset(cfg)
    assert data.invalid == [
        f"{tmp_path / 'p1.csv'}: line 6, column 'Texto': 3 options found (A–C), but 4 of the file's 5 rows "
        "have 4; check the row (a misread or truncated question?), or set "
        "dataset.options_in_text.allow_other_counts: true"
    ]
    assert sorted(q.n_options for q in data.questions) == [3] * 5 + [4] * 4
    columns = "id,stem,A,B,C,D,answer\n"
    rows = "".join(f"q{n},Q?,a,b,c,d,A\n" for n in range(4)) + "q9,Q?,a,b,c,,A\n"
    (tmp_path / "cols.csv").write_text(columns + rows)
    assert len(load_dataset(DatasetConfig(path=str(tmp_path / "cols.csv"))).questions) == 5


def test_a_file_is_checked_whole_and_its_first_problem_by_line_is_the_error(tmp_path: Path) -> None:
    body = "Número,Texto,Resposta Correta\n1,Q? (A) a (B) b,C\n2,Q? (A) a (B) b,A\n2,Q? (A) a (B) b,A\n"
    path = tmp_path / "q.csv"
    path.write_text(body)
    cfg = DatasetConfig(path=str(path), columns=COLUMNS, options_in_text={})
    with pytest.raises(UserError, match=r"q.csv: line 2, column 'Resposta Correta': answer 'C'"):
        load_dataset(cfg)
    # With skip_invalid the bad row is skipped, and a repeated id is still an error.
    with pytest.raises(UserError, match=r"q.csv: line 4, column 'Número': duplicate id '2'"):
        load_dataset(cfg.model_copy(update={"skip_invalid": True}))
    # A file that cannot be read further (a row with a field too many) after a bad row: the bad row.
    path.write_text(body.replace("2,Q? (A) a (B) b,A\n2", "2,Q? (A) a (B) b,A,x\n2", 1))
    with pytest.raises(UserError, match=r"q.csv: line 2, column 'Resposta Correta'"):
        load_dataset(cfg)


def _exam(**extra: Any) -> DatasetConfig:
    return DatasetConfig(path=str(EXAM / "*.csv"), columns=COLUMNS, options_in_text={}, **extra)


def test_first_broken_row_is_an_error_by_default() -> None:
    with pytest.raises(UserError) as info:
        load_dataset(_exam(id_template="{file_stem}:{Número}"))
    assert str(info.value) == (
        f"{SHOWN_EXAM / 'residencia_2021.csv'}: line 9, column 'Resposta Correta': answer 'D' is not among the "
        "non-empty options (A–C)"
    )


def test_ids_repeating_across_files_point_at_id_template() -> None:
    with pytest.raises(UserError) as info:
        load_dataset(_exam(skip_invalid=True))
    message = str(info.value)
    assert message.startswith(
        f"{SHOWN_EXAM / 'residencia_2022.csv'}: line 2, column 'Número': duplicate id '1'"
    )
    assert f"first seen at {SHOWN_EXAM / 'residencia_2021.csv'}: line 2" in message
    assert "dataset.id_template, e.g. '{file_stem}:{Número}'" in message


def test_skip_invalid_loads_the_rest_and_lists_each_broken_row_by_line() -> None:
    data = load_dataset(_exam(skip_invalid=True, id_template="{file_stem}:{Número}"))
    source = SHOWN_EXAM / "residencia_2021.csv"
    # Rows as written in the files (a quoted text may span lines; the line is where the row starts).
    assert data.invalid == [
        f"{source}: line 9, column 'Resposta Correta': answer 'D' is not among the non-empty options (A–C)",
        f"{source}: line 10, column 'Texto': cannot split the options in the text: no option markers found "
        "(expected (A), A), A. or a) before each option)",
        f"{source}: line 11, column 'Texto': cannot split the options in the text: options out of order "
        "(A, B, E, C, D); expected A, B, C, D, E",
    ]
    assert data.counts["loaded"] == 12
    assert data.counts["removed_annulled"] == 1
    assert data.counts["removed_invalid"] == 3
    by_id = {q.id: q for q in data.questions}
    assert list(by_id) == [
        "residencia_2021:1",
        "residencia_2021:2",
        "residencia_2021:6",
        "residencia_2021:7",
        "residencia_2021:8",
        "residencia_2022:1",
        "residencia_2022:2",
        "residencia_2022:3",
    ]
    first = by_id["residencia_2021:1"]
    assert first.stem.startswith("Homem de 58 anos") and first.stem.endswith(
        "Qual é a conduta inicial mais adequada?"
    )
    assert first.options[1] == "Prescrever ácido acetilsalicílico e encaminhar para reperfusão imediata."
    assert (first.letters, first.answer, first.year, first.course) == ("ABCDE", "B", 2021, "Clínica Médica")
    assert by_id["residencia_2021:6"].options[0] == "Metformina."  # a) style
    assert by_id["residencia_2021:7"].stem.endswith(
        "hepatite A. Qual é a conduta?"
    )  # stray 'A.' kept in the stem
    assert by_id["residencia_2021:8"].letters == "ABC"


def test_min_options_catches_a_truncated_question() -> None:
    data = load_dataset(
        DatasetConfig(
            path=str(EXAM / "residencia_2021.csv"),
            columns=COLUMNS,
            skip_invalid=True,
            options_in_text={"min_options": 4},
        )
    )
    truncated = [r for r in data.invalid if "only 3 option(s) found (A, B, C); expected at least 4" in r]
    assert [r.split(", column")[0].rsplit(": ", 1)[1] for r in truncated] == ["line 9", "line 18"]
    assert all(q.n_options >= 4 for q in data.questions)


def test_custom_pattern(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text("Número,Texto,Resposta Correta\n1,Qual? [A] um [B] dois,B\n", encoding="utf-8")
    cfg = DatasetConfig(
        path=str(path), columns=WRITTEN, options_in_text={"pattern": r"\[(?P<letter>[A-E])\]"}
    )
    (q,) = load_dataset(cfg).questions
    assert (q.stem, q.options, q.answer) == ("Qual?", ("um", "dois"), "B")


def test_disabled_block_reads_option_columns(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text("id,stem,A,B,answer\nq1,Qual? (A) x (B) y,um,dois,A\n", encoding="utf-8")
    (q,) = load_dataset(DatasetConfig(path=str(path), options_in_text={"enabled": False})).questions
    assert q.options == ("um", "dois") and q.stem == "Qual? (A) x (B) y"


def test_option_columns_and_options_in_text_conflict() -> None:
    with pytest.raises(UserError, match=r"dataset.columns: maps option column\(s\) \['A'\]"):
        load_dataset(DatasetConfig(path=str(EXAM / "*.csv"), columns={"A": "x"}, options_in_text={}))


def test_example_config_loads_the_exam() -> None:
    from enade_bench.config import input_base, load_config

    config = Path(__file__).resolve().parents[2] / "configs" / "examples" / "options_in_text.yaml"
    cfg = load_config(config)
    data = load_dataset(cfg.dataset, input_base(cfg.dataset.path, config))
    assert (data.counts["kept"], len(data.invalid)) == (8, 3)


@pytest.mark.slow
def test_run_with_the_packaged_model_lists_the_skipped_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from enade_bench.cli.main import main

    config = Path(__file__).resolve().parents[2] / "configs" / "examples" / "options_in_text.yaml"
    assert main(["run", str(config), "--output-dir", str(tmp_path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "on 8 items" in out
    assert "note: 3 invalid row(s) skipped" in out
    assert "residencia_2021.csv: line 11, column 'Texto': cannot split the options" in out
    result = json.loads((tmp_path / "residencia_options_in_text_results.json").read_text(encoding="utf-8"))
    assert len(result["dataset"]["invalid_rows"]) == 3
    assert {r["id"] for r in result["records"]} == {
        "residencia_2021:1",
        "residencia_2021:2",
        "residencia_2021:6",
        "residencia_2021:7",
        "residencia_2021:8",
        "residencia_2022:1",
        "residencia_2022:2",
        "residencia_2022:3",
    }


def test_true_is_short_for_enabled() -> None:
    on = DatasetConfig(path="x.csv", options_in_text=True)  # type: ignore[arg-type]
    off = DatasetConfig(path="x.csv", options_in_text=False)  # type: ignore[arg-type]
    assert on.options_in_text is not None and on.options_in_text.enabled
    assert off.options_in_text is not None and not off.options_in_text.enabled
