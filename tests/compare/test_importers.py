"""``compare --from lm-eval|inspect|helm``: real harness output gives the tables of a long CSV made by hand.

The fixtures under ``data/`` are the harnesses' own files (lm-eval ``--log_samples`` and
inspect_ai logs of SmolLM2-135M and Gemma 3 270M on 10 ENEM questions; HELM run folders in
its documented format), each with a ``by_hand.csv`` typed from them (data/README.md).
"""

from __future__ import annotations

import json
import re
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from enade_bench.cli.main import main
from enade_bench.compare.importers import read_from
from enade_bench.errors import UserError

DATA = Path(__file__).parent / "data"
LM_EVAL_MC = sorted(DATA.glob("lm-eval/*/samples_enem_mc_*.jsonl"))
KEYS = {
    "scores.csv": ["strategy", "stratum", "model"],
    "pairs.csv": ["strategy", "stratum", "model_a", "model_b"],
}


def _table(path: Path, name: str) -> pd.DataFrame:
    """One written table, in a fixed row order (cells come in the order the files were read)."""
    return pd.read_csv(path / name).sort_values(KEYS[name]).reset_index(drop=True)


SMOL_EVAL, GEMMA_EVAL = sorted(DATA.glob("inspect/eval/*.eval"))  # file names start with the run's time
(SMOL_JSON,) = DATA.glob("inspect/json/*.json")  # SmolLM2's log, converted by inspect log convert


@pytest.mark.parametrize(
    ("source", "paths", "hand", "by"),
    [
        ("lm-eval", ["lm-eval"], "lm-eval", ["--by", "task"]),
        ("inspect", ["inspect/eval"], "inspect", []),
        ("inspect", [SMOL_JSON, GEMMA_EVAL], "inspect", []),  # a .json and an .eval log
        ("helm", ["helm"], "helm", []),
    ],
)
def test_harness_output_gives_the_tables_of_the_hand_made_csv(
    tmp_path: Path, source: str, paths: list[str | Path], hand: str, by: list[str]
) -> None:
    read = [str(DATA / p) for p in paths]
    assert main(["compare", "--from", source, *read, "--out", str(tmp_path / "h"), *by]) == 0
    assert main(["compare", str(DATA / hand / "by_hand.csv"), "--out", str(tmp_path / "c"), *by]) == 0
    for name in KEYS:
        imported, typed = _table(tmp_path / "h", name), _table(tmp_path / "c", name)
        assert len(imported) >= 1
        pd.testing.assert_frame_equal(imported, typed)


def test_lm_eval_mapping() -> None:
    table = read_from("lm-eval", [DATA / "lm-eval"])[0]
    assert sorted(table["model"].unique()) == [
        "SmolLM2-135M-Instruct",
        "gemma-3-270m-it",
    ]  # pretrained= folders
    assert set(zip(table["task"], table["strategy"], strict=True)) == {
        ("enem_mc", "-"),
        ("enem_gen", "letter"),
    }
    assert (table["replicate"] == "0").all() and len(table) == 2 * 2 * 10
    first = table[(table["item"] == "enem_mc/0") & (table["model"] == "SmolLM2-135M-Instruct")].iloc[0]
    doc = json.loads(LM_EVAL_MC[0].read_text(encoding="utf-8").splitlines()[0])
    assert first["answer"] == doc["doc"]["answer"]  # the gold continuation, " B" stripped
    logliks = [float(r[0]) for r in doc["filtered_resps"]]
    assert first["prediction"] == "ABCDE"[logliks.index(max(logliks))]  # what acc scored
    assert first["correct"] == int(doc["acc"]) and first["stem"].endswith("por qual fator geográfico?")


def test_lm_eval_metric_option_reads_that_metric() -> None:
    table = read_from("lm-eval", LM_EVAL_MC, ["acc_norm"])[0]
    expected = [
        int(json.loads(line)["acc_norm"])
        for f in LM_EVAL_MC
        for line in f.read_text(encoding="utf-8").splitlines()
    ]
    assert (
        table["correct"].tolist() == expected and (table["prediction"] == "").all()
    )  # acc's choice is not shown


