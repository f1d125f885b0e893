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
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image as mpimg
from tests.report.cdp import CHROMIUM, Browser

from enade_bench.report.browser import outcome
from enade_bench.report.loader import RunEntry, load_results

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
    _check_sorting(browser, required=shot is not None)
    record = next(r for _, r in records if r.raw_output)
    browser.open(f"{index.as_uri()}#q={record.id}", "document.getElementById('qb-open')")
    detail = browser.evaluate("document.getElementById('qb-detail').innerText")
    assert f"Question {record.id}" in detail and f"Gold answer: {record.answer}" in detail
    raws = browser.evaluate("[...document.querySelectorAll('#qb-detail .qb-raw')].map(p => p.textContent)")
    assert record.raw_output in raws
    _screenshot(browser, shot and f"{shot}_question.png", "qb-open")
    assert browser.errors() == [] and browser.requests() == [], (browser.errors(), browser.requests())


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
