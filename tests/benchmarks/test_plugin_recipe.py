"""docs/adding_an_exam.md's entry-point recipe, run as written on a fresh environment (issues 32, 42).

Before: the recipe reinstalled enade-bench with ``pip install -e`` (``egg-info`` written into
the checkout), without the constraints file (pip would fetch the multi-GB CUDA torch) and
without the packaged model, and its ``int_fields`` example broke on edition names such as
``2010-01``; then (issue 42) the separate environment it promised was made by the test
alone, its ``prompt.yaml`` was not on the page, and the checkout's ``enade-bench`` was called
"the same command".  Here every file comes from the page: the plug-in's ``__init__.py``,
``prompt.yaml`` and worked examples, the config, and the bash recipe, which makes the
plug-in's environment itself; it runs with ``ENADE`` the checkout, ``BASE_PY`` the project's
environment and ``VENV`` a temporary folder, and touches neither that environment nor the
checkout. The installed exam then runs on the packaged model, and the project's own
environment, which lacks the plug-in, says which plug-ins it found.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "adding_an_exam.md"
#: Editions named as the bar exam names them (year-number), not whole numbers.
CSV = """numero,edicao,area,enunciado,a,b,c,d,gabarito
1,2010-01,Civil,O prazo prescricional geral do Código Civil é de,três anos.,cinco anos.,dez anos.,vinte anos.,C
2,2010-01,Penal,A legítima defesa exclui a,tipicidade.,ilicitude.,culpabilidade.,punibilidade.,B
3,2010-02,Constitucional,O mandado de segurança protege direito,difuso.,líquido e certo.,adquirido.,potestativo.,B
"""


def _blocks() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```(\w+)\n(.*?)```", text, re.S)
    recipe = text.split("<!-- plugin-recipe", 1)[1]
    return {
        "init": next(b for lang, b in blocks if lang == "python" and "BENCHMARK = CsvExam" in b),
        "prompt": next(b for lang, b in blocks if lang == "yaml" and b.startswith("system:")),
        "examples": next(b for lang, b in blocks if lang == "yaml" and b.startswith("examples:")),
        "config": next(b for lang, b in blocks if lang == "yaml" and "name: oab_smollm2" in b),
        "recipe": re.search(r"```bash\n(.*?)```", recipe, re.S).group(1),  # type: ignore[union-attr]
    }


def _git_state() -> str:
    proc = subprocess.run(
        ["git", "status", "--porcelain", "--ignored"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return proc.stdout


@pytest.mark.slow
def test_the_entry_point_recipe_runs_as_written(tmp_path: Path) -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing to compare the checkout's state with")
    blocks = _blocks()
    work = tmp_path / "work"  # the user's own folder, outside the checkout
    exam = work / "my_exam"
    exam.mkdir(parents=True)
    (exam / "__init__.py").write_text(blocks["init"], encoding="utf-8")
    (exam / "prompt.yaml").write_text(blocks["prompt"], encoding="utf-8")
    (exam / "examples.yaml").write_text(blocks["examples"], encoding="utf-8")
    (work / "oab.yaml").write_text(blocks["config"] + "evaluation: {max_new_tokens: 4}\n", encoding="utf-8")
    (work / "oab_41.csv").write_text(CSV, encoding="utf-8")
    python = tmp_path / "venv" / "bin" / "python"  # made by the recipe
    env = {
        **os.environ,
        "ENADE": str(ROOT),
        "BASE_PY": sys.executable,
        "VENV": str(tmp_path / "venv"),
        "PYTHONPATH": str(ROOT / "src"),
        "PIP_NO_INDEX": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    before = _git_state()
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", blocks["recipe"]],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok: " in proc.stdout and "Exame de Ordem" in proc.stdout, proc.stdout
    assert list((tmp_path / "venv").glob("lib/python*/site-packages/*oab_plugin*")), "installed elsewhere"
    run = subprocess.run(
        [
            str(python),
            "-m",
            "enade_bench",
            "run",
            "oab.yaml",
            "--strategy",
            "S1",
            "--quiet",
            "--output-dir",
            "out",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    result = json.loads((work / "out" / "oab_smollm2_S1_results.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in result["records"]] == ["2010-01:1", "2010-01:2", "2010-02:3"]
    assert result["records"][2]["fields"] == {"edicao": "2010-02", "area": "Constitucional"}
    assert set(result["breakdowns"]) == {"edicao", "area", "n_options"}
    # the project's own environment does not have the plug-in, and says which plug-ins it found where
    other = subprocess.run(
        [sys.executable, "-m", "enade_bench", "validate", "oab.yaml"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert other.returncode == 2 and other.stderr.count("\n") == 1, other.stderr
    assert "got 'oab'; expected a built-in exam (generic, enade" in other.stderr
    assert (
        f"an installed plug-in (none found: no entry point in the group 'enade_bench.benchmarks' in the environment of {sys.executable}"
        in other.stderr
    )
    assert _git_state() == before  # no egg-info, build folder or anything else written into the checkout
