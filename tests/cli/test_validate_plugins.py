"""``validate`` says that a plug-in is code that runs, and which plug-in code it imported (issue 32)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from enade_bench.cli.main import main

DEMO_CSV = Path(__file__).resolve().parents[2] / "data" / "enade_demo.csv"

#: A benchmark folder whose import leaves a trace on disk: proof that validate ran its code.
PLUGIN = """
from pathlib import Path

from enade_bench.benchmarks.registry import DEFAULT

Path(__file__).with_name("ran.txt").write_text("this plug-in's code ran", encoding="utf-8")
BENCHMARK = DEFAULT.get("enade")
"""


def _config(folder: Path) -> Path:
    plugin = folder / "my_exam"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(PLUGIN, encoding="utf-8")
    config = {
        "name": "trust",
        "dataset": {"benchmark": "./my_exam", "path": str(DEMO_CSV)},
        "model": {"type": "api", "api": {"provider": "openai", "model": "m", "api_key": "sk-not-used"}},
        "evaluation": {"method": "api"},
        "prompts": {"preset": "team"},
    }
    path = folder / "trust.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_validate_prints_the_plugin_code_it_imported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path)
    assert main(["validate", str(config), "--limit", "2"]) == 0
    out = capsys.readouterr().out
    init = (tmp_path / "my_exam" / "__init__.py").resolve()
    lines = [line for line in out.splitlines() if line.startswith("plug-in code imported")]
    assert len(lines) == 1 and lines[0].endswith(f"({init})") and "enade_bench_plugin_" in lines[0], out
    assert (tmp_path / "my_exam" / "ran.txt").is_file()  # what the line says happened, happened
    assert "ok: " in out


def test_validate_without_a_plugin_names_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _config(tmp_path)
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["dataset"]["benchmark"] = "enade"
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["validate", str(config), "--limit", "2"]) == 0
    assert "plug-in code imported" not in capsys.readouterr().out
    assert not (tmp_path / "my_exam" / "ran.txt").exists()


def test_validate_help_carries_the_trust_note(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["validate", "--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.replace("-\n", "-").split())  # argparse wraps at hyphens
    assert "A plug-in is Python code that runs" in text and "prints which plug-in code it imported" in text


def test_validate_names_an_installed_entry_point_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A distribution on ``sys.path`` (its ``.dist-info`` declares the entry point) is found and named."""
    site = tmp_path / "site"
    package = site / "trust_probe_exam"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(PLUGIN, encoding="utf-8")
    info = site / "trust_probe_exam-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: trust-probe-exam\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[enade_bench.benchmarks]\ntrust_probe = trust_probe_exam:BENCHMARK\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    config = _config(tmp_path / "cfg")
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["dataset"]["benchmark"] = "trust_probe"
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    monkeypatch.delitem(sys.modules, "trust_probe_exam", raising=False)
    status = main(["validate", str(config), "--limit", "2"])
    out = capsys.readouterr()
    lines = [line for line in out.out.splitlines() if line.startswith("plug-in code imported")]
    assert lines == [f"plug-in code imported (it ran): trust_probe_exam ({package / '__init__.py'})"], out
    assert (package / "ran.txt").is_file()
    assert (
        status == 2 and "its BENCHMARK is named 'enade'" in out.err
    )  # the registry's own check, after the import
