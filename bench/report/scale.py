"""Size and speed of a large report: 10 models x 720 questions x 6 strategies (synthetic).

Writes 60 synthetic results files (43,200 records, each with a ~2 KB prompt, shared by the
models as the same template gives them; S4 shuffled, S5 and S6 scored by log-probability),
makes their report with ``enade-bench report`` (the comparison included), then opens
``index.html`` in headless chromium (tests/report/cdp.py) and prints one JSON line: the
page's size, the time until the question browser is interactive and until a first filter
has been applied (from navigation start, the page's own clock), what one filter, one sort,
one search (after the 150 ms pause the box waits for) and opening one question take
(each until the page is laid out again), and the machine's load average.

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
        options = [f"alternativa {c} da questão {q}" for c in LETTERS]
        prompt = f"[{strategy}] Leia a questão e responda com a letra.\n{stem}\n" + "\n".join(
            f"{c}) {text}" for c, text in zip(LETTERS, options, strict=True)
        )
        scored = strategy in ("S5", "S6")
        sums = -rng.gamma(4.0, 3.0, size=5)
        scores = {c: float(v) / 6 for c, v in zip(LETTERS, sums, strict=True)} if scored else None
        details = {c: {"sum_logprob": float(v), "n_tokens": 6.0} for c, v in zip(LETTERS, sums, strict=True)}
        permutation = [int(v) for v in rng.permutation(5)] if strategy == "S4" else None
        out.append(
            QuestionRecord(
                id=f"q{q:04d}",
                fields={"year": 2010 + q % 12, "course": f"curso{q % 9}", "component": "Específico"},
                n_options=5,
                answer=answer,
                prediction=pred,
                correct=pred == answer,
                method="log_prob" if scored else "generation",
                shot="zero",
                strategy=strategy,
                permutation=permutation,
                answer_position=permutation.index(LETTERS.index(answer))
                if permutation
                else LETTERS.index(answer),
                predicted_position=permutation.index(LETTERS.index(pred))
                if permutation
                else LETTERS.index(pred),
                displayed_prediction=LETTERS[permutation.index(LETTERS.index(pred))] if permutation else pred,
                option_scores=scores,
                score_details=details if scored else None,
                raw_output=None if scores else f"Resposta: {pred}",
                extraction_rule="resposta",
                question_hash=f"h{q}",
                prompt_hash=f"p{q}{strategy}",
                prompt=prompt,
                stem=stem,
                options=options,
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
                    "method": "log_prob" if strategy in ("S5", "S6") else "generation",
                    "shot": "zero",
                    "shuffle": strategy == "S4",
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


#: Each step in the page, timed by the page's clock until it is laid out again (``offsetHeight``).
_SYNC = (
    "(() => {{ const t = performance.now(); {action}; document.body.offsetHeight;"
    " return performance.now() - t; }})()"
)
_FILTER = (
    "const s = document.getElementById('qb-outcome'); s.value = 'wrong';"
    " s.dispatchEvent(new Event('change', {bubbles: true}))"
)
_SORT = "[...document.querySelectorAll('#qb-table th')].find(h => h.textContent.startsWith('model')).click()"
_OPEN = "history.replaceState(null, '', '#q=q0360&outcome=wrong'); window.dispatchEvent(new HashChangeEvent('hashchange'))"
#: The search box waits 150 ms after the last key; the time is what follows the pause (the
#: outcome filter cleared, so that the count is every record whose question holds the text).
_SEARCH = (
    "new Promise((done) => {{ const root = document.getElementById('qb'), before = root.dataset.updates;"
    " document.getElementById('qb-outcome').value = '';"
    " const box = document.getElementById('qb-text'); box.value = {text!r};"
    " box.dispatchEvent(new Event('input', {{bubbles: true}})); const t = performance.now();"
    " const poll = () => {{ if (root.dataset.updates !== before) {{ document.body.offsetHeight;"
    " done([performance.now() - t - 150, Number(document.getElementById('qb-count').dataset.records)]); }}"
    " else setTimeout(poll, 1); }}; poll(); }})"
)


def _holding(text: str) -> int:
    """The records whose question's stem holds ``text`` as typed (the page must count as many)."""
    stems = [r.stem or "" for r in _records(0, "S1", np.random.default_rng(0))]
    return sum(text in stem.lower() for stem in stems) * MODELS * len(STRATEGIES)


def measure(index: Path, profile: Path) -> dict[str, float]:
    browser = Browser(profile)
    try:
        browser.open(
            index.as_uri(),
            "document.getElementById('qb') && document.getElementById('qb').dataset.ready",
            600,
        )
        ready = browser.evaluate("Number(document.getElementById('qb').dataset.readyAt)")
        filter_ms = browser.evaluate(_SYNC.format(action=_FILTER))
        sort_ms = browser.evaluate(_SYNC.format(action=_SORT))
        search_ms, found = browser.evaluate(_SEARCH.format(text="palavra5 "))
        open_ms = browser.evaluate(_SYNC.format(action=_OPEN))
        opened = browser.evaluate("document.getElementById('qb-open').textContent")
        errors = browser.errors()
    finally:
        browser.close()
    assert opened == "Question q0360", opened
    assert found == _holding("palavra5 "), (found, _holding("palavra5 "))
    return {
        "interactive_ms": round(ready),
        "first_filter_ms": round(ready + filter_ms),
        "filter_ms": round(filter_ms),
        "sort_ms": round(sort_ms),
        "search_ms": round(search_ms),
        "search_records": found,
        "open_ms": round(open_ms),
        "errors": len(errors),
    }


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
