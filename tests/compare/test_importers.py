"""``compare --from lm-eval|inspect|helm``: real harness output gives the tables of a long CSV made by hand.

The fixtures under ``data/`` are the harnesses' own files (lm-eval ``--log_samples`` and
inspect_ai logs of SmolLM2-135M and Gemma 3 270M on 10 ENEM questions; HELM run folders in
its documented format), each with a ``by_hand.csv`` typed from them (data/README.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from enade_bench.cli.main import main
from enade_bench.compare.importers import read_from

DATA = Path(__file__).parent / "data"
LM_EVAL_MC = sorted(DATA.glob("lm-eval/*/samples_enem_mc_*.jsonl"))
KEYS = {"scores.csv": ["strategy", "stratum", "model"], "pairs.csv": ["strategy", "stratum", "model_a", "model_b"]}


def _table(path: Path, name: str) -> pd.DataFrame:
    """One written table, in a fixed row order (cells come in the order the files were read)."""
    return pd.read_csv(path / name).sort_values(KEYS[name]).reset_index(drop=True)


@pytest.mark.parametrize(
    ("source", "folder", "hand", "by"),
    [
        ("lm-eval", "lm-eval", "lm-eval", ["--by", "task"]),
        ("inspect", "inspect/eval", "inspect", []),
        ("inspect", "inspect/json", "inspect", []),
        ("helm", "helm", "helm", []),
    ],
)
def test_harness_output_gives_the_tables_of_the_hand_made_csv(
    tmp_path: Path, source: str, folder: str, hand: str, by: list[str]
) -> None:
    assert main(["compare", "--from", source, str(DATA / folder), "--out", str(tmp_path / "h"), *by]) == 0
    assert main(["compare", str(DATA / hand / "by_hand.csv"), "--out", str(tmp_path / "c"), *by]) == 0
    for name in KEYS:
        imported, typed = _table(tmp_path / "h", name), _table(tmp_path / "c", name)
        assert len(imported) >= 1
        pd.testing.assert_frame_equal(imported, typed)


def test_lm_eval_mapping() -> None:
    table = read_from("lm-eval", [DATA / "lm-eval"])
    assert sorted(table["model"].unique()) == ["SmolLM2-135M-Instruct", "gemma-3-270m-it"]  # pretrained= folders
    assert set(zip(table["task"], table["strategy"], strict=True)) == {("enem_mc", "-"), ("enem_gen", "letter")}
    assert (table["replicate"] == "0").all() and len(table) == 2 * 2 * 10
    first = table[(table["item"] == "enem_mc/0") & (table["model"] == "SmolLM2-135M-Instruct")].iloc[0]
    doc = json.loads(LM_EVAL_MC[0].read_text(encoding="utf-8").splitlines()[0])
    assert first["answer"] == doc["doc"]["answer"]  # the gold continuation, " B" stripped
    logliks = [float(r[0]) for r in doc["filtered_resps"]]
    assert first["prediction"] == "ABCDE"[logliks.index(max(logliks))]  # what acc scored
    assert first["correct"] == int(doc["acc"]) and first["stem"].endswith("por qual fator geográfico?")


def test_lm_eval_metric_option_reads_that_metric() -> None:
    table = read_from("lm-eval", LM_EVAL_MC, metric="acc_norm")
    expected = [
        int(json.loads(line)["acc_norm"]) for f in LM_EVAL_MC for line in f.read_text(encoding="utf-8").splitlines()
    ]
    assert table["correct"].tolist() == expected and (table["prediction"] == "").all()  # acc's choice is not shown


def test_helm_mapping_of_trials_perturbations_and_folder_names(tmp_path: Path) -> None:
    (run,) = [p for p in DATA.glob("helm/*") if "gemma" in p.name]
    target = tmp_path / run.name
    target.mkdir()
    entries = json.loads((run / "per_instance_stats.json").read_text(encoding="utf-8"))
    typo = {**entries[0], "perturbation": {"name": "typo", "robustness": True, "fairness": False}}
    trial = {**entries[1], "train_trial_index": 1}
    (target / "per_instance_stats.json").write_text(json.dumps([*entries, typo, trial]), encoding="utf-8")
    table = read_from("helm", [target])  # no run_spec.json: the model comes from the folder name
    assert set(table["model"]) == {"google_gemma-3-270m-it"} and set(table["task"]) == {"enem_challenge"}
    assert table[table["strategy"] == "typo"]["item"].tolist() == ["enem_challenge/id0"]
    assert table[table["replicate"] == "1"]["item"].tolist() == ["enem_challenge/id1"]
    assert (table["stem"] == "").all()  # no scenario_state.json: no texts
    full = read_from("helm", [run])
    state = json.loads((run / "scenario_state.json").read_text(encoding="utf-8"))["request_states"][0]
    letter = {text: letter for letter, text in state["output_mapping"].items()}
    key = [r["output"]["text"] for r in state["instance"]["references"] if r["tags"] == ["correct"]]
    assert full.loc[0, "answer"] == letter[key[0]] and full.loc[0, "split"] == "test"
    assert full.loc[0, "prediction"] == state["result"]["completions"][0]["text"].strip()
