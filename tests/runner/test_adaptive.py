"""Live CAT with the real packaged SmolLM2 on ENEM 2022 MT: only the selected questions are asked."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from tests.conftest import REPO_ROOT, require_shared

from enade_bench.benchmarks import load_experiment
from enade_bench.benchmarks.enem.bank import enem_item_bank
from enade_bench.psychometrics.cat import CatConfig
from enade_bench.psychometrics.estimation import eap
from enade_bench.runner.adaptive import live_cat
from enade_bench.runner.execute import ChunkExecutor
from enade_bench.runner.plan import RunOptions
from enade_bench.runner.run import load_backend


@pytest.mark.slow
def test_live_cat_asks_only_the_selected_items(tmp_path: Path) -> None:
    csv = require_shared("enem", "questions", "pt-br", "ENEM_2022_MT_CO_PROVA_1082.csv")
    config = yaml.safe_load(
        (REPO_ROOT / "configs" / "enem_2022_mt_shuffles.yaml").read_text(encoding="utf-8")
    )
    config["dataset"]["path"] = str(csv)
    config["evaluation"]["shuffle_alternatives"] = False
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    options = RunOptions()
    _, exp = load_experiment(tmp_path / "cfg.yaml", options)
    bank = enem_item_bank(exp.dataset.questions, csv, require_shared("enem"))
    exp = load_backend(exp, options)
    executor = ChunkExecutor(exp.model, exp.plans[0], exp.config.evaluation, exp.extract_fn)
    assert bank.booklet == 1082 and len(bank.items) == 42  # 45 minus annulled / unparameterised items

    result = live_cat(executor, bank, CatConfig(target_se=0.0, max_items=6))
    trace = result.trace
    assert trace.n_items == 6 and trace.stopped_by == "budget"
    asked = [r.id for r in result.records]
    assert asked == [bank.questions[j].id for j in trace.items] and len(set(asked)) == 6
    assert list(trace.responses) == [r.correct for r in result.records]
    # θ after the last item is the EAP of exactly those answers
    pattern = np.full(len(bank.items), np.nan)
    pattern[list(trace.items)] = [float(c) for c in trace.responses]
    assert trace.theta[-1] == pytest.approx(eap(pattern[None, :], bank.items).theta[0], abs=1e-10)
    # the first item is the most informative one at θ = 0
    from enade_bench.psychometrics.irt import item_information

    assert trace.items[0] == int(np.argmax(item_information(0.0, bank.items)))
