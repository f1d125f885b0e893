"""Output paths are checked before any work, leave nothing behind, and name the reason."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from enade_bench.errors import UserError
from enade_bench.psychometrics.io import write_csv
from enade_bench.results.store import atomic_write_text
from enade_bench.results.writable import PROBE_PREFIX, check_output_dir, check_output_file


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_existing_and_creatable_folders_pass_without_leaving_anything(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    before = _listing(tmp_path)
    check_output_dir(tmp_path / "results", "output.dir")
    check_output_dir(tmp_path / "new" / "deep" / "folder", "output.dir")  # creatable: not created
    check_output_file(tmp_path / "new" / "out.json", "--out")
    assert _listing(tmp_path) == before


def test_probe_really_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real_write = os.write

    def spy(fd: int, data: bytes) -> int:
        seen.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real_write(fd, data)

    monkeypatch.setattr("enade_bench.results.writable.os.write", spy)
    check_output_dir(tmp_path, "output.dir")
    assert len(seen) == 1 and Path(seen[0]).name.startswith(PROBE_PREFIX)
    assert Path(seen[0]).parent == tmp_path and not Path(seen[0]).exists()


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("taken", "output.dir: 'TMP/taken' is a file, not a folder"),
        (
            "taken/sub",
            "output.dir: cannot create folder 'TMP/taken/sub': 'TMP/taken' is a file, not a folder",
        ),
        (
            "taken/a/b",
            "output.dir: cannot create folder 'TMP/taken/a/b': 'TMP/taken' is a file, not a folder",
        ),
        ("dangling/sub", "output.dir: 'TMP/dangling' is a broken symbolic link (expected a folder)"),
        ("x" * 300, "is not a usable folder (File name too long)"),
    ],
)
def test_bad_output_folders_name_key_path_and_reason(tmp_path: Path, relative: str, expected: str) -> None:
    (tmp_path / "taken").write_text("a file\n")
    (tmp_path / "dangling").symlink_to(tmp_path / "absent")
    with pytest.raises(UserError) as info:
        check_output_dir(tmp_path / relative, "output.dir")
    assert expected.replace("TMP", str(tmp_path)) in str(info.value)


def test_unwritable_folder() -> None:
    # /proc and /sys refuse new files even to root (chmod would not stop root, who runs CI here).
    with pytest.raises(
        UserError, match=r"--out: cannot create folder '/proc/enade': cannot write in '/proc' \("
    ):
        check_output_dir("/proc/enade", "--out")
    with pytest.raises(
        UserError, match=r"--out: cannot write '/sys/out.csv': cannot write in folder '/sys' \("
    ):
        check_output_file("/sys/out.csv", "--out")


def test_read_only_folder(tmp_path: Path) -> None:
    """A folder the user may not write in. Root (CI here) ignores permission bits, so as root the
    folder is made immutable instead (``chattr +i``, ext4), which refuses root too."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o500)
        reason, undo = "Permission denied", lambda: folder.chmod(0o700)
    else:
        made = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, text=True, check=False)
        if made.returncode != 0:
            if os.environ.get("CI"):
                pytest.fail(f"chattr +i failed in CI: {made.stderr.strip()}")
            pytest.skip(f"as root, needs chattr +i (an ext4 tmp folder): {made.stderr.strip()}")
        reason = "Operation not permitted"

        def undo() -> None:
            subprocess.run(["chattr", "-i", str(folder)], check=True)

    try:
        with pytest.raises(UserError, match=rf"cannot write in folder .* \({reason}\)"):
            check_output_dir(folder, "output.dir")
    finally:
        undo()


def test_output_files(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file\n")
    (tmp_path / "sub").mkdir()
    with pytest.raises(UserError, match=r"--out: '.*sub' is a folder \(expected a file name\)"):
        check_output_file(tmp_path / "sub", "--out")
    with pytest.raises(
        UserError, match=r"--out: cannot write '.*taken/o.csv': '.*taken' is a file, not a folder"
    ):
        check_output_file(tmp_path / "taken" / "o.csv", "--out")
    with pytest.raises(UserError, match=r"folder '.*nodir' does not exist \(create it first\)"):
        check_output_file(tmp_path / "nodir" / "o.csv", "--out", create_parent=False)
    check_output_file(tmp_path / "taken", "--out")  # an existing file is replaced


def test_write_errors_give_the_reason(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file\n")
    with pytest.raises(UserError, match=r"taken/x.json: cannot write \((File exists|Not a directory)\)"):
        atomic_write_text(tmp_path / "taken" / "x.json", "{}")
    # pandas' own OSError has no strerror: it used to read "cannot write (None)".
    with pytest.raises(UserError) as info:
        write_csv(pd.DataFrame({"a": [1]}), tmp_path / "taken" / "out.csv")
    assert "cannot write (" in str(info.value) and "None" not in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
