"""The HTML report in a real headless browser (Debian's chromium).

The page must load without console errors, every embedded figure must decode
(``naturalWidth > 0``) and a screenshot must not be blank.  The checks read the
DOM that chromium dumps after the load event, from a copy of ``index.html``
with a small probe script appended (the report itself has no scripts).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image as mpimg

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-quic", "--enable-logging=stderr", "--v=0",
]  # fmt: skip

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install chromium)")

#: Records errors and console.error calls, then, after load, each figure's decoded size.
PROBE_HEAD = """<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message || e.type)), true);
const __ce = console.error; console.error = (...a) => { window.__errors.push(a.join(' ')); __ce(...a); };
</script>"""
PROBE_TAIL = """<script>
window.addEventListener('load', () => {
  const imgs = [...document.querySelectorAll('img')];
  const out = document.createElement('pre'); out.id = 'probe-result';
  out.textContent = JSON.stringify({errors: window.__errors,
    images: imgs.map(i => ({id: i.closest('figure') ? i.closest('figure').id : '', w: i.naturalWidth,
                             h: i.naturalHeight, complete: i.complete}))});
  document.body.appendChild(out);
});
</script>"""


def _chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)


def load_page(page: Path, tmp_path: Path) -> tuple[dict[str, object], list[str]]:
    """Open ``page`` with the probe; return the probe's result and console error lines."""
    text = page.read_text(encoding="utf-8")
    probed = tmp_path / f"probed_{page.name}"
    probed.write_text(
        text.replace("<head>", "<head>" + PROBE_HEAD, 1).replace("</body>", PROBE_TAIL + "</body>")
    )
    proc = _chromium(["--virtual-time-budget=10000", "--dump-dom", probed.as_uri()], tmp_path / "profile-dom")
    match = re.search(r'<pre id="probe-result">(.*?)</pre>', proc.stdout, re.S)
    assert match, f"chromium did not render the page (rc {proc.returncode}):\n{proc.stderr[-2000:]}"
    result = json.loads(match.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    console = [
        line for line in proc.stderr.splitlines()
        if "CONSOLE" in line and re.search(r"error|uncaught|failed", line, re.I)
    ]  # fmt: skip
    return result, console


def test_probe_detects_a_broken_page(tmp_path: Path) -> None:
    """The checks below can fail: a page with a script error and a broken image is caught."""
    page = tmp_path / "broken.html"
    page.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
        "<figure id='f'><img src='data:image/png;base64,AAAA'></figure>"
        "<script>undefinedFunction();</script></body></html>",
        encoding="utf-8",
    )
    result, console = load_page(page, tmp_path)
    assert result["errors"] or console
    assert any(img["w"] == 0 for img in result["images"])  # type: ignore[union-attr]


@pytest.mark.slow
def test_report_loads_without_errors_and_figures_render(report_dir: Path, tmp_path: Path) -> None:
    index = report_dir / "index.html"
    html = index.read_text(encoding="utf-8")
    assert "<script" not in html and not re.search(r'(src|href)="https?:', html), "not self-contained"
    result, console = load_page(index, tmp_path)
    assert result["errors"] == [] and console == [], (result["errors"], console)
    images = result["images"]
    n_figures = len(list((report_dir / "figures").glob("*.png")))
    assert isinstance(images, list) and len(images) == n_figures > 0
    assert all(img["complete"] and img["w"] > 0 and img["h"] > 0 for img in images), images


@pytest.mark.slow
def test_screenshot_is_not_blank(report_dir: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    proc = _chromium(["--window-size=1280,2400", f"--screenshot={shot}", (report_dir / "index.html").as_uri()],
                     tmp_path / "profile-shot")  # fmt: skip
    assert shot.exists(), proc.stderr[-2000:]
    pixels = np.asarray(mpimg.imread(shot))[..., :3]
    assert pixels.shape[0] > 100 and pixels.shape[1] > 100
    dark = (pixels.mean(axis=2) < 0.5).mean()
    assert pixels.std() > 0.02 and 0.001 < dark < 0.9, (pixels.std(), dark)
