"""A model's tokenizer for counting, without importing ``transformers`` (``validate``'s start-up).

Importing ``transformers`` costs about 1 s of CPU (it reads every installed
distribution's metadata), most of what ``validate`` spends on a 720-question file. What
``validate`` asks of a tokenizer is small: its chat template rendered, and token ids with
or without the special tokens it adds. The first inspection of a model loads the real
tokenizer (``transformers``) and keeps, in the model cache, what those answers are made of:

* the ``tokenizers`` library's tokenizer exactly as ``transformers`` configured it
  (``backend_tokenizer``: normaliser, pre-tokeniser, added tokens and the post-processor
  that adds BOS/EOS, as the tokenizer class set it up);
* the chat template ``apply_chat_template`` uses, and the special tokens it passes to it.

Later inspections load them with ``tokenizers`` and ``jinja2`` alone
(:class:`LightTokenizer`). The template is rendered in the environment ``transformers``
builds (``transformers.utils.chat_template_utils``: a sandbox, ``trim_blocks``,
``lstrip_blocks``, loop controls, its ``tojson``, ``raise_exception``, ``strftime_now``).
A light form is kept only after it gave the real tokenizer's text and ids on
:data:`PROBES` (a template or tokenizer it cannot reproduce keeps the ``transformers``
path); its cache key holds the ``transformers`` version and the tokenizer files' sizes
and times, so an upgrade or an edited file makes a new one.  The form carries the sha256 of
its own files (``light.json``'s ``sha256``): a form edited in the cache (another chat
template, another tokenizer) is made again, with one ``note:`` line, never trusted.  Every
file is checked to be a regular file before it is opened (a FIFO would block ``validate``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Sequence
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TypedDict

from enade_bench.regular_file import NotRegularFile, check_regular, read_text

#: Version of the light form's files (a change makes a new cache key). 2: ``sha256`` of its files.
FORM_VERSION = 2
#: The tokenizer files of a folder that make the cache key (those present).
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "chat_template.jinja",
    "chat_template.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "tokenizer.model",
)
#: What the light form must reproduce before it is kept: prompts with and without a system
#: message, accents, CJK, an emoji, option letters and the ``Resposta:`` prefill.
PROBES = (
    ("Você é um médico experiente.", "Qual órgão produz a insulina?\nA) Fígado\nB) Pâncreas\nC) Rim"),
    ("", "下列说法正确的是 ( )\nA. 甲\nB. 乙 😀"),
)
TEXTS = (" B", "Resposta: C", "E-EVAL 中文 题目 😀", "  dois  espaços\n\n(A) 55 60 65")


class Encoded(TypedDict):
    """What a call returns, as ``transformers``' tokenizers do: the token ids of one text, or of each."""

    input_ids: list[int] | list[list[int]]


class LightTokenizer:
    """The part of a ``transformers`` tokenizer that ``validate`` uses, on ``tokenizers`` alone.

    Parameters
    ----------
    backend
        A ``tokenizers.Tokenizer``, as ``transformers`` configured it.
    chat_template
        The template ``apply_chat_template`` renders (None: none).
    special_tokens
        ``special_tokens_map``: the names (``bos_token`` …) passed to the template.
    """

    def __init__(self, backend: Any, chat_template: str | None, special_tokens: dict[str, str]) -> None:
        self.backend = backend
        self.chat_template = chat_template
        self.special_tokens = special_tokens
        self._compiled: Any = None

    def apply_chat_template(
        self, messages: list[dict[str, str]], tokenize: bool = False, add_generation_prompt: bool = False
    ) -> str:
        """The rendered conversation, as ``transformers``' ``apply_chat_template(tokenize=False)``."""
        if tokenize or not self.chat_template:
            raise ValueError("the light tokenizer renders a chat template as text only")
        if self._compiled is None:
            self._compiled = _environment().from_string(self.chat_template)
        return str(
            self._compiled.render(
                messages=messages,
                tools=None,
                documents=None,
                add_generation_prompt=add_generation_prompt,
                **self.special_tokens,
            )
        )

    def __call__(self, text: str | Sequence[str], add_special_tokens: bool = True) -> Encoded:
        """``{"input_ids": …}`` of one text or of a list of texts (encoded in one call)."""
        if isinstance(text, str):
            return {"input_ids": self.backend.encode(text, add_special_tokens=add_special_tokens).ids}
        encoded = self.backend.encode_batch(list(text), add_special_tokens=add_special_tokens)
        return {"input_ids": [e.ids for e in encoded]}


