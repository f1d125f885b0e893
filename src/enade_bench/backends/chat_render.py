"""The text a local model reads: one rendering shared by every engine.

The HF backend, the vLLM backend and ``openai_compatible`` completions (with a
``tokenizer``) all call :func:`render_text` and :func:`encode_text`, so the same
weights read the same tokens whatever runs them.
"""

from __future__ import annotations

from typing import Any

from enade_bench.errors import UserError
from enade_bench.prompts.builder import PromptParts
from enade_bench.results.identity import PromptForm

#: How a prompt reached the model (``prompt_form`` of every backend and record).
CHAT_TEMPLATE_RENDERED: PromptForm = "chat_template_rendered"
CHAT_MESSAGES: PromptForm = "chat_messages"
RAW: PromptForm = "raw"


def has_chat_template(tokenizer: Any) -> bool:
    return bool(getattr(tokenizer, "chat_template", None))


def resolve_instruct(instruct: bool | None, tokenizer: Any) -> bool:
    """``model.instruct``, or (null) whether the tokenizer has a chat template.

    Raises
    ------
    UserError
        ``instruct: true`` and the tokenizer has no chat template.
    """
    has_template = has_chat_template(tokenizer)
    if instruct and not has_template:
        raise UserError("model.instruct is true but the tokenizer has no chat template")
    return has_template if instruct is None else instruct


def local_prompt_form(instruct: bool) -> PromptForm:
    """How a local engine's prompt reaches the model: the chat template exactly when instruct."""
    return CHAT_TEMPLATE_RENDERED if instruct else RAW


def render_text(tokenizer: Any, prompt: PromptParts, instruct: bool) -> str:
    """Chat template (system + user, assistant turn opened, ``Resposta:`` prefilled when asked).

    ``instruct=False``: the plain text a base model reads.  Templates that reject a
    system role get the system message merged into the user message.
    """
    if not instruct:
        return prompt.plain_text()
    messages = [{"role": "user", "content": prompt.user}]
    if prompt.system:
        messages.insert(0, {"role": "system", "content": prompt.system})
    try:
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    except Exception:  # noqa: BLE001 - templates without a system role
        merged = [{"role": "user", "content": f"{prompt.system}\n\n{prompt.user}"}]
        text = tokenizer.apply_chat_template(merged, tokenize=False, add_generation_prompt=True)
    return str(text) + (prompt.answer_label if prompt.prefill else "")


def encode_text(tokenizer: Any, text: str, instruct: bool) -> list[int]:
    """Token ids of a rendered prompt (chat templates carry their own special tokens)."""
    ids: list[int] = tokenizer(text, add_special_tokens=not instruct)["input_ids"]
    return ids


def letter_token_ids(tokenizer: Any, letters: str, variants: str) -> list[list[int]]:
    """Single-token ids standing for each letter (``A`` and/or `` A``)."""

    forms = {"bare": ("{}",), "space": (" {}",), "both": ("{}", " {}")}[variants]
    out = []
    for letter in letters:
        ids = []
        for form in forms:
            toks = tokenizer(form.format(letter), add_special_tokens=False)["input_ids"]
            if len(toks) == 1:
                ids.append(int(toks[0]))
        if not ids:
            raise UserError(
                f"evaluation.letter_variants: '{variants}': letter {letter} is not a single token "
                "for this tokenizer; try 'both'"
            )
        out.append(sorted(set(ids)))
    return out


def continuation_tokens(
    tokenizer: Any, context: str, continuations: list[str] | tuple[str, ...], instruct: bool
) -> tuple[list[int], list[list[int]]]:
    """Context ids and each continuation's ids, split as lm-eval does (whole minus context)."""
    ctx = encode_text(tokenizer, context, instruct)
    tails = []
    for cont in continuations:
        whole = encode_text(tokenizer, context + cont, instruct)
        if whole[: len(ctx)] != ctx or len(whole) == len(ctx):  # merged across the boundary
            tails.append(list(tokenizer(cont, add_special_tokens=False)["input_ids"]))
        else:
            tails.append(whole[len(ctx) :])
    return ctx, tails
