"""The HTML reports in a real headless browser (Debian's chromium), one session for all of them.

Each report kind (a run folder's report, a study's, ``compare``'s) is loaded; its figures
must decode, a filter of the question browser must give the count the results files give,
and a deep link (``index.html#q=<id>``) must open that question with its gold answer and the
model's raw output.  No console error and no network request, on any page.  The browser is
driven over the DevTools protocol (tests/report/cdp.py).  ``ENADE_BENCH_SCREENSHOTS=DIR``
saves the screenshots used by docs/reports.md there.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
from matplotlib import image as mpimg
from tests.report.cdp import CHROMIUM, Browser

from enade_bench.cli.main import main
from enade_bench.dataset.schema import LETTERS
from enade_bench.report.browser import outcome
from enade_bench.report.html import render_html
from enade_bench.report.loader import RunEntry, load_results
from enade_bench.results.records import QuestionRecord

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install chromium)")
READY = "document.getElementById('qb') && document.getElementById('qb').dataset.ready === '1'"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    chrome = Browser(tmp_path_factory.mktemp("chromium-profile"))
    yield chrome
    chrome.close()


def _choose(browser: Browser, select: str, value: str) -> int:
    """Set a filter as a user does (a change event) and return the records counted."""
    browser.evaluate(
        f"(() => {{ const s = document.getElementById({json.dumps(select)}); s.value = {json.dumps(value)};"
        " s.dispatchEvent(new Event('change', {bubbles: true})); })()"
    )
    return int(browser.evaluate("document.getElementById('qb-count').dataset.records"))


def _screenshot(browser: Browser, name: str | None, at: str = "qb") -> None:
    """With ``ENADE_BENCH_SCREENSHOTS=DIR``: the page, scrolled to the element ``at``, into ``DIR/name``."""
    folder = os.environ.get("ENADE_BENCH_SCREENSHOTS")
    if folder and name:
        browser.evaluate(f"document.getElementById({json.dumps(at)}).scrollIntoView()")
        browser.screenshot(Path(folder) / name)


def test_a_broken_page_and_a_request_are_caught(browser: Browser, tmp_path: Path) -> None:
    """The checks can fail: a script error, a broken image and a request to a server are seen."""
    page = tmp_path / "broken.html"
    page.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
        "<img src='data:image/png;base64,AAAA'><img src='http://127.0.0.1:9/x.png'>"
        "<script>undefinedFunction();</script></body></html>",
        encoding="utf-8",
    )
    browser.events.clear()
    browser.open(page.as_uri())
    assert browser.errors() and browser.requests() == ["http://127.0.0.1:9/x.png"]
    assert browser.evaluate("[...document.images].map(i => i.naturalWidth)")[0] == 0


def _check_report(browser: Browser, index: Path, entries: list[RunEntry], shot: str | None = None) -> None:
    records = [(e, r) for e in entries for r in e.result.records]
    browser.events.clear()
    browser.open(index.as_uri(), READY)
    images = browser.evaluate(
        "[...document.querySelectorAll('img.report-figure')].map(i => [i.complete, i.naturalWidth])"
    )
    assert images and all(done and width > 0 for done, width in images), images
    assert int(browser.evaluate("document.getElementById('qb-count').dataset.records")) == len(records)
    right = sum(outcome(r) == "right" for _, r in records)
    assert _choose(browser, "qb-outcome", "right") == right
    model = entries[-1].experiment  # the comparison's name of a model
    assert _choose(browser, "qb-model", model) == sum(
        outcome(r) == "right" and e.experiment == model for e, r in records
    )
    _screenshot(browser, shot and f"{shot}_filtered.png")
    _choose(browser, "qb-model", "")
    _choose(browser, "qb-outcome", "")
    flagged = sum(r.id in e.result.dataset.lint for e, r in records)
    assert _choose(browser, "qb-lint", "flagged") == flagged
    assert _choose(browser, "qb-lint", "not flagged") == len(records) - flagged
    _choose(browser, "qb-lint", "")
    _check_usage(browser, records)
    _check_sorting(browser, required=shot is not None)
    record = next(r for _, r in records if r.raw_output)
    browser.open(f"{index.as_uri()}#q={record.id}", "document.getElementById('qb-open')")
    detail = browser.evaluate("document.getElementById('qb-detail').innerText")
    assert f"Question {record.id}" in detail and f"Gold answer: {record.answer}" in detail
    _check_options(browser, [r for _, r in records if r.id == record.id], detail)
    assert record.usage and "tokens in / out, s" in detail  # the packaged model's counts (issue 62, item 7)
    assert f"\t{record.usage.input_tokens} / {record.usage.output_tokens}, —" in detail, detail
    _screenshot(browser, shot and f"{shot}_question.png", "qb-open")
    browser.evaluate("document.querySelectorAll('#qb-detail .qb-toggle').forEach(b => b.click())")
    raws = browser.evaluate("[...document.querySelectorAll('#qb-detail .qb-raw')].map(p => p.textContent)")
    assert record.raw_output in raws
    _check_navigation(browser, index, [r for _, r in records])
    assert browser.errors() == [] and browser.requests() == [], (browser.errors(), browser.requests())


def _check_usage(browser: Browser, records: list[tuple[RunEntry, QuestionRecord]]) -> None:
    """The tokens table sums each model's recorded tokens; the local model records no seconds (—)."""
    sums: dict[str, list[int]] = {}
    for e, r in records:
        if r.usage:
            got = sums.setdefault(e.experiment, [0, 0, 0])
            got[0], got[1], got[2] = (
                got[0] + 1,
                got[1] + (r.usage.input_tokens or 0),
                got[2] + (r.usage.output_tokens or 0),
            )
    assert sums  # the generation strategies' records carry them
    shown = browser.evaluate(
        "[...document.querySelectorAll('#qb-usage tbody tr')].map(tr => [...tr.children].map(c => c.textContent))"
    )
    assert {row[0]: row[1:] for row in shown} == {m: [*map(str, s), "—"] for m, s in sums.items()}


