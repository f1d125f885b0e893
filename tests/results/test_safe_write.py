"""The one safe writer (issue 32): a link at the target is replaced, never followed; a linked
subfolder or a path outside the output folder is refused; cleaning never deletes through a link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.report.test_unit import _records

from enade_bench.errors import UserError
from enade_bench.results.lock import run_lock
from enade_bench.results.log_key import LogKey
from enade_bench.results.paths import RunPaths
from enade_bench.results.safe_write import output_root, remove_inside, write_text
from enade_bench.results.store import IntermediateLog, atomic_write_text


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim.txt"
    path.write_text("precious\n", encoding="utf-8")
    return path


def test_a_link_to_a_file_at_the_target_is_replaced_not_followed(tmp_path: Path, victim: Path) -> None:
    out = tmp_path / "out"
    (out / "tables").mkdir(parents=True)
    (out / "tables" / "table1.tex").symlink_to(os.path.relpath(victim, out / "tables"))
    write_text(out / "tables" / "table1.tex", "new\n", root=out)
    assert victim.read_text(encoding="utf-8") == "precious\n"
    target = out / "tables" / "table1.tex"
    assert not target.is_symlink() and target.read_text(encoding="utf-8") == "new\n"


def test_a_dangling_link_at_the_target_is_replaced(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.csv").symlink_to(tmp_path / "nowhere" / "created.csv")
    atomic_write_text(out / "a.csv", "x\n")
    assert not (out / "a.csv").is_symlink() and not (tmp_path / "nowhere").exists()


def test_a_linked_subfolder_is_refused_and_nothing_lands_there(tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "figures").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UserError, match=r"figures: a symbolic link inside the output folder"):
        write_text(out / "figures" / "a.png", "x", root=out)
    with output_root(out), pytest.raises(UserError, match="symbolic link"):  # the root of a report
        atomic_write_text(out / "figures" / "sub" / "a.png", "x")
    assert list(elsewhere.iterdir()) == []


def test_the_output_folder_itself_may_be_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "out").symlink_to(real, target_is_directory=True)
    write_text(tmp_path / "out" / "tables" / "t.csv", "x\n", root=tmp_path / "out")
    assert (real / "tables" / "t.csv").read_text(encoding="utf-8") == "x\n"


@pytest.mark.parametrize("name", ["../x.csv", "tables/../../x.csv"])
def test_a_path_that_leaves_the_folder_is_refused(tmp_path: Path, name: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(UserError, match="outside the output folder"):
        write_text(out / name, "x", root=out)
    assert not (tmp_path / "x.csv").exists()


def test_a_folder_at_the_target_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "t.csv").mkdir()
    with pytest.raises(UserError, match="a folder is in the way"):
        atomic_write_text(tmp_path / "t.csv", "x")


def test_cleaning_deletes_links_themselves_and_nothing_outside(tmp_path: Path, victim: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    (out / "tables").mkdir(parents=True)
    elsewhere.mkdir()
    (elsewhere / "a.png").symlink_to(victim)
    (out / "tables" / "t.tex").symlink_to(victim)
    (out / "figures").symlink_to(elsewhere, target_is_directory=True)
    (out / "empty").symlink_to(tmp_path / "empty_dir", target_is_directory=True)
    (tmp_path / "empty_dir").mkdir()
    remove_inside(out, {"tables/t.tex", "figures/a.png", "../victim.txt", "/etc/passwd", "empty"})
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert (elsewhere / "a.png").is_symlink()  # reached only through the linked folder: kept
    assert not (out / "tables").exists()  # emptied, removed
    assert not (out / "empty").exists() and (tmp_path / "empty_dir").is_dir()  # the link went, not its target


def test_a_run_log_behind_a_link_is_refused(tmp_path: Path, victim: Path) -> None:
    log = tmp_path / "demo_S1_intermediate.jsonl"
    log.symlink_to(victim)
    with pytest.raises(UserError, match="demo_S1_intermediate.jsonl: a symbolic link"):
        IntermediateLog(log, LogKey({})).load()
    with pytest.raises(UserError, match="a symbolic link"):
        IntermediateLog(log, LogKey({})).append([_records([True], [0])[0]])
    assert victim.read_text(encoding="utf-8") == "precious\n"


def test_a_lock_behind_a_link_is_refused(tmp_path: Path, victim: Path) -> None:
    lock = tmp_path / "demo_S1.lock"
    lock.symlink_to(victim)
    with pytest.raises(UserError, match="demo_S1.lock: a symbolic link"), run_lock([lock]):
        pass
    assert victim.read_text(encoding="utf-8") == "precious\n"


def test_a_linked_previous_folder_is_refused(tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    paths = RunPaths.of(out, "demo", "S1")
    paths.results.write_text("{}", encoding="utf-8")
    (out / "previous_old").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UserError, match="previous_old: a symbolic link"):
        paths.set_aside()
    assert list(elsewhere.iterdir()) == [] and paths.results.exists()


@pytest.mark.parametrize(("name", "strategy"), [("../../x", "S1"), ("demo", "a/b"), ("a" * 250, None)])
def test_run_paths_refuse_names_that_leave_one_file_name(
    tmp_path: Path, name: str, strategy: str | None
) -> None:
    with pytest.raises(UserError, match="it names the run's files"):
        RunPaths.of(tmp_path, name, strategy)
