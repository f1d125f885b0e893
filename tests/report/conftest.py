"""Session fixtures: a real demo run (all strategies), an ENEM shuffle run, and their report.

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
def results_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``results/demo`` (S1–S6), ``results/enem`` (K shuffles) and ``results/demo_old`` (a stale copy)."""
    root = tmp_path_factory.mktemp("results")
    work = tmp_path_factory.mktemp("configs")
    demo_cfg = _write_config(
        REPO_ROOT / "configs" / "demo.yaml",
        work / "demo.yaml",
        dataset={"benchmark": "enade", "path": str(REPO_ROOT / "data" / "enade_demo.csv")},
        model={"training_cutoff": TEST_CUTOFF},
    )
    _run_here(["run", str(demo_cfg), "--all-strategies", "--limit", str(DEMO_LIMIT),
               "--output-dir", str(root / "demo"), "--quiet"])  # fmt: skip
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
        _run_here(["run", str(enem_cfg), "--limit", str(ENEM_LIMIT),
                   "--output-dir", str(root / "enem"), "--quiet"])  # fmt: skip
    return root


@pytest.fixture(scope="session")
def report_dir(results_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of everything under ``results_root``, made by one command."""
    out = tmp_path_factory.mktemp("report")
    _run(enade_bench("report", str(results_root), "--out", str(out)))
    return out