def _environment() -> Any:
    """The jinja2 environment ``transformers`` renders chat templates in."""
    import jinja2  # noqa: PLC0415 (only when a template is rendered)
    import jinja2.ext  # noqa: PLC0415
    from jinja2.sandbox import ImmutableSandboxedEnvironment  # noqa: PLC0415

    class Generation(jinja2.ext.Extension):
        """``{% generation %}…{% endgeneration %}``: the body (transformers tracks its span)."""

        tags = {"generation"}  # noqa: RUF012 (jinja2's Extension API)

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller: Any) -> str:
            return str(caller())

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(
        x: Any,
        ensure_ascii: bool = False,
        indent: Any = None,
        separators: Any = None,
        sort_keys: bool = False,
    ) -> str:
        return json.dumps(
            x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        )

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[Generation, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env


def form_path(folder: Path, cache: Path) -> Path | None:
    """Where the light form of the tokenizer in ``folder`` is kept (None: no ``tokenizer.json``).

    Raises
    ------
    NotRegularFile
        A tokenizer file of ``folder`` (links followed) is a FIFO, a device or a folder:
        ``transformers`` would block opening it.
    """
    for name in TOKENIZER_FILES:
        check_regular(folder / name)
    if not (folder / "tokenizer.json").is_file():
        return None
    try:
        transformers_version = version("transformers")
    except PackageNotFoundError:
        return None
    key = [str(FORM_VERSION), transformers_version, str(folder.resolve())]
    for name in TOKENIZER_FILES:
        try:
            st = (folder / name).stat()
        except OSError:
            continue
        key.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return cache / "light_tokenizers" / hashlib.sha256("\n".join(key).encode()).hexdigest()[:24]


def _digest(backend_json: str, chat_template: str | None, special_tokens: dict[str, str]) -> str:
    """sha256 of what a light form is made of (its ``tokenizer.json`` and ``light.json``'s content)."""
    made = json.dumps([backend_json, chat_template, special_tokens], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(made.encode("utf-8")).hexdigest()


def load_light(path: Path) -> LightTokenizer | None:
    """The light tokenizer kept at ``path`` (None: none kept, unreadable, or changed since it
    was made: then a ``note:`` line says it is made again)."""
    try:
        meta = json.loads(read_text(path / "light.json"))
        backend_json = read_text(path / "tokenizer.json")
        chat_template, special = meta["chat_template"], dict(meta["special_tokens"])
        changed = meta.get("sha256") != _digest(backend_json, chat_template, special)
    except NotRegularFile as exc:
        changed, why = True, f"{exc.filename} is {exc.kind}"
    except Exception:  # noqa: BLE001 - a bad or partial cache entry: the transformers path
        return None
    else:
        why = "its files differ from the sha256 it was kept with (edited?)"
    if changed:
        print(
            f"note: {path}: the cached light tokenizer form is not used ({why}); it is made again "
            "from the tokenizer's files",
            file=sys.stderr,
        )
        return None
    try:
        from tokenizers import Tokenizer  # noqa: PLC0415 (only when a light form is kept)

        return LightTokenizer(Tokenizer.from_str(backend_json), chat_template, special)
    except Exception:  # noqa: BLE001 - a bad or partial cache entry: the transformers path
        return None


def _light_of(tokenizer: Any) -> tuple[LightTokenizer, str] | None:
    """The light tokenizer made of a ``transformers`` tokenizer, and its backend's JSON."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:  # a slow (Python) tokenizer: nothing to load without transformers
        return None
    template = tokenizer.get_chat_template() if getattr(tokenizer, "chat_template", None) else None
    special = {str(k): str(v) for k, v in tokenizer.special_tokens_map.items()}
    from tokenizers import Tokenizer  # noqa: PLC0415

    text = backend.to_str()
    return LightTokenizer(Tokenizer.from_str(text), template, special), text


def reproduces(light: LightTokenizer, tokenizer: Any) -> bool:
    """``light`` renders :data:`PROBES` and encodes them and :data:`TEXTS` as ``tokenizer`` does."""
    texts = list(TEXTS)
    if light.chat_template:
        for system, user in PROBES:
            messages = [{"role": "user", "content": user}]
            if system:
                messages.insert(0, {"role": "system", "content": system})
            try:
                real = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            except Exception:  # noqa: BLE001 - a template refusing a system role: the light one must too
                real = None
            try:
                mine = light.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            except Exception:  # noqa: BLE001
                mine = None
            if mine != real:
                return False
            texts.append(str(real))
    texts.extend(user for _, user in PROBES)
    return all(
        light(texts, add_special_tokens=special)["input_ids"]
        == [list(ids) for ids in tokenizer(texts, add_special_tokens=special)["input_ids"]]
        for special in (True, False)
    )


def keep_light(tokenizer: Any, path: Path) -> bool:
    """Keep the light form of ``tokenizer`` at ``path`` when it reproduces it; whether it was kept."""
    made = _light_of(tokenizer)
    if made is None or not reproduces(made[0], tokenizer):
        return False
    light, backend_json = made
    digest = _digest(backend_json, light.chat_template, light.special_tokens)
    meta = json.dumps(
        {"chat_template": light.chat_template, "special_tokens": light.special_tokens, "sha256": digest}
    )
    try:
        path.mkdir(parents=True, exist_ok=True)
        for name, text in (
            ("tokenizer.json", backend_json),
            ("light.json", meta),
        ):  # light.json last: complete
            tmp = path / f".{name}.{os.getpid()}"
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path / name)
    except OSError:  # the cache is a convenience: a read-only cache keeps the transformers path
        return False
    return True
