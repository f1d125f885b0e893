"""Size and load time of a large report: 10 models x 720 questions x 6 strategies (synthetic).

Writes 60 synthetic results files (43,200 records, each with a ~2 KB prompt, shared by the
models as the same template gives them), makes their report with ``enade-bench report``
(the comparison included), then opens ``index.html`` in headless chromium
(tests/report/cdp.py) and prints one JSON line: the page's size, the time until the question
browser is interactive (from navigation start, the page's own clock), the time one filter
takes, and the machine's load average.

    PYTHONPATH=src:. .venv/bin/python bench/report/scale.py --out /tmp/scale   # docs/reports.md
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np
from tests.report.cdp import Browser

from enade_bench.cli.main import main as enade_bench
from enade_bench.metrics import field_breakdowns, summarize
from enade_bench.metrics.position_bias import position_bias
from enade_bench.results.records import QuestionRecord, RunResult

MODELS, QUESTIONS, STRATEGIES = 10, 720, ("S1", "S2", "S3", "S4", "S5", "S6")
LETTERS = "ABCDE"


def _records(model: int, strategy: str, rng: np.random.Generator) -> list[QuestionRecord]:
    ability = 0.35 + 0.04 * model
    out = []
    for q in range(QUESTIONS):
        answer = LETTERS[q % 5]
        right = rng.random() < ability
        pred = answer if right else LETTERS[(q + 1 + int(rng.integers(4))) % 5]
        stem = f"Questão {q}: " + " ".join(f"palavra{(q * 7 + k) % 997}" for k in range(150))
        prompt = f"[{strategy}] Leia a questão e responda com a letra.\n{stem}\n" + "\n".join(
            f"{c}) alternativa {c} da questão {q}" for c in LETTERS
        )
        scores = (
            {c: float(v) for c, v in zip(LETTERS, rng.dirichlet(np.ones(5)), strict=True)}
            if strategy in ("S5", "S6")
            else None
        )
        out.append(
            QuestionRecord(
                id=f"q{q:04d}",
                fields={"year": 2010 + q % 12, "course": f"curso{q % 9}", "component": "Específico"},
                n_options=5,
                answer=answer,
                prediction=pred,
                correct=pred == answer,
                method="generation",
                shot="zero",
                strategy=strategy,
                permutation=None,
                answer_position=LETTERS.index(answer),
                predicted_position=LETTERS.index(pred),
                displayed_prediction=pred,
                option_scores=scores,
                raw_output=None if scores else f"Resposta: {pred}",
                extraction_rule="resposta",
                question_hash=f"h{q}",
                prompt_hash=f"p{q}{strategy}",
                prompt=prompt,
                stem=stem,
            )
        )
    return out


def write_runs(root: Path) -> list[Path]:
    rng = np.random.default_rng(54)
    folders = []
    for m in range(MODELS):
        folder = root / f"model{m:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        for strategy in STRATEGIES:
            records = _records(m, strategy, rng)
            result = RunResult(
                experiment=f"model{m:02d}",
                strategy={
                    "id": strategy,
                    "label": strategy,
                    "method": "generation",
                    "shot": "zero",
                    "shuffle": False,
                    "n_shuffles": 1,
                },
                config={"name": f"model{m:02d}", "model": {"name": f"model{m:02d}"}},
                seed=1,
                environment={"python": "3", "libraries": {}, "git": {}},
                model={"backend": "synthetic", "name": f"model{m:02d}"},
                dataset={"sources": [], "filter_counts": {}, "invalid_rows": [], "n_evaluated": QUESTIONS},
                prompts={},
                totals=summarize(records),
                breakdowns=field_breakdowns(records, ("year", "course", "component")),
                position_bias=position_bias(records),
                records=records,
            )
            (folder / f"model{m:02d}_{strategy}_results.json").write_text(
                json.dumps(result.model_dump(mode="json"))
            )
        folders.append(folder)
    return folders


def measure(index: Path, profile: Path) -> dict[str, float]:
    browser = Browser(profile)
    try:
        browser.open(
            index.as_uri(),
            "document.getElementById('qb') && document.getElementById('qb').dataset.ready",
            600,
        )
        ready = browser.evaluate("Number(document.getElementById('qb').dataset.readyAt)")
        filter_ms = browser.evaluate(
            "(() => { const t = performance.now(); const s = document.getElementById('qb-outcome'); s.value = 'wrong';"
            " s.dispatchEvent(new Event('change', {bubbles: true})); return performance.now() - t; })()"
        )
        errors = browser.errors()
    finally:
        browser.close()
    return {"interactive_ms": round(ready), "filter_ms": round(filter_ms), "errors": len(errors)}


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="scratch folder (emptied)")
    parser.add_argument(
        "--keep-results", action="store_true", help="reuse the results files of an earlier run"
    )
    args = parser.parse_args()
    kept = args.keep_results and (args.out / "results").is_dir()
    for part in ("report", "profile") if kept else ("",):
        shutil.rmtree(args.out / part, ignore_errors=True)
    start = time.perf_counter()
    folders = sorted((args.out / "results").iterdir()) if kept else write_runs(args.out / "results")
    written = time.perf_counter()
    status = enade_bench(
        ["report", *map(str, folders), "--out", str(args.out / "report"), "--no-psychometrics"]
    )
    assert status == 0
    made = time.perf_counter()
    index = args.out / "report" / "index.html"
    timing = measure(index, args.out / "profile")
    print(
        json.dumps(
            {
                "models": MODELS,
                "questions": QUESTIONS,
                "strategies": len(STRATEGIES),
                "records": MODELS * QUESTIONS * len(STRATEGIES),
                "index_mb": round(index.stat().st_size / 1e6, 1),
                "write_results_s": round(written - start),
                "report_s": round(made - written),
                **timing,
                "load_average": round(os.getloadavg()[0], 1),
            }
        )
    )


if __name__ == "__main__":
    run()