def _check_options(browser: Browser, same: list[QuestionRecord], detail: str) -> None:
    """The opened question's options are page text in view (``innerText`` leaves out what is collapsed
    or hidden), each with its letter; the gold is marked, and each option counts the records that chose it."""
    options = same[0].options
    assert options and all(text in detail for text in options), (options, detail)
    got = browser.evaluate(
        "[...document.querySelectorAll('#qb-detail li.qb-option')].map(li => [li.dataset.letter,"
        " li.querySelector('.qb-text').textContent, li.classList.contains('qb-is-gold'), Number(li.dataset.chosen),"
        " !li.closest('details:not([open]), [hidden]')])"
    )
    assert [(letter, text) for letter, text, *_ in got] == [(LETTERS[i], o) for i, o in enumerate(options)]
    assert all(shown for *_, shown in got)
    assert [letter for letter, _, gold, *_ in got if gold] == [same[0].answer]
    chosen = Counter(r.prediction for r in same if r.prediction)
    assert {letter: n for letter, _, _, n, _ in got if n} == dict(chosen)


def _wait_for(browser: Browser, expression: str, expected: object, timeout: float = 10) -> None:
    """Until ``expression`` is ``expected`` in the page (a hash change is handled after the event loop turns)."""
    deadline = time.monotonic() + timeout
    while (got := browser.evaluate(expression)) != expected:
        assert time.monotonic() < deadline, (expression, got, expected)
        time.sleep(0.05)


