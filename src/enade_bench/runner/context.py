"""Prompt length against the model's context, checked for every strategy before inference.

A prompt the model cannot read whole would be cut silently by some engines and
crash others mid-run. Where the backend counts tokens and knows its context
(:class:`~enade_bench.backends.base.ContextBackend`: local transformers models),
every planned prompt is counted once the model is loaded and before any question
runs. Room is kept for the answer: ``max_new_tokens`` (``cot_max_new_tokens`` for
chain of thought) for generation, the longest option for ``log_prob``, one token
for ``first_token``. ``evaluation.context_limit`` lowers the context (a memory cap).

``evaluation.truncate: error`` (the default): a prompt too long is an ``error:``
naming the strategy, the question and the lengths. ``truncate: left``: such prompts
are cut from the start (a leading BOS token kept), the end with the question and
its options kept, and every affected record says so (``truncation``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from enade_bench.backends.base import ContextBackend
from enade_bench.config import EvaluationConfig
from enade_bench.errors import UserError
from enade_bench.results.records import QuestionRecord, Truncation
from enade_bench.runner.plan import Experiment, StrategyPlan

Key = tuple[str, int]


@dataclass(frozen=True)
class PromptFit:
    """One strategy's prompt limit (``None``: no cut) and the items whose prompt is cut."""

    limit: int | None = None
    cut: dict[Key, Truncation] = field(default_factory=dict)

    def mark(self, record: QuestionRecord) -> QuestionRecord:
        """``record`` with its truncation noted (unchanged when its prompt was read whole)."""
        note = self.cut.get(record.key)
        return record if note is None else record.model_copy(update={"truncation": note})


def answer_room(text_tokens: Callable[[str], int], exp: Experiment, plan: StrategyPlan) -> int:
    """Tokens kept free for the answer (or the scored option) after the prompt.

    ``text_tokens`` counts a text continuing a prompt (no special tokens added).
    """
    method = plan.strategy.method
    evaluation = exp.config.evaluation
    if method == "generation":
        return evaluation.cot_max_new_tokens if plan.strategy.chain_of_thought else evaluation.max_new_tokens
    if method == "log_prob":
        options = {text for item in plan.items for text in item.options}
        return max((text_tokens(" " + text) for text in options), default=1)
    return 1


def effective_context(own: int | None, evaluation: EvaluationConfig) -> int | None:
    """The context prompts are checked against: the model's, lowered by ``evaluation.context_limit``."""
    limits = [n for n in (own, evaluation.context_limit) if n is not None]
    return min(limits) if limits else None


def fit_prompts(exp: Experiment, plans: Sequence[StrategyPlan]) -> dict[str | None, PromptFit]:
    """Each strategy's :class:`PromptFit` (by strategy id); an error under ``truncate: error``.

    Nothing is checked for a backend that cannot count tokens (APIs, vLLM: its engine
    refuses a prompt too long by itself).
    """
    backend = exp.model
    if not isinstance(backend, ContextBackend):
        return {}
    evaluation = exp.config.evaluation
    context = effective_context(backend.context_length, evaluation)
    if context is None:
        return {}
    fits: dict[str | None, PromptFit] = {}
    for plan in plans:
        label = plan.strategy.id or exp.config.name
        room = answer_room(backend.text_tokens, exp, plan)
        limit = context - room
        lengths = {
            item.key: backend.prompt_tokens(prompt)
            for item, prompt in zip(plan.items, plan.prompts, strict=True)
        }
        long = {key: n for key, n in lengths.items() if n > limit}
        if not long:
            continue
        (qid, _), n = next(iter(long.items()))
        what = (
            f"{label}: question {qid}: the prompt is {n} tokens, but the context is {context} tokens "
            f"with {room} kept for the answer, so at most {limit} fit ({len(long)} of {len(lengths)} "
            "prompts are too long)"
        )
        if limit < 1:
            raise UserError(
                f"{label}: the context is {context} tokens with {room} kept for the answer: "
                "no room for a prompt; lower max_new_tokens or raise evaluation.context_limit"
            )
        if evaluation.truncate == "error":
            raise UserError(
                f"{what}; shorten the prompt, lower max_new_tokens, or set evaluation.truncate: left "
                "(cut from the start, recorded in each record)"
            )
        cut = {
            key: Truncation(policy=evaluation.truncate, prompt_tokens=n, kept_tokens=limit, context=context)
            for key, n in long.items()
        }
        fits[plan.strategy.id] = PromptFit(limit, cut)
    return fits
