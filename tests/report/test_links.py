"""``report`` and ``compare`` never write through a link nor outside ``--out`` (issue 32).

The results folders are built by hand (no model): a link at a file the report writes is
replaced, a linked folder is refused before anything is deleted, and names from a results
file made elsewhere (``../../x``, ``area/subarea``) are mapped to one file name and said.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.report.test_unit import _records, write_run

from enade_bench.cli.main import main
from enade_bench.metrics import field_breakdowns, summarize
from enade_bench.metrics.position_bias import position_bias
from enade_bench.report.folder import MANIFEST
from enade_bench.results.records import RunResult


def _tree(folder: Path) -> dict[str, str]:
    """Every entry under ``folder`` (links not followed): its kind and, for a file, its text."""
    out = {}
    for top, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            path = Path(top) / name
            key = path.relative_to(folder).as_posix()
            if path.is_symlink():
                out[key] = f"link -> {os.readlink(path)}"
            elif path.is_file():
                out[key] = path.read_bytes().hex()
            else:
                out[key] = "folder"
    return out


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    write_run(root / "a", "alpha", "S1", [True, True, False, False])
    write_run(root / "b", "beta", "S1", [True, False, False, True])
    return root


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim.txt"
    path.write_text("precious\n", encoding="utf-8")
    return path


def _command(kind: str, runs: Path, out: Path) -> list[str]:
    if kind == "report":
        return ["report", str(runs / "a"), str(runs / "b"), "--out", str(out), "--no-psychometrics"]
    return ["compare", str(runs / "a"), str(runs / "b"), "--out", str(out)]


def _one_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


@pytest.mark.parametrize("kind", ["report", "compare"])
def test_links_to_a_file_and_dangling_links_are_replaced_not_followed(
    kind: str, runs: Path, tmp_path: Path, victim: Path
) -> None:
    out = tmp_path / "out"
    assert main(_command(kind, runs, out)) == 0
    written = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    tex, csv = next(f for f in written if f.endswith(".tex")), next(f for f in written if f.endswith(".csv"))
    (out / tex).unlink()
    (out / tex).symlink_to(
        os.path.relpath(victim, (out / tex).parent)
    )  # e.g. tables/table1.tex -> ../../victim.txt
    (out / csv).unlink()
    (out / csv).symlink_to(tmp_path / "gone" / "x.csv")  # dangling
    (out / "mine.txt").symlink_to(victim)  # the user's own link: kept as it is

    assert main(_command(kind, runs, out)) == 0
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert not (tmp_path / "gone").exists()
    for name in (tex, csv):
        assert (out / name).is_file() and not (out / name).is_symlink()
    assert (out / "mine.txt").is_symlink()


@pytest.mark.parametrize("kind", ["report", "compare"])
@pytest.mark.parametrize("linked", ["tables", "figures", "empty"])
def test_a_linked_folder_is_refused_before_anything_is_deleted(
    kind: str, linked: str, runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Also issue 32's "a symlink to an empty folder deletes the old report, then fails on every rerun"."""
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert main(_command(kind, runs, out)) == 0
    if (out / linked).exists():
        for path in sorted((out / linked).rglob("*"), reverse=True):
            path.unlink()  # the report's own files of that folder are gone (the user moved them)
        (out / linked).rmdir()
    (out / linked).symlink_to(elsewhere, target_is_directory=True)
    before = _tree(out)
    capsys.readouterr()

    assert main(_command(kind, runs, out)) == 2
    line = _one_error(capsys)
    assert f"'{out / linked}' is a symbolic link to a folder" in line, line
    assert _tree(out) == before and list(elsewhere.iterdir()) == []

    (out / linked).unlink()  # the rerun after removing the link works
    assert main(_command(kind, runs, out)) == 0
    assert list(elsewhere.iterdir()) == []


def _run_with_fields(folder: Path, name: str, fields: dict[str, list[str]]) -> None:
    """A results file made elsewhere: records grouped by ``fields`` (name -> value per record)."""
    records = _records([True, False, True, False], [0, 1, 2, 0])
    for i, record in enumerate(records):
        record.fields = {field: values[i] for field, values in fields.items()}
    result = RunResult.model_validate(
        {
            "experiment": name,
            "strategy": {
                "id": "S1",
                "label": "generation, zero-shot",
                "method": "generation",
                "shot": "zero",
                "shuffle": False,
                "n_shuffles": 1,
            },
            "config": {"name": name, "model": {"name": "elsewhere"}},
            "seed": 1,
            "environment": {"python": "3.11", "libraries": {}, "git": {}},
            "model": {"backend": "test", "name": "elsewhere"},
            "dataset": {"sources": [], "filter_counts": {}, "invalid_rows": [], "n_evaluated": len(records)},
            "prompts": {},
            "totals": summarize(records),
            "breakdowns": field_breakdowns(records, tuple(fields)),
            "position_bias": position_bias(records),
            "records": records,
        }
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run_S1_results.json").write_text(json.dumps(result.model_dump(mode="json")), encoding="utf-8")


def test_names_from_a_results_file_made_elsewhere_are_mapped_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "a" / "b"
    results = work / "results"
    _run_with_fields(
        results, "../../evil", {"../../x": ["p", "q", "p", "q"], "area/subarea": ["u", "u", "v", "v"]}
    )
    out = work / "out"
    outside = _tree(tmp_path)

    assert main(["report", str(results), "--out", str(out), "--no-psychometrics"]) == 0
    err = capsys.readouterr().err
    assert "warning: table 'accuracy_by_../../x' holds '/': written as 'accuracy_by_____x-" in err
    assert "warning: table 'accuracy_by_area/subarea' holds '/': written as 'accuracy_by_area_subarea-" in err
    assert "warning: figure 'summary_../../evil' holds '/'" in err
    created = set(_tree(tmp_path)) - set(outside)
    assert created and all(f"{name}/".startswith("a/b/out/") for name in created), sorted(created)
    tables = {p.name for p in (out / "tables").iterdir()}
    assert {n for n in tables if n.startswith("accuracy_by_area_subarea-")}  # one file, no subfolder
    assert all(p.is_file() for p in (out / "tables").iterdir())
    listed = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    assert all(".." not in name.split("/") for name in listed)
