"""Seconds the garbage collector takes per test: a pytest plugin, for the suite's measurements.

A suite worker holds the objects of torch, transformers and the loaded models, and each full
collection walks all of them; ``tests/conftest.py`` freezes them (``gc.freeze``) so that the
collections libraries ask for (statsmodels' Holm on every call) skip them.  This plugin times
every collection (``gc.callbacks``) and prints the total and the tests that spent most in it;
``SUITE_GC_IMPORTS`` (comma-separated modules) imports those before the first test, as a worker
that ran a model test first holds them::

    SUITE_GC_IMPORTS=torch,transformers,pandas,matplotlib.pyplot .venv/bin/python -m pytest \\
        -p bench.suite_gc -p no:cacheprovider -n 0 tests/metrics/test_simultaneous.py

(docs/performance.md, "The test suite").
"""

from __future__ import annotations

import gc
import importlib
import os
import time
from typing import Any

import pytest

_NOW = {"start": 0.0, "total": 0.0, "full": 0}
#: Per test node id: seconds in the collector and full collections.
_PER_TEST: dict[str, tuple[float, int]] = {}


def _timed(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _NOW["start"] = time.perf_counter()
        return
    _NOW["total"] += time.perf_counter() - _NOW["start"]
    _NOW["full"] += info["generation"] == 2


gc.callbacks.append(_timed)


@pytest.hookimpl(trylast=True)  # after tests/conftest.py's freeze of the collected modules
def pytest_collection_finish(session: pytest.Session) -> None:
    """The modules of ``SUITE_GC_IMPORTS``, imported after the collection, as a test would."""
    for name in filter(None, os.environ.get("SUITE_GC_IMPORTS", "").split(",")):
        importlib.import_module(name)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    seconds, full = _NOW["total"], _NOW["full"]
    try:
        return (yield)
    finally:
        _PER_TEST[item.nodeid] = (_NOW["total"] - seconds, int(_NOW["full"] - full))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    write = terminalreporter.write_line
    write(f"garbage collector: {_NOW['total']:.2f} s, {_NOW['full']} full collections")
    for node, (seconds, full) in sorted(_PER_TEST.items(), key=lambda kv: -kv[1][0])[:10]:
        write(f"{seconds:8.2f} s {full:4d} full  {node}")
