"""The one writer of every output folder: never through a link, never outside the folder.

Every file that a run, ``report``, ``compare`` or a study writes goes through
:func:`write_bytes` / :func:`write_text` (``atomic_write_text``, ``write_csv``, the
figures and the LaTeX tables call them):

* **Atomic, and a link is replaced, never followed.**  The bytes go to a temporary file
  in the same (real) folder, which is then renamed over the target.  A symbolic link at the
  target (``tables/table1.tex -> ../../victim.txt``, a shared archive carries links) is
  replaced by the new file; the file it pointed to is not touched.
* **No linked subfolder, nothing outside the folder.**  The *output folder* (``--out``,
  ``output.dir``, a study's ``report/``) is taken as given, a link included: the user named
  it.  Below it, each folder on the way to the file must be a real folder (``figures ->
  /elsewhere`` is refused), and a target whose path leaves the folder (``..``) is refused,
  each with one ``error:`` line naming the path.

* **No secret.**  While the process knows secrets (an API key, a URL's query values:
  :func:`enade_bench.masking.remember`), the content is checked against them in every
  decoded form before it is written (:func:`enade_bench.masking.scrub_document`): a JSON
  string, a CSV cell or a line that holds one is withheld whole, so no new output path can
  leak one.  :func:`append_text` (the run's log) does the same line by line.
* **Never through a hard link.**  A file replaced by rename is a new file: another name
  of the old one (``cp -al res snapshot``, a link to a file elsewhere) keeps its content.
  A file changed in place (:func:`append_text`, :func:`break_hard_link`, the run's lock)
  that has more than one name is first *copied aside*: the name in the output folder gets
  a copy of its own, with one ``warning:`` line, and the other name stays unchanged.

The output folder of a write is ``root`` when the caller gives it, else the folder of
:func:`output_root` that encloses the path (a :class:`~enade_bench.report.folder.ReportFolder` sets it for the whole report,
so the tables' and figures' writers need not pass it along), else the file's own folder.

:func:`files_inside`, :func:`linked_folders` and :func:`remove_inside` are the report
folder's cleaning: they list and delete without following a link, and only inside the folder.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path, PurePosixPath

from enade_bench.errors import UserError
from enade_bench.file_names import STEM_MAX_BYTES, name_problem, safe_stem
from enade_bench.masking import kept_identifiers, known_secrets, scrub_document
from enade_bench.masking.decoded import holds_secret_bytes
from enade_bench.results.writable import os_reason

__all__ = [
    "append_text",
    "break_hard_link",
    "file_stem",
    "files_inside",
    "folder_of",
    "link_refusal",
    "linked_folders",
    "output_root",
    "parts_below",
    "process_umask",
    "real_folder",
    "remove_inside",
    "write_bytes",
    "write_text",
]

#: The output folder being written (set by :func:`output_root`).
_ROOT: ContextVar[Path | None] = ContextVar("enade_bench_output_root", default=None)
_UMASK_LOCK = threading.Lock()


def process_umask() -> int:
    """The process umask (read by setting it back at once, under a lock)."""
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def link_refusal(link: Path, root: Path) -> UserError:
    return UserError(
        f"{link}: a symbolic link inside the output folder '{root}'; files are never written through "
        "links: remove the link (or give another folder)"
    )


def parts_below(path: Path, root: Path) -> tuple[str, ...] | None:
    """The parts of ``path`` below ``root`` (compared as written, then as absolute paths); ``None``: not below."""
    for a, b in ((path, root), (Path(os.path.abspath(path)), Path(os.path.abspath(root)))):
        try:
            return PurePosixPath(a.relative_to(b).as_posix()).parts if a != b else ()
        except ValueError:
            continue
    return None


@contextmanager
def output_root(folder: Path) -> Iterator[Path]:
    """Within the block, writes below ``folder`` are checked against it (see the module)."""
    token = _ROOT.set(Path(folder))
    try:
        yield Path(folder)
    finally:
        _ROOT.reset(token)


def _root_of(path: Path, root: Path | None) -> Path:
    if root is not None:
        return Path(root)
    active = _ROOT.get()
    if active is not None and parts_below(path, active) is not None:
        return active
    return path.parent


def real_folder(folder: Path, root: Path, for_file: Path | None = None) -> Path:
    """Make ``folder`` (``root`` or below it) a real folder, creating what is missing; ``folder``.

    ``for_file``: the file to be written there, named by the message of a failure.

    Raises
    ------
    UserError
        ``folder`` leaves ``root`` (``..``), a folder on the way is a symbolic link or a
        file, or it cannot be created.
    """
    parts = parts_below(folder, root)
    if parts is None or any(p in ("..", ".") for p in parts):
        raise UserError(f"{folder}: outside the output folder '{root}' (refused)")
    try:
        if root.is_symlink() and not root.exists():
            raise UserError(f"{root}: a broken symbolic link (expected a folder)")
        root.mkdir(parents=True, exist_ok=True)
        current = root
        for part in parts:
            current = current / part
            try:
                mode = os.lstat(current).st_mode
            except FileNotFoundError:
                try:
                    os.mkdir(current)
                except FileExistsError:
                    pass
                mode = os.lstat(current).st_mode
            if stat.S_ISLNK(mode):
                raise link_refusal(current, root)
            if not stat.S_ISDIR(mode):
                raise UserError(f"{current}: a file, not a folder (inside the output folder '{root}')")
        real, real_root = os.path.realpath(current), os.path.realpath(root)
        if os.path.commonpath([real, real_root]) != real_root:  # a race with a link
            raise link_refusal(current, root)
    except OSError as exc:
        if for_file is not None:
            raise UserError(f"{for_file}: cannot write ({os_reason(exc)})") from None
        raise UserError(f"{folder}: cannot create the folder ({os_reason(exc)})") from None
    return folder


def folder_of(path: Path, root: Path | None = None) -> Path:
    """The folder of the file ``path``, made a real folder below its output folder (:func:`real_folder`)."""
    path = Path(path)
    return real_folder(path.parent, _root_of(path, root), path)


def _without_secrets(path: Path, data: bytes) -> bytes:
    """``data`` with every part that holds a remembered secret withheld (see the module)."""
    secrets = known_secrets()
    if not secrets:
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:  # a figure: refused if its bytes show a secret (metadata, text chunks)
        if holds_secret_bytes(data, secrets):
            raise UserError(f"{path}: not written: its bytes hold a form of a secret") from None
        return data
    return encoded(scrub_document(text, path.suffix, secrets, kept_identifiers()))


def encoded(text: str) -> bytes:
    """``text`` in UTF-8, each lone surrogate (a JSON ``\\ud83d`` read, a server's reply) as its
    escape ``\\ud83d``: read back the same from a JSON file, shown as written elsewhere; never an error."""
    return text.encode("utf-8", "backslashreplace")


def break_hard_link(path: Path) -> bool:
    """Give ``path`` a file of its own when it has other names (hard links); whether it had.

    The content is copied to a new file beside it, which is renamed over ``path``: every
    other name keeps the old file, unchanged by what is written to ``path`` next.  One
    ``warning:`` line says so.  A missing file, or one with a single name, is left alone.

    Raises
    ------
    UserError
        The copy cannot be made (with the reason).
    """
    path = Path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise UserError(f"{path}: cannot write ({os_reason(exc)})") from None
    if not stat.S_ISREG(info.st_mode) or info.st_nlink <= 1:
        return False
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:100]}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out, open(path, "rb") as source:
                shutil.copyfileobj(source, out)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, stat.S_IMODE(info.st_mode))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise UserError(
            f"{path}: cannot copy aside a file with {info.st_nlink} names ({os_reason(exc)})"
        ) from None
    print(
        f"warning: {path} had {info.st_nlink} names (a hard link, e.g. a 'cp -al' copy); it was copied "
        "aside before writing: the other names keep the old content",
        file=sys.stderr,
    )
    return True


def append_text(path: Path, text: str, *, root: Path | None = None) -> None:
    """Append ``text`` (whole lines) to ``path`` and flush it to disk: never through a symbolic
    link, never into a file with other names (:func:`break_hard_link`), never a secret (each
    line that holds one is withheld, as in :func:`write_bytes`).

    Raises
    ------
    UserError
        A link at ``path``, a linked folder, or a failed write (with the reason).
    """
    path = Path(path)
    folder_of(path, root)
    if path.is_symlink():
        raise UserError(
            f"{path}: a symbolic link; files are appended in place, never through a link: remove it"
        )
    break_hard_link(path)
    data = _without_secrets(path, encoded(text))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise UserError(f"{path}: cannot append ({os_reason(exc)})") from None


def write_bytes(path: Path, data: bytes, *, root: Path | None = None) -> Path:
    """Write ``data`` to ``path`` atomically, never through a link, never outside its output folder.

    Parameters
    ----------
    path
        The file; its folders below the output folder are created as real folders.
    data
        The whole content.
    root
        The output folder (default: see the module).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    UserError
        A linked subfolder, a path outside the output folder, a folder at ``path``, or a
        failed write (with the reason, e.g. ``No space left on device``); nothing is left behind.
    """
    path = Path(path)
    folder = folder_of(path, root)
    data = _without_secrets(path, data)
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            raise UserError(f"{path}: a folder is in the way (expected a file)")
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise UserError(f"{path}: cannot write ({os_reason(exc)})") from None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:100]}.", suffix=".tmp", dir=folder)
        os.fchmod(fd, 0o666 & ~process_umask())  # mkstemp makes 0600: give what open() would give
    except OSError as exc:
        raise UserError(f"{path}: cannot write ({os_reason(exc)})") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)  # rename(2) replaces a link at ``path`` itself
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UserError(f"{path}: cannot write ({os_reason(exc)})") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text(path: Path, text: str, *, root: Path | None = None) -> Path:
    """:func:`write_bytes` of ``text`` in UTF-8 (line ends as given); ``path``."""
    return write_bytes(path, encoded(text), root=root)


def files_inside(folder: Path) -> set[str]:
    """Every file and link under ``folder`` (relative POSIX paths), without following a link."""
    if not folder.is_dir():
        return set()
    found: set[str] = set()
    for top, dirs, files in os.walk(folder):  # followlinks=False: a linked folder is listed, not entered
        here = Path(top)
        found.update((here / f).relative_to(folder).as_posix() for f in files)
        found.update((here / d).relative_to(folder).as_posix() for d in dirs if (here / d).is_symlink())
    return found


def linked_folders(folder: Path) -> list[Path]:
    """The symbolic links to folders under ``folder`` (not followed), sorted."""
    if not folder.is_dir():
        return []
    found = []
    for top, dirs, _ in os.walk(folder):
        found += [Path(top) / d for d in dirs if (Path(top) / d).is_symlink()]
    return sorted(found)


def remove_inside(folder: Path, names: Iterable[str]) -> None:
    """Delete the files ``names`` (relative POSIX paths) of ``folder``, then the folders they emptied.

    A name that leaves the folder, or leads through a linked folder, is skipped; a link is
    deleted itself (what it points to is not touched); a real folder is never deleted unless empty.

    Raises
    ------
    UserError
        A file cannot be deleted (with the reason).
    """
    for name in sorted(set(names)):
        rel = PurePosixPath(name)
        if rel.is_absolute() or not rel.parts or any(p in ("", ".", "..") for p in rel.parts):
            continue
        path, current, through_link = folder / name, folder, False
        for part in rel.parts[:-1]:
            current = current / part
            if current.is_symlink() or not current.is_dir():
                through_link = True
                break
        if through_link:
            continue
        try:
            if stat.S_ISDIR(os.lstat(path).st_mode):
                continue
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise UserError(f"{path}: cannot delete the earlier report's file ({os_reason(exc)})") from None
    for top, dirs, _ in os.walk(folder, topdown=False):
        for d in dirs:
            sub = Path(top) / d
            if not sub.is_symlink() and sub.is_dir() and not any(sub.iterdir()):
                sub.rmdir()


def file_stem(stem: str, what: str = "file name") -> str:
    """``stem`` when it is one safe file name, else its safe form (:func:`~enade_bench.file_names.safe_stem`),
    said in one ``warning:`` line on stderr.

    For names that come from a results file made elsewhere (a field, an experiment, a
    strategy): a config's names are refused when it is read, these are mapped instead.
    """
    safe = safe_stem(stem)
    if safe != stem:
        problem = name_problem(stem, STEM_MAX_BYTES)
        print(
            f"warning: {what} {stem!r} {problem}: written as '{safe}' (a name from a results file "
            "never leads outside the folder)",
            file=sys.stderr,
        )
    return safe
