"""The docs' example outputs are what the commands print now (issue 34: docs regenerated, kept so in CI).

A block of example output in ``docs/*.md`` is preceded by a marker naming its command::

    <!-- example: enade-bench compare --from helm tests/compare/data/helm --out results/cmp_helm -->

The test runs that command in-process (``--out`` moved to a temporary folder) and compares its
standard output with the block, less the ``wrote N files to FOLDER`` line (FOLDER differs).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from enade_bench.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(
    r"<!-- example: enade-bench (?P<command>[^\n]*?) -->\n+```[a-z]*\n(?P<output>.*?)```", re.DOTALL
)


def _examples() -> list[tuple[str, str, str]]:
    found = []
    for doc in sorted((ROOT / "docs").glob("*.md")):
        for match in MARKER.finditer(doc.read_text(encoding="utf-8")):
            found.append((doc.name, match["command"], match["output"]))
    return found


EXAMPLES = _examples()


def test_the_comparison_docs_have_examples() -> None:
    assert sum(1 for doc, *_ in EXAMPLES if doc == "comparisons.md") >= 3


@pytest.mark.parametrize(
    ("doc", "command", "output"), EXAMPLES, ids=[f"{d}:{c.split()[2]}" for d, c, _ in EXAMPLES]
)
def test_doc_example_output_is_the_commands_output(
    doc: str,
    command: str,
    output: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    args = shlex.split(command)
    if "--out" in args:
        args[args.index("--out") + 1] = str(tmp_path / "out")
    assert main(args) == 0
    printed = [
        line.rstrip() for line in capsys.readouterr().out.splitlines() if not line.startswith("wrote ")
    ]
    shown = [line.rstrip() for line in output.splitlines()]
    assert printed == shown, f"{doc}: `enade-bench {command}` now prints:\n" + "\n".join(printed)
