"""Session fixtures: a real demo run (all strategies), an ENEM shuffle run, and their report;
a study and a comparison of the demo.

All of them are made under one folder whose name holds :data:`HOME_MARKER` (a stand-in for
the author's home folder, with the demo's data copied into it): no file they write may name
it (tests/report/test_shared_paths.py).

The runs use the packaged SmolLM2 model on a few questions, in-process (the session's one
load of the model; ``run.py`` as a process is tested in ``tests/cli`` and ``tests/runner``);
the report is made by one ``enade-bench report`` command over a folder that also holds an
``_old`` copy (which must be skipped).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from tests.conftest import REPO_ROOT, SHARED_DATA

DEMO_LIMIT = 3
ENEM_LIMIT = 6
ENEM_SHUFFLES = 3
#: In the name of the folder every fixture below writes under (the author's "home").
HOME_MARKER = "authorhomeQz7"
#: A made-up cut-off for the test config, so both sides of the split have items.
TEST_CUTOFF = "2018"


def _run(args: list[str], cwd: Path = REPO_ROOT, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr[-3000:]}")
    return proc


def _run_here(args: list[str]) -> None:
    """``enade-bench ARGS`` in this process (the session's packaged model, loaded once)."""
    from enade_bench.cli.main import main

    status = main(args)
    if status != 0:
        pytest.fail(f"enade-bench {' '.join(args)} exited {status}")


def enade_bench(*args: str) -> list[str]:
    """The console script (or the module entry point when it is not installed)."""
    script = Path(sys.executable).with_name("enade-bench")
    if script.exists():
        return [str(script), *args]
    return [sys.executable, "-c", "from enade_bench.cli.main import entry_point; entry_point()", *args]


def _write_config(source: Path, target: Path, **changes: dict[str, object]) -> Path:
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    for block, values in changes.items():
        data[block].update(values)
    target.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return target


def enem_available() -> bool:
    return (SHARED_DATA / "enem" / "inep_items.csv").is_file()


@pytest.fixture(scope="session")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The author's folder: ``data/enade_demo.csv`` (a copy) and ``configs/``; runs go below it."""
    folder = tmp_path_factory.mktemp(HOME_MARKER)
    (folder / "data").mkdir()
    (folder / "configs").mkdir()
    shutil.copy(REPO_ROOT / "data" / "enade_demo.csv", folder / "data" / "enade_demo.csv")
    return folder


@pytest.fixture(scope="session")
def results_root(home: Path) -> Path:
    """``results/demo`` (S1–S6), ``results/enem`` (K shuffles) and ``results/demo_old`` (a stale copy)."""
    root = home / "results"
    work = home / "configs"
    demo_cfg = _write_config(
        REPO_ROOT / "configs" / "demo.yaml",
        work / "demo.yaml",
        dataset={"benchmark": "enade", "path": str(home / "data" / "enade_demo.csv")},  # absolute, on purpose
        model={"training_cutoff": TEST_CUTOFF},
    )
    _run_here(
        [
            "run",
            str(demo_cfg),
            "--all-strategies",
            "--limit",
            str(DEMO_LIMIT),
            "--output-dir",
            str(root / "demo"),
            "--quiet",
        ]
    )
    stale = root / "demo_old"
    stale.mkdir()
    shutil.copy(next((root / "demo").glob("*_S1_results.json")), stale)
    if enem_available():
        enem_csv = SHARED_DATA / "enem" / "questions" / "pt-br" / "ENEM_2022_MT_CO_PROVA_1082.csv"
        enem_cfg = _write_config(
            REPO_ROOT / "configs" / "enem_2022_mt_shuffles.yaml",
            work / "enem.yaml",
            dataset={"path": str(enem_csv)},
            evaluation={"n_shuffles": ENEM_SHUFFLES},
        )
        _run_here(
            ["run", str(enem_cfg), "--limit", str(ENEM_LIMIT), "--output-dir", str(root / "enem"), "--quiet"]
        )
    return root


@pytest.fixture(scope="session")
def report_dir(results_root: Path, home: Path) -> Path:
    """The report of everything under ``results_root``, made by one command."""
    out = home / "report"
    _run(enade_bench("report", str(results_root), "--out", str(out)))
    return out


@pytest.fixture(scope="session")
def study_dir(results_root: Path, home: Path) -> Path:
    """A study of the packaged SmolLM2 alone (S1 and S4, two questions) in ``home/study``: its
    runs and report (``results_root`` first, so that the model is loaded once)."""
    config = home / "configs" / "study.yaml"
    study = {
        "name": "shared",
        "benchmark": "enade",
        "dataset": {"path": "../data/enade_demo.csv"},
        "models": [{"config": "demo.yaml", "name": "smollm2"}],
        "strategies": ["S1", "S4"],
        "limit": 2,
        "output": "../study",
        "evaluation": {"n_shuffles": 2, "max_new_tokens": 6},
    }
    config.write_text(yaml.safe_dump(study, sort_keys=False), encoding="utf-8")
    _run_here(["study", str(config), "--quiet"])
    return home / "study"


@pytest.fixture(scope="session")
def compare_dir(results_root: Path, home: Path) -> Path:
    """``enade-bench compare`` of the demo's runs and the study's, into ``home/compare``."""
    out = home / "compare"
    _run_here(
        ["compare", str(results_root / "demo"), str(home / "study" / "runs" / "smollm2"), "--out", str(out)]
    )
    return out
