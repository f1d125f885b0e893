"""Request bodies and response parsing, shared by live calls and batch files.

The same function builds the body of a live request and the body of the
matching line of a batch file, and the same function reads a live response
and a batch result, so a batch run and a live run see identical prompts and
score identical answers.  Responses are handled as plain JSON-like data (the
SDK objects' ``model_dump()``), whatever their origin.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from enade_bench.config import ApiConfig
from enade_bench.prompts.builder import PromptParts
from enade_bench.results.records import Usage

#: A provider's request or response body: JSON whose shape the provider defines and documents
#: (the SDKs take and return it as plain dicts); untyped here by design, read defensively.
ProviderJson = dict[str, Any]

OPENAI_FAMILY = frozenset({"openai", "maritaca", "nvidia", "openai_compatible"})
#: Base URLs of the providers reached through the ``openai`` SDK.
DEFAULT_BASE_URLS: dict[str, str] = {
    "maritaca": "https://chat.maritaca.ai/api",
    "nvidia": "https://integrate.api.nvidia.com/v1",
}
#: Gemini finish reasons that mean the answer was withheld.
GEMINI_BLOCKED = frozenset({"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION"})


@dataclass(frozen=True)
class Outcome:
    """One answer text, or why there is none (``error`` set: a permanent failure), and its usage.

    ``malformed``: the reply lacked what the provider documents (no choices, no
    candidates); such a reply is retried like a transient failure.
    """

    text: str | None
    error: str | None = None
    malformed: bool = False
    #: The tokens the provider counted and the request's seconds (``None``: not reported).
    usage: Usage | None = None


def sampling(temperature: float | None) -> bool:
    return temperature is not None and temperature > 0


def chat_messages(prompt: PromptParts, prefill: bool) -> list[dict[str, str]]:
    """System + user messages (+ the assistant prefill ``Resposta:`` when asked)."""
    messages = [{"role": "user", "content": prompt.user}]
    if prompt.system:
        messages.insert(0, {"role": "system", "content": prompt.system})
    if prefill and prompt.prefill:
        messages.append({"role": "assistant", "content": prompt.answer_label})
    return messages


# -- OpenAI chat / completions (openai, maritaca, nvidia, openai_compatible) -----------
def openai_chat_body(
    cfg: ApiConfig,
    prompt: PromptParts,
    *,
    temperature: float | None,
    seed: int | None,
    max_tokens: int | None = None,
    top_logprobs: int | None = None,
) -> ProviderJson:
    """``/chat/completions`` body; scoring on openai_compatible servers prefills ``Resposta:``."""
    prefill = cfg.provider == "openai_compatible"
    body: ProviderJson = {"model": cfg.model, "messages": chat_messages(prompt, prefill)}
    limit_key = "max_completion_tokens" if cfg.provider == "openai" else "max_tokens"
    body[limit_key] = max_tokens or cfg.max_tokens
    body["temperature"] = temperature if sampling(temperature) else 0.0
    if seed is not None and sampling(temperature) and cfg.provider in {"openai", "openai_compatible"}:
        body["seed"] = seed
    if top_logprobs is not None:
        body["logprobs"] = True
        body["top_logprobs"] = top_logprobs
    if prefill and prompt.prefill:  # vLLM / transformers: continue the assistant turn
        body["continue_final_message"] = True
        body["add_generation_prompt"] = False
    body.update(cfg.extra_params or {})
    return body


def openai_completion_body(
    cfg: ApiConfig, prompt: str | list[str], *, max_tokens: int, logprobs: int | None, echo: bool = False
) -> ProviderJson:
    """``/completions`` body (plain-text prompt, no chat template)."""
    body: ProviderJson = {
        "model": cfg.model,
        "prompt": prompt,
        "max_tokens": max_tokens,
        "temperature": 0.0,
    }
    if logprobs is not None:
        body["logprobs"] = logprobs
    if echo:
        body["echo"] = True
    body.update(cfg.extra_params or {})
    return body


def parse_openai_chat(data: ProviderJson) -> list[Outcome]:
    """One :class:`Outcome` per choice of a chat completion."""
    choices = sorted(data.get("choices") or [], key=lambda c: c.get("index") or 0)
    if not choices:
        return [Outcome(None, "malformed reply: empty response (no choices)", malformed=True)]
    out = []
    for choice in choices:
        message = choice.get("message") or {}
        if message.get("refusal"):
            out.append(Outcome(None, f"refused: {message['refusal']}"))
        elif choice.get("finish_reason") == "content_filter":
            out.append(Outcome(None, "refused: content_filter"))
        else:
            out.append(Outcome(message.get("content") or ""))
    return out


def openai_chat_top_logprobs(data: ProviderJson) -> dict[str, float]:
    """``token -> logprob`` at the first generated position of a chat completion."""
    choice = (data.get("choices") or [{}])[0]
    content = (choice.get("logprobs") or {}).get("content") or []
    if not content:
        return {}
    first = content[0]
    tops = {t["token"]: float(t["logprob"]) for t in first.get("top_logprobs") or []}
    tops.setdefault(first["token"], float(first["logprob"]))
    return tops


def completion_top_logprobs(data: ProviderJson) -> dict[str, float]:
    """``token -> logprob`` at the first generated position of a (legacy) completion."""
    choice = (data.get("choices") or [{}])[0]
    logprobs = choice.get("logprobs") or {}
    tops = logprobs.get("top_logprobs") or []
    return {str(k): float(v) for k, v in (tops[0] or {}).items()} if tops else {}


def letter_scores(tops: dict[str, float], letters: str, variants: str) -> list[float]:
    """Log-probability of each letter (``A`` and/or `` A``, added) among the top tokens.

    A letter absent from the top list gets the smallest listed log-probability,
    an upper bound on its true value (the API hides the rest of the distribution).
    """
    forms = {"bare": ("{}",), "space": (" {}",), "both": ("{}", " {}")}[variants]
    floor = min(tops.values()) if tops else 0.0
    scores = []
    for letter in letters:
        found = [tops[f.format(letter)] for f in forms if f.format(letter) in tops]
        if not found:
            scores.append(floor)
            continue
        top = max(found)
        scores.append(top + math.log(sum(math.exp(v - top) for v in found)))
    return scores


def echo_tokens(choice: ProviderJson, prompt_text: str) -> tuple[list[str], list[float | None]]:
    """Prompt tokens and their log-probabilities from an ``echo`` completion choice.

    Requests ask for ``max_tokens: 0``; a server that generates anyway appends text
    after the prompt, and the trailing tokens spelling it are dropped.  (Character
    offsets are not used: byte-level tokens that split a UTF-8 character decode to
    replacement characters, so their lengths do not add up to the prompt's.)
    """
    logprobs = choice.get("logprobs") or {}
    tokens = list(logprobs.get("tokens") or [])
    values = list(logprobs.get("token_logprobs") or [])
    text = choice.get("text") or ""
    generated = text[len(prompt_text) :] if text.startswith(prompt_text) else ""
    dropped = ""
    while generated and tokens and len(dropped) < len(generated):
        dropped = tokens.pop() + dropped
        values.pop()
    return tokens, values


def continuation_from_echo(
    context_tokens: Sequence[str], full_tokens: Sequence[str], full_values: Sequence[float | None]
) -> list[float]:
    """Log-probabilities of the tokens of ``full`` after its common prefix with the context."""
    shared = 0
    for a, b in zip(context_tokens, full_tokens, strict=False):
        if a != b:
            break
        shared += 1
    if shared == len(full_tokens):  # tokenizer merged the continuation into the context
        shared = max(len(full_tokens) - 1, 0)
    return [float(v) for v in full_values[shared:] if v is not None]


# -- Anthropic ------------------------------------------------------------------------
def anthropic_body(
    cfg: ApiConfig, prompt: PromptParts, *, temperature: float | None, max_tokens: int | None = None
) -> ProviderJson:
    """Messages API parameters (Anthropic takes no ``seed``)."""
    body: ProviderJson = {
        "model": cfg.model,
        "max_tokens": max_tokens or cfg.max_tokens,
        "messages": [{"role": "user", "content": prompt.user}],
        "temperature": temperature if sampling(temperature) else 0.0,
    }
    if prompt.system:
        body["system"] = prompt.system
    body.update(cfg.extra_params or {})
    return body


def parse_anthropic(data: ProviderJson) -> Outcome:
    if data.get("stop_reason") == "refusal":
        return Outcome(None, "refused: stop_reason=refusal")
    texts = [b.get("text") or "" for b in data.get("content") or [] if b.get("type") == "text"]
    return Outcome("".join(texts))


# -- Google Gemini ------------------------------------------------------------------------
def gemini_request(
    cfg: ApiConfig,
    prompt: PromptParts,
    *,
    temperature: float | None,
    seed: int | None,
    max_tokens: int | None = None,
) -> ProviderJson:
    """``contents`` and ``config`` for ``models.generate_content`` and inline batch requests."""
    config: ProviderJson = {
        "max_output_tokens": max_tokens or cfg.max_tokens,
        "temperature": temperature if sampling(temperature) else 0.0,
        "candidate_count": 1,
    }
    if prompt.system:
        config["system_instruction"] = prompt.system
    if seed is not None and sampling(temperature):
        config["seed"] = seed
    config.update(cfg.extra_params or {})
    return {"contents": [{"role": "user", "parts": [{"text": prompt.user}]}], "config": config}


def parse_gemini(data: ProviderJson) -> Outcome:
    """Text of the first candidate; blocked prompts and answers are refusals."""
    feedback = data.get("prompt_feedback") or {}
    if feedback.get("block_reason"):
        return Outcome(None, f"refused: prompt blocked ({feedback['block_reason']})")
    candidates = data.get("candidates") or []
    if not candidates:
        return Outcome(None, "malformed reply: empty response (no candidates)", malformed=True)
    first = candidates[0]
    reason = str(first.get("finish_reason") or "").rsplit(".", 1)[-1]
    parts = (first.get("content") or {}).get("parts") or []
    text = "".join(p.get("text") or "" for p in parts if not p.get("thought"))
    if reason in GEMINI_BLOCKED and not text:
        return Outcome(None, f"refused: finish_reason={reason}")
    return Outcome(text)


# -- usage ------------------------------------------------------------------------------
#: Where a response counts its tokens, as each provider documents it: the usage block, the counts
#: that add up to the input (Anthropic's cache reads and writes are input) and those of the output
#: (Gemini's thinking is generated; OpenAI's ``completion_tokens`` include reasoning).
USAGE_FIELDS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "anthropic": (
        "usage",
        ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"),
        ("output_tokens",),
    ),
    "google": ("usage_metadata", ("prompt_token_count",), ("candidates_token_count", "thoughts_token_count")),
}
OPENAI_USAGE = ("usage", ("prompt_tokens",), ("completion_tokens",))


def usage_of(provider: str, data: ProviderJson) -> Usage | None:
    """The input and output tokens a response reports (:data:`USAGE_FIELDS`; ``None``: none)."""
    name, inputs, outputs = USAGE_FIELDS.get(provider, OPENAI_USAGE)
    block = data.get(name)
    block = block if isinstance(block, dict) else {}

    def count(keys: tuple[str, ...]) -> int | None:
        values = [v for k in keys if type(v := block.get(k)) is int]
        return sum(values) if values else None

    usage = Usage(input_tokens=count(inputs), output_tokens=count(outputs))
    return None if usage == Usage() else usage