def _check_navigation(browser: Browser, index: Path, records: list[QuestionRecord]) -> None:
    """``#q=<id>&outcome=wrong`` loaded afresh gives the count the filter gives by hand; previous/next (buttons
    and keys) move within the filtered questions, focus on the opened one; Space sorts by a header."""
    wrong = [r for r in records if outcome(r) == "wrong"]
    ids = set(r.id for r in wrong)
    browser.open(index.as_uri(), READY)
    assert _choose(browser, "qb-outcome", "wrong") == len(wrong)
    first = sorted(ids)[0]
    browser.open("about:blank")
    browser.open(f"{index.as_uri()}#q={quote(first)}&outcome=wrong", READY)
    count = "document.getElementById('qb-count').dataset.records"
    assert int(browser.evaluate(count)) == len(wrong)
    assert browser.evaluate("document.getElementById('qb-outcome').value") == "wrong"
    assert browser.evaluate("document.activeElement.id") == "qb-open"
    heading = "document.getElementById('qb-open').textContent"
    position = "document.getElementById('qb-position').textContent"
    assert browser.evaluate(heading) == f"Question {first}"
    at = int(browser.evaluate(position).split()[1])
    assert browser.evaluate(position).endswith(f"of {len(ids)} in the filtered list")
    if len(ids) > 1:
        step = "next" if at < len(ids) else "prev"
        browser.evaluate(f"document.getElementById('qb-{step}').click()")
        _wait_for(browser, f"{position}.split(' ')[1]", str(at + 1 if step == "next" else at - 1))
        assert browser.evaluate(heading).removeprefix("Question ") in ids - {first}
        assert int(browser.evaluate(count)) == len(wrong)  # the filter is kept
        key = "p" if step == "next" else "n"
        browser.evaluate(
            f"document.activeElement.dispatchEvent(new KeyboardEvent('keydown', {{key: '{key}', bubbles: true}}))"
        )
        _wait_for(browser, heading, f"Question {first}")
    th = "document.querySelector('#qb-table thead th')"
    browser.evaluate(f"{th}.dispatchEvent(new KeyboardEvent('keydown', {{key: ' ', bubbles: true}}))")
    assert browser.evaluate(f"{th}.getAttribute('aria-sort')") == "ascending"
    assert "sort=question" in browser.evaluate("location.hash")


def _check_sorting(browser: Browser, required: bool) -> None:
    """A click on a header of the report's own tables sorts its rows by that column, a second reverses
    (on the first table of more than two rows; ``required``: the page has one)."""
    got = browser.evaluate(
        "(() => { const t = [...document.querySelectorAll('table.data')].find("
        "x => !x.closest('#qb') && x.tBodies[0].rows.length > 2); if (!t) return null;"
        " const th = t.tHead.rows[0].cells[t.tHead.rows[0].cells.length - 1];"
        " const col = () => [...t.tBodies[0].rows].map(r => r.cells[r.cells.length - 1].textContent.trim());"
        " th.click(); const up = [th.getAttribute('aria-sort'), col()];"
        " th.click(); return [up, [th.getAttribute('aria-sort'), col()]]; })()"
    )
    assert got is not None or not required
    if got is None:
        return
    (state_up, up), (state_down, down) = got
    assert state_up == "ascending" and state_down == "descending" and sorted(up) == sorted(down)
    if len(set(up)) == len(up):
        assert down == up[::-1]


@pytest.mark.slow
def test_each_report_kind_in_a_browser(
    browser: Browser, report_dir: Path, results_root: Path, study_dir: Path, compare_dir: Path
) -> None:
    """Bar (issue 54): a deep link to a question of the demo's report shows its gold answer and raw output."""
    _check_report(browser, report_dir / "index.html", load_results([results_root]), "browser")
    runs = study_dir / "runs" / "smollm2"
    _check_report(browser, study_dir / "report" / "index.html", load_results([runs]))
    _check_report(browser, compare_dir / "index.html", load_results([results_root / "demo", runs]))


def _agreement(records: list[tuple[str, str, str, str]]) -> dict[str, int]:
    """Records (question, strategy, model, outcome) per agreement filter: a model's state on a question and
    strategy is right (every scored record right), wrong (none) or mixed; "all right" needs every model right."""
    state: dict[tuple[str, str], dict[str, set[bool]]] = {}
    for q, s, m, o in records:
        if o != "error":
            state.setdefault((q, s), {}).setdefault(m, set()).add(o == "right")
    counts = {"all_right": 0, "all_wrong": 0, "mixed": 0}
    for q, s, _, _ in records:
        models = state.get((q, s), {}).values()
        counts["all_right"] += bool(models) and all(v == {True} for v in models)
        counts["all_wrong"] += bool(models) and all(v == {False} for v in models)
        counts["mixed"] += any(len(v) == 2 for v in models)
    return counts


