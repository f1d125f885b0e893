"""What can be known about a model without loading its weights: tokenizer, context, capabilities.

:func:`enade_bench.backends.factory.inspect_model` returns a :class:`ModelInfo` for a
model config; ``enade-bench validate`` uses it to count the tokens of every rendered
prompt and compare them with the context length.  The tokenizer is the model's own
and the text is rendered exactly as the backend renders it (:mod:`.chat_render`:
chat template, system message, ``Resposta:`` prefill), so the count is the count of
the tokens the model reads.

The tokenizer alone comes from :func:`.hf_load.source_tokenizer` (a GGUF's from its
metadata, kept in the cache); no weights are read or converted here.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from enade_bench.backends.base import METHODS
from enade_bench.backends.chat_render import (
    encode_text,
    letter_token_ids,
    local_prompt_form,
    render_text,
    resolve_instruct,
)
from enade_bench.backends.hf_load import (
    ModelSource,
    _converted_dir,
    _tokenizer_dir,
    hf_token,
    resolve_source,
    source_tokenizer,
)
from enade_bench.backends.light_tokenizer import form_path, keep_light, load_light
from enade_bench.backends.model_cache import cache_root
from enade_bench.config import ModelConfig
from enade_bench.errors import UserError
from enade_bench.prompts.builder import PromptParts
from enade_bench.regular_file import read_text
from enade_bench.results.identity import ModelIdentity, PromptForm

#: Config attributes that hold a model's context length, most specific first.
CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length", "n_ctx")


class TokenCounter:
    """The model's tokenizer applied to the exact text a backend sends.

    ``instruct``: the chat template is applied (its special tokens are in the text,
    none are added); otherwise the plain prompt, with the tokenizer's own special
    tokens (BOS) added, as the backends encode it.
    """

    def __init__(self, tokenizer: Any, instruct: bool) -> None:
        self.tokenizer = tokenizer
        self.instruct = instruct

    def render(self, prompt: PromptParts) -> str:
        """The text the model reads (:func:`.chat_render.render_text`)."""
        return render_text(self.tokenizer, prompt, self.instruct)

    def encode(self, text: str) -> list[int]:
        """Token ids of a rendered text (chat templates carry their own special tokens)."""
        return encode_text(self.tokenizer, text, self.instruct)

    def count_text(self, text: str) -> int:
        """Tokens of an already rendered text."""
        return len(self.encode(text))

    def count_texts(self, texts: list[str]) -> list[int]:
        """Tokens of each rendered text, encoded in one call (as :meth:`count_text` counts them)."""
        ids: list[list[int]] = self.tokenizer(texts, add_special_tokens=not self.instruct)["input_ids"]
        return [len(i) for i in ids]

    def count_continuation(self, text: str) -> int:
        """Tokens of a text continuing a prompt (an option scored by ``log_prob``), none added."""
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def count(self, prompt: PromptParts) -> int:
        """Tokens the model reads for ``prompt``."""
        return self.count_text(self.render(prompt))


class LocalModel(TokenCounter):
    """What the local engines (transformers, vLLM) share: the tokenizer, how a prompt is read, who answers."""

    #: Every method: a local model gives log-probabilities of any token.
    capabilities = METHODS

    def __init__(
        self,
        cfg: ModelConfig,
        tokenizer: Any,
        source: ModelSource,
        engine: str,
        dtype: str,
        version: str | None = None,
    ) -> None:
        super().__init__(tokenizer, resolve_instruct(cfg.instruct, tokenizer))
        self.source = source
        self.prompt_form: PromptForm = local_prompt_form(self.instruct)
        self.identity = ModelIdentity(
            backend=cfg.type,
            name=source.name,
            instruct=self.instruct,
            prompt_form=self.prompt_form,
            engine=engine,
            engine_version=version,
            dtype=dtype,
            weights=source.weights,
        )

    def letter_token_ids(self, letters: str, variants: str) -> list[list[int]]:
        """Single-token ids standing for each letter (``A`` and/or `` A``)."""
        return letter_token_ids(self.tokenizer, letters, variants)


@dataclass(frozen=True)
class ModelInfo:
    """A model as far as it is known before its weights load.

    ``counter`` is None when there is no local tokenizer (an API model without
    ``api.tokenizer``); ``context_length`` is None when unknown (APIs, models whose
    config has no position limit).
    """

    type: str
    capabilities: frozenset[str] | None
    prompt_form: PromptForm | None
    counter: TokenCounter | None
    context_length: int | None
    #: Where ``context_length`` comes from, e.g. ``config.json max_position_embeddings``.
    context_source: str | None = None
    #: Seconds the inspection took (tokenizer and config loading).
    seconds: float = 0.0


def load_tokenizer(name: str, key: str = "model.api.tokenizer") -> Any:
    """The tokenizer of a model folder, hub id or (packaged) GGUF, no weights converted."""
    cfg = ModelConfig(name=name)
    try:
        return source_tokenizer(cfg, resolve_source(cfg))
    except UserError as exc:
        raise UserError(str(exc).replace("model.name:", f"{key}:", 1)) from None


def _gguf_context(source: ModelSource) -> tuple[int | None, str | None]:
    """``<architecture>.context_length`` from the GGUF metadata (the header only)."""
    assert source.gguf_file is not None
    path = Path(source.location) / source.gguf_file
    try:
        from transformers.integrations.gguf import read_gguf_metadata  # noqa: PLC0415

        metadata, _ = read_gguf_metadata(str(path))
    except ImportError:  # older transformers: the gguf package's reader (slower, same values)
        from gguf import GGUFReader  # noqa: PLC0415 (heavy or optional dependency, imported at use)

        reader = GGUFReader(path)
        metadata = {k: f.contents() for k, f in reader.fields.items() if not k.startswith("tokenizer.")}
    arch = metadata.get("general.architecture")
    value = metadata.get(f"{arch}.context_length")
    if value is None:
        return None, None
    return int(value), f"GGUF {arch}.context_length"


def _memo_gguf_context(source: ModelSource) -> tuple[int | None, str | None]:
    """:func:`_gguf_context`, kept in the cache by the weights' hash (reading it imports torch)."""
    assert source.weights.weights_sha256 is not None
    memo = cache_root() / "gguf_context" / f"{source.weights.weights_sha256[:24]}.json"
    try:
        kept = json.loads(read_text(memo))
        return kept["length"], kept["source"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    length, where = _gguf_context(source)
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo.with_name(f".{memo.name}.{os.getpid()}")
        tmp.write_text(json.dumps({"length": length, "source": where}), encoding="utf-8")
        os.replace(tmp, memo)
    except OSError:  # the cache is a convenience: a read-only cache still gives the length
        pass
    return length, where


def _config_json_context(folder: Path) -> tuple[int | None, str | None]:
    """The context length written in a local folder's ``config.json`` (no transformers, no torch)."""
    try:
        config = json.loads(read_text(folder / "config.json"))
    except (OSError, ValueError):
        return None, None
    if not isinstance(config, dict):
        return None, None
    for part in (config, config.get("text_config")):
        if not isinstance(part, dict):
            continue
        for key in CONTEXT_KEYS:
            value = part.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value, f"config.json {key}"
    return None, None


def source_context_length(cfg: ModelConfig, source: ModelSource) -> tuple[int | None, str | None]:
    """The model's own context length and where it was read, without its weights.

    A value written in a local ``config.json`` is read from the file; the config class's
    defaults (``AutoConfig``, which imports torch) are asked only when it holds none.
    """
    if source.kind == "gguf" and not (_converted_dir(source) / "config.json").exists():
        return _memo_gguf_context(source)
    location = str(_converted_dir(source)) if source.kind == "gguf" else source.location
    if source.kind != "hub":
        length, where = _config_json_context(Path(location))
        if length is not None:
            return length, where
    import transformers  # noqa: PLC0415 (heavy or optional dependency, imported at use)

    try:
        config = transformers.AutoConfig.from_pretrained(
            location,
            revision=None if source.kind == "gguf" else cfg.revision,
            token=hf_token(cfg),
            local_files_only=source.local_files_only,
        )
    except (OSError, ValueError) as exc:
        raise UserError(
            f"model.name: cannot read the config of '{cfg.name}' ({type(exc).__name__}: {exc})"
        ) from None
    for part in (config, getattr(config, "text_config", None)):
        for key in CONTEXT_KEYS:
            value = getattr(part, key, None)
            if isinstance(value, int) and value > 0:
                return value, f"config.json {key}"
    return None, None


def tokenizer_folder(source: ModelSource) -> Path | None:
    """The local folder a source's tokenizer is read from (None: a hub model, or a GGUF not saved yet)."""
    if source.kind == "folder":
        return Path(source.location)
    if source.kind == "gguf":
        for folder in (_converted_dir(source), _tokenizer_dir(source)):
            if (folder / "tokenizer_config.json").exists():
                return folder
    return None


def _light_form(source: ModelSource) -> Path | None:
    """Where the model cache keeps the light form of a source's tokenizer (None: no local folder)."""
    folder = tokenizer_folder(source)
    return None if folder is None else form_path(folder, cache_root())


def local_counter(cfg: ModelConfig, source: ModelSource) -> TokenCounter:
    """The token counter of a local model (``model.instruct`` resolved as the backends do).

    The tokenizer's light form (:mod:`.light_tokenizer`, no ``transformers`` import) when the
    model cache keeps one; else the ``transformers`` tokenizer, whose light form is then kept.
    """
    where = _light_form(source)
    tokenizer: Any = None if where is None else load_light(where)
    if tokenizer is None:
        tokenizer = source_tokenizer(cfg, source)
        where = _light_form(source)  # a GGUF's tokenizer is saved by its first inspection
        if where is not None:
            keep_light(tokenizer, where)
    return TokenCounter(tokenizer, resolve_instruct(cfg.instruct, tokenizer))
