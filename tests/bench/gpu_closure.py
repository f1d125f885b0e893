"""Run what ``bench/gpu/run_gpu.sh`` runs, small and on the CPU, and print every module it imported.

``python tests/bench/gpu_closure.py ENEM_DIR TOKENIZER_DIR OUT``: the ``gpu`` test's module through
pytest (plugins from entry points off, as on the image: only pytest itself), then the GPU arm
through its command line (``python -m bench --device cpu ...``: S1 and S5 in
file order, lm-eval's HF backend on both), a one-layer SmolLM2 shape on 2 questions.  Writes to ``OUT``
every module imported, one a line: its name, its file (empty: built in) and the module that
first imported it, tab-separated (``sys.modules`` at the end).  Used by ``test_gpu_image.py``.
"""

from __future__ import annotations

import os
import runpy
import sys
import tempfile

os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
enem, tokenizer, listing = sys.argv[1], sys.argv[2], sys.argv[3]


class Importers:
    """A meta-path finder that finds nothing: it notes which module first imports each module."""

    def __init__(self) -> None:
        self.first: dict[str, str] = {}

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name not in self.first:
            frame = sys._getframe(1)
            while frame is not None and frame.f_globals.get("__name__", "").startswith(
                ("importlib", "_frozen_importlib")
            ):
                frame = frame.f_back  # type: ignore[assignment]
            self.first[name] = frame.f_globals.get("__name__", "") if frame is not None else ""


importers = Importers()
sys.meta_path.insert(0, importers)  # type: ignore[arg-type]
import pytest  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
code = pytest.main(
    [
        "-q",
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=--import-mode=importlib",
        "-m",
        "gpu",
        os.path.join(root, "tests", "backends", "test_gpu.py"),
    ]
)
if code not in (0, 5, pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
    raise SystemExit(f"pytest exit {code}")
with tempfile.TemporaryDirectory() as out:
    sys.argv = [
        "bench",
        "--device",
        "cpu",
        "--shape",
        "smollm2-135m",
        "--layers",
        "1",
        "--tokenizer",
        tokenizer,
        "--enem-dir",
        enem,
        "--dtype",
        "float32",
        "--batch-size",
        "2",
        "--limit",
        "2",
        "--orders",
        "file",
        "--strategies",
        "S1,S5",
        "--max-new-tokens",
        "2",
        "--f32-check",
        "1",
        "--profile",
        "--out",
        os.path.join(out, "gpu.json"),
    ]
    try:
        runpy.run_module("bench", run_name="__main__")
    except SystemExit as stop:
        if stop.code not in (0, None):
            raise
with open(listing, "w") as fh:
    for name in sorted(sys.modules):
        importer = importers.first.get(name, "")
        fh.write(f"{name}\t{getattr(sys.modules[name], '__file__', None) or ''}\t{importer}\n")