@pytest.mark.slow
def test_a_tie_over_shuffles_is_mixed(browser: Browser, study_dir: Path, tmp_path: Path) -> None:
    """Before: a question answered right in one shuffle and wrong in the other counted as "all wrong"."""
    entries = load_results([study_dir / "runs" / "smollm2"])
    s4 = next(e for e in entries if e.strategy == "S4")
    tie = s4.result.records[0].id
    wrong = next(c for c in LETTERS if c != s4.result.records[0].answer)

    def answered(r: QuestionRecord) -> QuestionRecord:
        """The tie's shuffle 0 right, its shuffle 1 wrong; every other record as run."""
        if r.id != tie:
            return r
        return r.model_copy(
            update={"prediction": r.answer if r.shuffle == 0 else wrong, "correct": r.shuffle == 0}
        )

    records = [answered(r) for r in s4.result.records]
    assert sorted((r.shuffle, r.correct) for r in records if r.id == tie) == [(0, True), (1, False)]
    entries[entries.index(s4)] = replace(s4, result=s4.result.model_copy(update={"records": records}))
    page = tmp_path / "index.html"
    page.write_text(render_html(entries, [], [], []), encoding="utf-8")
    rows = [(r.id, e.strategy, e.experiment, outcome(r)) for e in entries for r in e.result.records]
    expected = _agreement(rows)
    browser.events.clear()
    browser.open(page.as_uri(), READY)
    assert {k: _choose(browser, "qb-disagree", k) for k in expected} == expected
    browser.evaluate(f"document.getElementById('qb-text').value = {json.dumps(tie)}")  # the tie's records
    assert _choose(browser, "qb-strategy", "S4") == 2
    assert {k: _choose(browser, "qb-disagree", k) for k in expected} == {
        "all_right": 0,
        "all_wrong": 0,
        "mixed": 2,
    }
    assert browser.errors() == [] and browser.requests() == []


def test_compare_from_lm_eval_browses_its_documents(browser: Browser, tmp_path: Path) -> None:
    """Before: ``compare --from lm-eval --out`` wrote no index.html.  A deep link to an lm-eval document
    shows its question, its options with the gold and each model's choice, and its log-likelihoods."""
    data = Path(__file__).parents[1] / "compare" / "data" / "lm-eval"
    assert main(["compare", "--from", "lm-eval", str(data), "--out", str(tmp_path / "out")]) == 0
    samples = next(data.glob("*SmolLM2*/samples_enem_mc_*.jsonl"))
    doc = json.loads(samples.read_text(encoding="utf-8").splitlines()[0])
    browser.events.clear()
    browser.open(
        f"{(tmp_path / 'out' / 'index.html').as_uri()}#q=enem_mc/{doc['doc_id']}",
        "!!document.getElementById('qb-open')",
    )
    detail = browser.evaluate("document.getElementById('qb-detail').innerText")
    total = browser.evaluate("document.getElementById('qb-count').dataset.records")
    assert doc["doc"]["question"].strip() in detail and f"Gold answer: {doc['doc']['answer']}" in detail
    assert all(choice in detail for choice in doc["doc"]["choices"])
    gold = browser.evaluate(
        "[...document.querySelectorAll('#qb-detail li.qb-is-gold')].map(li => li.dataset.letter)"
    )
    assert gold == [doc["doc"]["answer"]]
    chosen = browser.evaluate(
        "[...document.querySelectorAll('#qb-detail li[data-chosen]')].map(li => Number(li.dataset.chosen))"
    )
    assert sum(chosen) == 2  # SmolLM2's and gemma's log-likelihood choice
    browser.evaluate("document.querySelectorAll('#qb-detail .qb-toggle').forEach(b => b.click())")
    assert "summed log-probability" in browser.evaluate("document.getElementById('qb-detail').innerText")
    browser.open("about:blank")
    browser.open(f"{(tmp_path / 'out' / 'index.html').as_uri()}#q=%E0%A4%A", READY)  # Safe 4: was a URIError
    assert browser.evaluate("document.getElementById('qb-count').dataset.records") == total  # every record
    assert browser.errors() == [] and browser.requests() == []


@pytest.mark.slow
def test_screenshot_is_not_blank(browser: Browser, report_dir: Path, tmp_path: Path) -> None:
    browser.open((report_dir / "index.html").as_uri(), READY)
    shot = tmp_path / "shot.png"
    browser.screenshot(shot)
    _screenshot(browser, "report_top.png", "tables")
    pixels = np.asarray(mpimg.imread(shot))[..., :3]
    assert pixels.shape[0] > 100 and pixels.shape[1] > 100
    dark = (pixels.mean(axis=2) < 0.5).mean()
    assert pixels.std() > 0.02 and 0.001 < dark < 0.9, (pixels.std(), dark)
