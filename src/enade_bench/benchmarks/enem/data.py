"""Where the ENEM data folder is: one function, used by every command that needs it.

The folder holds INEP's item table (``inep_items.csv``), its booklets and scale
constants, the question files (``questions/<language>/``) and the published LLM
response patterns (``../shared/data/enem`` beside a checkout; see its README).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from enade_bench.errors import UserError

#: The file that marks an ENEM data folder.
INEP_ITEMS = "inep_items.csv"
#: The environment variable naming the shared data folder (its ``enem/`` is used).
SHARED_DATA_ENV = "ENADE_BENCH_SHARED_DATA"


def _candidates(near: Iterable[Path]) -> list[Path]:
    found: list[Path] = []
    if os.environ.get(SHARED_DATA_ENV):
        found.append(Path(os.environ[SHARED_DATA_ENV]) / "enem")
    for path in near:
        ancestors = [p for p in Path(path).resolve().parents]
        found += ancestors  # a question file lies in <enem>/questions/<language>/
        found += [a / ".." / "shared" / "data" / "enem" for a in ancestors]  # a config in a checkout
    found.append(Path.cwd() / ".." / "shared" / "data" / "enem")
    return found


def find_enem_data(
    explicit: Path | None = None, near: Iterable[Path] = (), what: str = "--enem-data"
) -> Path:
    """The ENEM data folder: the one holding ``inep_items.csv``.

    Parameters
    ----------
    explicit
        The folder the user named (``--enem-data``, a study's ``enem_data``); when
        given, it is the only candidate.
    near
        Files that tell where the data may be: a run's question file (the folder is
        one of its ancestors) or a config file in a checkout (``../shared/data/enem``
        beside one of its ancestors).
    what
        How the user names the folder, for the error message.

    Otherwise, in this order: ``$ENADE_BENCH_SHARED_DATA/enem``, the ancestors of the
    files in ``near`` (and ``../shared/data/enem`` beside each), and
    ``../shared/data/enem`` from the current folder.

    Raises
    ------
    UserError
        When the named folder holds no ``inep_items.csv``, or none is found.
    """
    if explicit is not None:
        if (Path(explicit) / INEP_ITEMS).is_file():
            return Path(explicit).resolve()
        raise UserError(f"{what}: {explicit} holds no {INEP_ITEMS}")
    for folder in _candidates(near):
        if (folder / INEP_ITEMS).is_file():
            return folder.resolve()
    raise UserError(
        f"no ENEM data folder ({INEP_ITEMS}) found; pass {what} or set {SHARED_DATA_ENV} to the "
        "shared data folder"
    )
