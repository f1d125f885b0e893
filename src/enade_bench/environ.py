"""Environment variables set for a block of work, and restored after it."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager


@contextmanager
def environ_set(values: Mapping[str, str]) -> Iterator[None]:
    """Set ``values`` in ``os.environ`` (the processes started inside inherit them); on exit each
    variable is as it was before, unset where it was unset."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
