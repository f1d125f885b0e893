"""The README and docs/: relative links resolve, the README stays a short user document.

Links are checked the way GitHub renders them: a relative target (a file, a folder,
an image) must exist, and a ``#fragment`` into a Markdown file must name one of its
headings under GitHub's slug rules (lower case, punctuation dropped, spaces to ``-``,
``-1``, ``-2``… for repeated headings).  Fenced code blocks and inline code are not
Markdown, so links and headings inside them are ignored.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import yaml

from enade_bench.config import parse_config

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
MAX_README_LINES = 305

#: Docs written on other branches of issue 11 and linked from the README before they
#: land here.  A link to one of these may dangle on this branch only; once the file
#: exists, remove it from this set (test_pending_docs_are_still_pending says when).
PENDING_DOCS: set[str] = set()

#: The README opens with exactly these two commands; .ci/run runs them.
OPENING_BLOCK = """\
```bash
bash setup.sh                   # creates .venv, installs everything, runs the demo (all six strategies)
.venv/bin/python -m pytest      # the whole test suite (what CI runs)
```"""

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(][^)]*)?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of the lines outside fenced code blocks, inline code removed."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * 3
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        out.append((number, INLINE_CODE.sub("", line)))
    return out


def github_slug(heading: str) -> str:
    """GitHub's anchor for a heading's text (github-slugger's rules)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").replace("\\", "")
    text = text.lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LNM")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file, repeated headings numbered as GitHub does."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    fence: str | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * 3
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        heading = HEADING.match(line)
        if heading is None:
            continue
        slug = github_slug(heading.group(2).rstrip("#").strip())
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def links(path: Path) -> list[tuple[int, str]]:
    """(line number, target) of every inline link, image and reference definition."""
    found: list[tuple[int, str]] = []
    for number, line in prose_lines(path):
        found += [(number, m.group(1)) for m in LINK.finditer(line)]
        reference = REFERENCE.match(line)
        if reference:
            found.append((number, reference.group(1)))
    return found


def broken_links(path: Path, root: Path = REPO) -> list[tuple[str, str]]:
    """(``file:line: target``, why) for each relative link of ``path`` that does not resolve."""
    problems: list[tuple[str, str]] = []
    for number, target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
            continue  # http:, https:, mailto: ...
        where = f"{path.relative_to(root).as_posix()}:{number}: {target}"
        file_part, _, fragment = unquote(target).partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        relative = resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else None
        if not resolved.exists():
            if relative not in PENDING_DOCS:
                problems.append((where, "no such file"))
            continue
        if fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            problems.append((where, f"no heading with anchor #{fragment}"))
    return problems


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda p: p.relative_to(REPO).as_posix())
def test_relative_links_resolve(path: Path) -> None:
    assert broken_links(path) == []


def test_the_checker_catches_broken_links(tmp_path: Path) -> None:
    """A missing file, a missing anchor and a link hidden in code are told apart."""
    (tmp_path / "other.md").write_text("# Other\n\n## A `code` heading: θ!\n\n## Same\n\n## Same\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md#a-code-heading-θ) [ok](other.md#same-1) [ok](#page)\n"
        "[bad](missing.md) ![bad](img/none.png) [bad](other.md#nothing) [bad](#same-2)\n"
        "`[not a link](missing.md)`\n```\n[not a link](missing.md)\n```\n[web](https://example.org/x)\n"
    )
    got = [where.split(": ", 1)[1] for where, _ in broken_links(page, tmp_path)]
    assert got == ["missing.md", "img/none.png", "other.md#nothing", "#same-2"]


def test_github_slugs() -> None:
    """Slugs of headings used in these docs, written out by hand from GitHub's pages."""
    assert github_slug("Position bias (BPC)") == "position-bias-bpc"
    assert github_slug("From an ENEM run to `irt score`") == "from-an-enem-run-to-irt-score"
    assert github_slug("Psychometrics: IRT ability, person fit") == "psychometrics-irt-ability-person-fit"
    assert github_slug("l_z with EAP θ is conservative") == "l_z-with-eap-θ-is-conservative"
    assert github_slug("Batch APIs (half price, up to 24 h)") == "batch-apis-half-price-up-to-24-h"


def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; move detail to docs/"


def test_readme_opens_with_the_two_commands() -> None:
    """Title, blank line, then the block CI runs: nothing may come before it."""
    text = README.read_text(encoding="utf-8")
    title, _, rest = text.partition("\n")
    assert title.startswith("# ")
    assert rest.lstrip("\n").startswith(OPENING_BLOCK + "\n")


def test_ci_runs_the_readme_commands() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [line.split("#")[0].strip() for line in OPENING_BLOCK.splitlines()[1:-1]]
    assert commands == ["bash setup.sh", ".venv/bin/python -m pytest"]
    for command in commands:
        assert command in (line.strip() for line in ci), f".ci/run does not run {command!r}"


def test_pending_docs_are_still_pending() -> None:
    """Once a pending doc exists, its link is checked like any other: drop it from the set."""
    landed = sorted(p for p in PENDING_DOCS if (REPO / p).exists())
    assert landed == [], f"remove {landed} from PENDING_DOCS in tests/test_docs.py"


def test_pending_docs_are_linked_from_the_readme() -> None:
    targets = {target.partition("#")[0] for _, target in links(README)}
    assert PENDING_DOCS <= targets


def config_examples(path: Path) -> list[dict[str, Any]]:
    """The YAML blocks of ``path`` that are whole experiment configs (start with ``name:``)."""
    blocks = re.findall(r"^```yaml\n(.*?)^```", path.read_text(encoding="utf-8"), re.S | re.M)
    return [yaml.safe_load(b) for b in blocks if b.startswith("name:")]


def test_readme_config_example_is_valid() -> None:
    (data,) = config_examples(README)
    parse_config(data, "README.md")


def test_full_config_reference_is_a_valid_config() -> None:
    """The annotated YAML in docs/configuration.md validates and names every key."""
    (data,) = config_examples(REPO / "docs" / "configuration.md")
    config = parse_config(data, "docs/configuration.md")
    assert set(data) == set(type(config).model_fields)
    for block in ("dataset", "model", "evaluation", "prompts", "output"):
        fields = set(type(getattr(config, block)).model_fields) - {"api"}  # api: docs/providers.md
        missing = sorted(fields - set(data[block]))
        assert missing == [], f"document {block}.{missing} in docs/configuration.md"