def test_metric_per_task_reads_acc_norm_for_one_task_and_the_default_for_the_other() -> None:
    """A run with a multiple-choice task and a generation task: ``--metric enem_mc=acc_norm``."""
    with pytest.raises(UserError, match="no metric 'acc_norm'"):
        read_from("lm-eval", [DATA / "lm-eval"], ["acc_norm"])[0]  # enem_gen has exact_match only
    table = read_from("lm-eval", [DATA / "lm-eval"], ["enem_mc=acc_norm"])[0]
    mc = table[table["task"] == "enem_mc"]
    assert mc["correct"].tolist() == [
        int(json.loads(line)["acc_norm"])
        for f in LM_EVAL_MC
        for line in f.read_text(encoding="utf-8").splitlines()
    ]
    default = read_from("lm-eval", [DATA / "lm-eval"])[0]
    gen = table["task"] == "enem_gen"
    assert table[gen]["correct"].tolist() == default[default["task"] == "enem_gen"]["correct"].tolist()


@pytest.mark.parametrize(
    ("metrics", "message"),
    [
        (
            ["enem_mcq=acc_norm"],
            "--metric enem_mcq=acc_norm: no task 'enem_mcq' in the lm-eval output (tasks: enem_gen, enem_mc)",
        ),
        (["acc", "acc_norm"], "'acc' and 'acc_norm' both for every task"),
        (["enem_mc=acc", "enem_mc=acc_norm"], "task 'enem_mc' given twice"),
        (["enem_mc="], "expected NAME or TASK=NAME"),
        (["=acc"], "expected NAME or TASK=NAME"),
    ],
)
def test_bad_metric_values_are_refused(metrics: list[str], message: str) -> None:
    with pytest.raises(UserError, match=re.escape(message)):
        read_from("lm-eval", [DATA / "lm-eval"], metrics)[0]


def test_inspect_mapping() -> None:
    table = read_from("inspect", [DATA / "inspect" / "eval"])[0]
    assert sorted(table["model"].unique()) == ["hf/SmolLM2-135M-Instruct", "hf/gemma-3-270m-it"]
    assert set(table["replicate"]) == {"1", "2"} and len(table) == 2 * 10 * 2  # models x questions x epochs
    log = json.loads(SMOL_JSON.read_text(encoding="utf-8"))
    sample = log["samples"][0]
    row = table[
        (table["item"] == f"enem_2022_ch/{sample['id']}") & (table["replicate"] == str(sample["epoch"]))
    ]
    row = row[row["model"] == log["eval"]["model"]].iloc[0]
    assert (
        row["answer"] == sample["target"]
        and row["correct"] == {"C": 1, "I": 0}[sample["scores"]["choice"]["value"]]
    )
    assert (row["task"], row["year"], row["area"]) == ("enem_2022_ch", *sample["metadata"].values())
    assert sample["input"].strip().endswith(row["stem"].strip().lstrip("…")[-60:])


def _sorted_rows(table: pd.DataFrame) -> pd.DataFrame:
    return table.sort_values(["model", "item", "replicate"]).reset_index(drop=True)


