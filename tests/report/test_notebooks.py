"""The notebooks execute against a small results folder (the demo and ENEM runs)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

nbformat = pytest.importorskip("nbformat", reason="needs nbformat, nbclient and ipykernel")
nbclient = pytest.importorskip("nbclient", reason="needs nbformat, nbclient and ipykernel")

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", ["01_tables.ipynb", "02_figures.ipynb"])
def test_notebook_executes(
    name: str, results_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENADE_BENCH_RESULTS", str(results_root))
    monkeypatch.setenv("ENADE_BENCH_REPORT_OUT", str(tmp_path / "out"))
    nb = nbformat.read(REPO_ROOT / "notebooks" / name, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    if name == "01_tables.ipynb":
        assert (tmp_path / "out" / "tables" / "table1.tex").exists()
        assert any("table1" in str(o.get("text", "")) for o in outputs)
    else:
        assert (tmp_path / "out" / "figures" / "comparison_custom.png").stat().st_size > 1000
        assert sum("image/png" in o.get("data", {}) for o in outputs) >= 1
    assert os.environ["ENADE_BENCH_RESULTS"] == str(results_root)
