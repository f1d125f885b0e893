"""What the comparison says instead of scoring: errors, unpaired items, folded replicates, families."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from enade_bench.cli.main import main
from enade_bench.compare.analysis import CompareOptions, compare_table
from enade_bench.compare.table import from_entries, read_long_csv, stem_excerpt
from enade_bench.errors import UserError
from enade_bench.metrics import field_breakdowns, position_bias, summarize
from enade_bench.metrics.paired_exact import exact_interval
from enade_bench.report.loader import RunEntry
from enade_bench.results.records import QuestionRecord, RunResult


def _record(i: int, ok: bool, error: str | None = None, prompt: str = "...") -> QuestionRecord:
    return QuestionRecord(
        id=f"q{i}",
        fields={"year": 2015 + i % 2},
        n_options=5,
        answer="A",
        prediction=None if error else "AB"[not ok],
        correct=ok and error is None,
        method="generation",
        shot="zero",
        strategy="S1",
        permutation=None,
        answer_position=0,
        predicted_position=None if error else int(not ok),
        displayed_prediction=None if error else "AB"[not ok],
        extraction_rule="resposta",
        question_hash="h",
        prompt_hash="p",
        prompt=prompt,
        error=error,
    )


def _entry(tmp: Path, name: str, records: list[QuestionRecord]) -> RunEntry:
    result = RunResult(
        experiment=name,
        strategy={
            "id": "S1",
            "label": "generation, zero-shot",
            "method": "generation",
            "shot": "zero",
            "shuffle": False,
            "n_shuffles": 1,
        },
        config={"name": name, "model": {"name": name}},
        seed=1,
        environment={"python": "3.11", "libraries": {}, "git": {}},
        model={"backend": "test", "name": name},
        dataset={"sources": [], "filter_counts": {}, "invalid_rows": [], "n_evaluated": len(records)},
        prompts={},
        totals=summarize(records),
        breakdowns=field_breakdowns(records, ("year",)),
        position_bias=position_bias(records),
        records=records,
    )
    path = tmp / f"{name}_S1_results.json"
    path.write_text(json.dumps(result.model_dump(mode="json")), encoding="utf-8")
    return RunEntry(path, result)


def _csv(tmp: Path, text: str) -> Path:
    path = tmp / "long.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_errors_are_refused_then_counted_never_scored(tmp_path: Path) -> None:
    """28 HTTP 401s: refused as incomplete; with allow_errors the model stays in Table 1 with n 0."""
    ok = _entry(tmp_path, "good", [_record(i, i % 2 == 0) for i in range(28)])
    bad = _entry(tmp_path, "broken", [_record(i, False, "HTTP 401 Unauthorized") for i in range(28)])
    half = _entry(tmp_path, "half", [_record(i, True, "timeout" if i < 3 else None) for i in range(28)])
    table = from_entries([ok, bad, half])
    with pytest.raises(
        UserError,
        match=r"incomplete runs .*'broken' strategy S1: 28 error\(s\) of 28 records; "
        r"model 'half' strategy S1: 3 error\(s\) of 28 records",
    ):
        compare_table(table)
    comp = compare_table(table, CompareOptions(allow_errors=True))
    scores = comp.scores_frame().set_index("model")
    assert scores.at["broken", "n_errors"] == 28 and scores.at["broken", "n_questions"] == 0
    assert np.isnan(scores.at["broken", "accuracy"]) and scores.at["broken", "letters"] == "–"
    assert scores.at["half", "n_errors"] == 3 and scores.at["half", "n_questions"] == 25
    assert scores.at["half", "accuracy"] == 1.0 and scores.at["good", "n_errors"] == 0
    pairs = comp.pairs_frame().set_index(["model_a", "model_b"])
    assert pairs.loc[("good", "broken"), "test"] == "not comparable"
    assert np.isnan(pairs.loc[("good", "broken"), "p_value"])
    assert pairs.loc[("good", "half"), "n_questions"] == 25
    assert any("every record of broken is an error (28)" in n for n in comp.notes)


def test_compare_cli_refuses_incomplete_runs_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _entry(tmp_path, "good", [_record(i, True) for i in range(6)])
    _entry(tmp_path, "broken", [_record(i, False, "HTTP 401") for i in range(6)])
    assert main(["compare", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: incomplete runs") and "--allow-errors" in err[0]
    assert main(["compare", str(tmp_path), "--out", str(tmp_path / "out"), "--allow-errors"]) == 0
    out = capsys.readouterr().out
    assert "(n 0, 6 errors)" in out
    assert sorted(pd.read_csv(tmp_path / "out" / "scores.csv")["n_errors"].tolist()) == [0, 6]


def test_disjoint_items_are_not_comparable_and_listed(tmp_path: Path) -> None:
    """Two models on disjoint items: no 'exact McNemar p = 1', no family, unpaired items listed."""
    path = _csv(
        tmp_path,
        "model,item,correct\n"
        + "".join(f"a,q{i},{i % 2}\n" for i in range(6))
        + "".join(f"b,x{i},1\n" for i in range(6))
        + "".join(f"c,q{i},1\n" for i in range(6)),
    )
    comp = compare_table(read_long_csv(path))
    pairs = comp.pairs_frame().set_index(["model_a", "model_b"])
    assert pairs.loc[("a", "b"), "test"] == "not comparable" and np.isnan(pairs.loc[("a", "b"), "p_adjusted"])
    assert (pairs["family_size"] == 1).all()  # only a-c is in the Holm family
    assert set(comp.unpaired["missing_for"]) == {"a", "b", "c"} and len(comp.unpaired) == 6 + 6 + 6
    assert any("not comparable" in n for n in comp.notes) and any("unpaired.csv" in n for n in comp.notes)


def test_a_comparison_folder_is_listed_cleaned_and_marked_while_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second comparison replaces the first one's files (the user's own stay); one stopped
    half-way leaves the marker, not a mix of new scores and old pairs that looks complete."""
    first = _csv(
        tmp_path,
        "model,item,correct\n"
        + "".join(f"a,q{i},{i % 2}\n" for i in range(8))
        + "".join(f"b,q{i},1\n" for i in range(6)),
    )
    out = tmp_path / "out"
    assert main(["compare", str(first), "--out", str(out)]) == 0
    manifest = json.loads((out / "report_manifest.json").read_text())
    assert {"scores.csv", "pairs.csv", "unpaired.csv"} <= set(manifest["files"])
    assert len(pd.read_csv(out / "unpaired.csv")) == 2
    (out / "notes.md").write_text("mine\n")  # a file of the user's, written after the comparison
    second = tmp_path / "second.csv"
    second.write_text("model,item,correct\n" + "".join(f"{m},q{i},{i % 2}\n" for m in "ab" for i in range(6)))
    assert main(["compare", str(second), "--out", str(out)]) == 0
    assert pd.read_csv(out / "unpaired.csv").empty and (out / "notes.md").read_text() == "mine\n"

    from enade_bench.compare import render

    written: list[str] = []
    real_write = render.write_csv

    def stop_after_one(path: Path, *args: object, **kwargs: object) -> None:
        if written:
            raise KeyboardInterrupt  # Ctrl-C after the new scores.csv, before the new pairs.csv
        written.append(path.name)
        real_write(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(render, "write_csv", stop_after_one)
    assert main(["compare", str(first), "--out", str(out)]) == 130  # stopped like Ctrl-C
    assert (out / "REPORT_INCOMPLETE.json").is_file() and not (out / "report_manifest.json").exists()
    monkeypatch.undo()
    assert main(["compare", str(first), "--out", str(out)]) == 0
    assert not (out / "REPORT_INCOMPLETE.json").exists() and (out / "notes.md").is_file()


def test_identical_answers_say_no_discordant_questions(tmp_path: Path) -> None:
    """Repeated records: no SE, no interval, no MDD; one record each: the exact unconditional test's
    p = 1 with its interval (symmetric, about 0.29 at 10 questions) and an MDD under the alternative."""
    rows = "".join(f"{m},q{i},{r},{i % 2}\n" for m in "ab" for i in range(10) for r in range(2))
    comp = compare_table(read_long_csv(_csv(tmp_path, "model,item,replicate,correct\n" + rows)))
    pair = comp.pairs_frame().iloc[0]
    assert pair["test"] == "no discordant questions" and pair["p_value"] == 1.0
    assert np.isnan(pair["ci_low"]) and np.isnan(pair["se"]) and np.isnan(pair["mdd_80"])
    rows = "".join(f"{m},q{i},{i % 2}\n" for m in "ab" for i in range(10))
    single = compare_table(read_long_csv(_csv(tmp_path, "model,item,correct\n" + rows))).pairs_frame().iloc[0]
    low, high = exact_interval(0, 0, 10)
    assert (
        single["test"] == "exact unconditional score" and single["p_value"] == 1.0 and np.isnan(single["se"])
    )
    assert single["ci_low"] == pytest.approx(low, abs=1e-6) == pytest.approx(-high, abs=1e-6)
    assert 0.4 < single["mdd_80"] < 1


def test_replicates_folded_into_item_ids_give_a_warning(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    rows = "".join(
        f"{m},q{q:02d}_r{r},{int(rng.random() < 0.5)}\n" for m in "ab" for q in range(10) for r in range(5)
    )
    comp = compare_table(read_long_csv(_csv(tmp_path, "model,item,correct\n" + rows)))
    assert any(
        "'q00_r0' and 'q00_r1' look like replicates" in w and "'replicate' column" in w for w in comp.warnings
    )
    plain = "".join(f"{m},ENEM2019_{q:03d},{q % 2}\n" for m in "ab" for q in range(40))
    assert compare_table(read_long_csv(_csv(tmp_path, "model,item,correct\n" + plain))).warnings == []


def test_items_answered_by_one_model_only_give_a_warning(tmp_path: Path) -> None:
    rows = (
        "".join(f"a,q{i},1\n" for i in range(30))
        + "".join(f"b,Q{i},1\n" for i in range(28))
        + "b,q0,1\nb,q1,0\n"
    )
    comp = compare_table(read_long_csv(_csv(tmp_path, "model,item,correct\n" + rows)))
    assert any("answered by one model only" in w for w in comp.warnings)


@pytest.mark.parametrize(
    ("header", "rows", "expected"),
    [
        (
            "model,item,correct",
            "a,q1,1\na,q1,0\n",
            "row 3: model 'a', item 'q1' appears more than once (first at row 2); repeated answers",
        ),
        (
            "model,item,replicate,correct",
            "a,q1,0,1\na,q1,0,0\n",
            "row 3: model 'a', item 'q1', replicate '0' appears more than once (first at row 2)",
        ),
    ],
)
def test_duplicate_rows_are_named_in_the_files_own_columns(
    tmp_path: Path, header: str, rows: str, expected: str
) -> None:
    with pytest.raises(UserError) as exc:
        read_long_csv(
            _csv(
                tmp_path,
                f"{header}\n{rows}b,q1,1\n" if "replicate" not in header else f"{header}\n{rows}b,q1,0,1\n",
            )
        )
    assert expected in str(exc.value)
    assert "replicate" in str(exc.value) and ("replicate '0'" in str(exc.value)) == ("replicate" in header)


def test_family_is_a_choice_and_is_stated(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    rows = "".join(
        f"{m},q{i},{int(rng.random() < 0.5 + 0.1 * 'abc'.index(m))},{'XY'[i % 2]}\n"
        for m in "abc"
        for i in range(80)
    )
    table = read_long_csv(_csv(tmp_path, "model,item,correct,area\n" + rows))
    wide = compare_table(table, CompareOptions(by=("area",), family="all")).pairs_frame()
    cell = compare_table(table, CompareOptions(by=("area",), family="stratum")).pairs_frame()
    assert (wide["family"] == "all").all() and (wide["family_size"] == 6).all()
    assert set(cell["family"]) == {"stratum area=X", "stratum area=Y"} and (cell["family_size"] == 3).all()
    assert (cell["p_adjusted"] <= wide["p_adjusted"] + 1e-15).all()
    with pytest.raises(UserError, match="--family: expected one of all, strategy, stratum"):
        compare_table(table, CompareOptions(family="everything"))


def test_stem_of_a_chat_prompt_is_the_last_user_message() -> None:
    """The flips file's stem was the tail of the chat JSON ('…E) cinco"}]')."""
    chat = json.dumps(
        [
            {"role": "system", "content": "Responda com a letra."},
            {"role": "user", "content": "Exemplo: 1+1?\nA) dois\nE) três"},
            {"role": "assistant", "content": "A"},
            {"role": "user", "content": "Quanto é 2+3?\nA) um\nB) dois\nC) três\nD) quatro\nE) cinco"},
        ],
        ensure_ascii=False,
    )
    assert stem_excerpt(chat) == "Quanto é 2+3?"
    entry_stem = stem_excerpt("Instruções\nQuestão: 2+3?\nA) um\nE) cinco")
    assert entry_stem == "Instruções Questão: 2+3?"


def test_items_nested_in_strata_are_compared_apart_with_by(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 43: 'i00' of area X and 'i00' of area Y are two questions; --by area compares them apart
    (flips name each area's own question), without it the comparison refuses with the fix."""
    rows = "".join(
        f"{m},i{i:02d},{(i + k + (m == 'B') * (area == 'Y')) % 2},{area},stem {area}{i}\n"
        for m in "AB"
        for k, area in enumerate("XY")
        for i in range(6)
    )
    path = _csv(tmp_path, "model,item,correct,area,stem\n" + rows)
    comp = compare_table(read_long_csv(path), CompareOptions(by=("area",)))
    scores = comp.scores_frame()
    assert set(scores["stratum"]) == {"area=X", "area=Y"} and (scores["n_questions"] == 6).all()
    assert (
        comp.flips["stem"]
        == "stem " + comp.flips["area"] + comp.flips["item"].str[1:].astype(int).astype(str)
    ).all()
    assert len(comp.flips) and set(comp.flips["area"]) == {"Y"}
    with pytest.raises(UserError, match=r"item 'i00' of model 'A' .*area: X, Y.*--by area"):
        compare_table(read_long_csv(path))
    assert main(["compare", str(path), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith("error: all: item 'i00'")