def test_inspect_eval_and_json_logs_of_one_run_give_the_same_rows(tmp_path: Path) -> None:
    from enade_bench.compare.importers.inspect import member_bytes

    from_eval = _sorted_rows(read_from("inspect", [SMOL_EVAL])[0])
    pd.testing.assert_frame_equal(from_eval, _sorted_rows(read_from("inspect", [SMOL_JSON])[0]))
    deflated = tmp_path / SMOL_EVAL.name  # inspect_ai before zstd wrote deflate zips: same reading
    with zipfile.ZipFile(SMOL_EVAL) as source, zipfile.ZipFile(deflated, "w", zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            target.writestr(name, member_bytes(SMOL_EVAL, source, name))
    pd.testing.assert_frame_equal(from_eval, _sorted_rows(read_from("inspect", [deflated])[0]))


def test_zstd_logs_without_zstandard_say_how_to_read_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import zstandard -> ImportError
    with pytest.raises(UserError, match="install zstandard .* or convert the log: inspect log convert"):
        read_from("inspect", [SMOL_EVAL])[0]


def test_helm_mapping_of_trials_perturbations_and_folder_names(tmp_path: Path) -> None:
    (run,) = [p for p in DATA.glob("helm/*") if "gemma" in p.name]
    target = tmp_path / run.name
    target.mkdir()
    entries = json.loads((run / "per_instance_stats.json").read_text(encoding="utf-8"))
    typo = {**entries[0], "perturbation": {"name": "typo", "robustness": True, "fairness": False}}
    trial = {**entries[1], "train_trial_index": 1}
    (target / "per_instance_stats.json").write_text(json.dumps([*entries, typo, trial]), encoding="utf-8")
    table = read_from("helm", [target])[0]  # no run_spec.json: the model comes from the folder name
    assert set(table["model"]) == {"google_gemma-3-270m-it"} and set(table["task"]) == {"enem_challenge"}
    assert table[table["strategy"] == "typo"]["item"].tolist() == ["enem_challenge/id0"]
    assert table[table["replicate"] == "1"]["item"].tolist() == ["enem_challenge/id1"]
    assert (table["stem"] == "").all()  # no scenario_state.json: no texts
    full = read_from("helm", [run])[0]
    state = json.loads((run / "scenario_state.json").read_text(encoding="utf-8"))["request_states"][0]
    letter = {text: letter for letter, text in state["output_mapping"].items()}
    key = [r["output"]["text"] for r in state["instance"]["references"] if r["tags"] == ["correct"]]
    assert full.loc[0, "answer"] == letter[key[0]] and full.loc[0, "split"] == "test"
    assert full.loc[0, "prediction"] == state["result"]["completions"][0]["text"].strip()


def _lm_eval_copy(folder: Path) -> Path:
    """A copy of SmolLM2's lm-eval output (results and both samples files)."""
    (source,) = [p for p in DATA.glob("lm-eval/*") if "SmolLM2" in p.name]
    target = folder / source.name
    target.mkdir(parents=True)
    for file in source.iterdir():
        (target / file.name).write_bytes(file.read_bytes())
    return target


def _edit_first_sample(samples: Path, **changes: object) -> None:
    lines = samples.read_text(encoding="utf-8").splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), **changes})
    samples.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _bad(tmp: Path, case: str) -> tuple[list[str], str]:
    """Build one bad input under ``tmp``; the arguments after ``compare`` and the expected message."""
    if case == "no_samples":
        (tmp / "empty").mkdir()
        return ["--from", "lm-eval", str(tmp / "empty")], "empty: no samples_*.jsonl under it"
    if case == "no_results_json":
        run = _lm_eval_copy(tmp)
        next(run.glob("results_*.json")).unlink()
        return ["--from", "lm-eval", str(run)], "not found; lm_eval writes it beside the samples files"
    if case == "unknown_metric":
        return [
            "--from",
            "lm-eval",
            str(DATA / "lm-eval"),
            "--metric",
            "f1",
        ], "line 1 (doc_id 0): no metric 'f1'"
    if case == "metric_not_0_1":
        run = _lm_eval_copy(tmp)
        _edit_first_sample(next(run.glob("samples_enem_mc_*.jsonl")), acc=0.5)
        return ["--from", "lm-eval", str(run)], "line 1 (doc_id 0): acc is 0.5; expected 0 or 1"
    if case == "two_runs":
        run = _lm_eval_copy(tmp)
        for file in list(run.iterdir()):
            (run / file.name.replace("16-36-02", "17-00-00")).write_bytes(file.read_bytes())
        return ["--from", "lm-eval", str(run)], "has another run of task 'enem_gen'"
    if case == "not_json_line":
        run = _lm_eval_copy(tmp)
        next(run.glob("samples_enem_mc_*.jsonl")).write_text("{oops\n", encoding="utf-8")
        return ["--from", "lm-eval", str(run)], "line 1: not JSON"
    if case == "two_scorers":
        log = json.loads(SMOL_JSON.read_text(encoding="utf-8"))
        log["samples"][0]["scores"]["match"] = {"value": "C"}
        (tmp / "log.json").write_text(json.dumps(log), encoding="utf-8")
        return ["--from", "inspect", str(tmp / "log.json")], "scorers choice, match; choose one with --metric"
    if case == "partial_credit":
        log = json.loads(SMOL_JSON.read_text(encoding="utf-8"))
        log["samples"][0]["scores"]["choice"]["value"] = "P"
        (tmp / "log.json").write_text(json.dumps(log), encoding="utf-8")
        return ["--from", "inspect", str(tmp / "log.json")], "epoch 1: choice is 'P'; expected 0 or 1"
    if case == "eval_without_header":
        with zipfile.ZipFile(tmp / "run.eval", "w") as archive:
            archive.writestr("samples/q1_epoch_1.json", "{}")
        return ["--from", "inspect", str(tmp / "run.eval")], "no header.json in it"
    if case == "eval_not_zip":
        (tmp / "run.eval").write_text("not a zip", encoding="utf-8")
        return [
            "--from",
            "inspect",
            str(tmp / "run.eval"),
        ], "not a zip file; expected an inspect_ai .eval log"
    if case == "json_not_a_log":
        (tmp / "notes.json").write_text('{"a": 1}', encoding="utf-8")
        return ["--from", "inspect", str(tmp)], "notes.json: no 'samples' list"
    if case == "helm_no_stats":
        (tmp / "runs").mkdir()
        return ["--from", "helm", str(tmp / "runs")], "no per_instance_stats.json under it"
    if case == "helm_unknown_stat":
        return [
            "--from",
            "helm",
            str(DATA / "helm"),
            "--metric",
            "f1",
        ], "instance 'id0' (train trial 0): no stat 'f1'"
    if case == "same_run_twice":
        return ["--from", "helm", str(DATA / "helm"), str(DATA / "helm")], "was already read from"
    if case == "long_with_metric":
        return [
            "--from",
            "long",
            str(DATA / "helm" / "by_hand.csv"),
            "--metric",
            "acc",
        ], "--metric: a long CSV"
    if case == "metric_without_from":
        return [str(DATA / "helm" / "by_hand.csv"), "--metric", "acc"], "--metric: name the harness too"
    raise AssertionError(case)


BAD_CASES = [
    "no_samples",
    "no_results_json",
    "unknown_metric",
    "metric_not_0_1",
    "two_runs",
    "not_json_line",
    "two_scorers",
    "partial_credit",
    "eval_without_header",
    "eval_not_zip",
    "json_not_a_log",
    "helm_no_stats",
    "helm_unknown_stat",
    "same_run_twice",
    "long_with_metric",
    "metric_without_from",
]


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_harness_input_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    args, expected = _bad(tmp_path, case)
    assert main(["compare", *args, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and expected in err[0], err
    assert not (tmp_path / "out").exists()


def test_from_long_is_the_long_csv_reader() -> None:
    from enade_bench.compare.table import read_long_csv

    hand = DATA / "helm" / "by_hand.csv"
    pd.testing.assert_frame_equal(read_from("long", [hand])[0], read_long_csv(hand))


def test_helm_run_without_the_metric_is_reported_and_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A suite where one run lacks the stat (HELM before 0.2.3): that run is named and skipped, the rest read."""
    runs = sorted(p for p in DATA.glob("helm/*") if p.is_dir())
    for run in runs:
        target = tmp_path / run.name
        target.mkdir()
        for file in run.iterdir():
            (target / file.name).write_bytes(file.read_bytes())
    old = tmp_path / runs[0].name / "per_instance_stats.json"
    entries = json.loads(old.read_text(encoding="utf-8"))
    for entry in entries:
        entry["stats"] = [s for s in entry["stats"] if s["name"]["name"] != "exact_match"]
    old.write_text(json.dumps(entries), encoding="utf-8")
    table = read_from("helm", [tmp_path])[0]
    assert table["model"].nunique() == 1 and len(table) == len(read_from("helm", [runs[1]])[0])
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"warning: {old}") and "no stat 'exact_match'" in err[0]
    assert "left out of the comparison" in err[0]


def test_inspect_rows_keep_each_samples_text_choices_tokens_and_time() -> None:
    """What ``compare --out``'s question browser shows of an inspect log (issue 62): the sample's own
    ``input``, ``choices``, ``output.completion``, ``output.usage`` tokens and ``output.time``."""
    log = next((DATA / "inspect" / "json").glob("*.json"))
    samples = {(str(s["id"]), s["epoch"]): s for s in json.loads(log.read_text(encoding="utf-8"))["samples"]}
    _, rows = read_from("inspect", [log])
    assert len(rows) == len(samples)
    for row in rows:
        sample = samples[(row.item.split("/", 1)[1], int(row.replicate))]
        output = sample["output"]
        assert row.shown.options == tuple(sample["choices"]) and row.shown.raw == output["completion"]
        usage = output["usage"]
        assert row.shown.usage == (usage["input_tokens"], usage["output_tokens"], output["time"])
