"""What the runner needs from a model: small protocols, one per capability.

A backend declares the methods it can run in ``capabilities``; the runner
checks them when the config loads (an ``error:`` line lists what the backend
*can* run) and only then calls the matching protocol.  No base class forces
a backend to implement what it cannot do.

Every backend also says who it is (``identity``, a typed
:class:`~enade_bench.results.identity.ModelIdentity` written into results) and
how prompts reach the model (``prompt_form``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from enade_bench.prompts.builder import PromptParts
from enade_bench.results.identity import ModelIdentity, PromptForm
from enade_bench.results.records import Usage

#: Every method a backend can declare in ``capabilities``.
METHODS = frozenset({"generation", "log_prob", "first_token"})


@dataclass(frozen=True)
class GenerationParams:
    """Decoding settings (``temperature=None`` means greedy)."""

    max_new_tokens: int
    temperature: float | None = None
    n_samples: int = 1
    seed: int = 0


@dataclass(frozen=True)
class Generation:
    """Outputs for one prompt: one text per sample (one when greedy), and the tokens and
    seconds its backend measured (:class:`~enade_bench.results.records.Usage`; ``None``: none)."""

    texts: list[str]
    error: str | None = None
    usage: Usage | None = None


@dataclass(frozen=True)
class ContinuationScore:
    """Log-probability of one continuation given the context."""

    sum_logprob: float
    n_tokens: int
    token_logprobs: list[float]


@runtime_checkable
class Backend(Protocol):
    """Every backend: who it is and what it can do."""

    @property
    def identity(self) -> ModelIdentity:
        """Model identity for results: weights hash or hub revision, or provider + model."""
        ...

    @property
    def prompt_form(self) -> PromptForm:
        """How prompts reach the model: ``chat_template_rendered`` (the tokenizer's chat
        template applied here), ``chat_messages`` (a chat API applies its own) or ``raw``."""
        ...

    @property
    def capabilities(self) -> frozenset[str]:
        """Subset of ``{"generation", "log_prob", "first_token"}``."""
        ...

    def render(self, prompt: PromptParts) -> str:
        """The exact text the model reads (for records and prompt hashes)."""
        ...


@runtime_checkable
class GenerationBackend(Backend, Protocol):
    def generate(self, prompts: Sequence[PromptParts], params: GenerationParams) -> list[Generation]:
        """Generate for a batch of prompts."""
        ...


@runtime_checkable
class LogProbBackend(Backend, Protocol):
    def continuation_logprobs(
        self, prompt: PromptParts, continuations: Sequence[str]
    ) -> list[ContinuationScore]:
        """Score each continuation after the prompt (the prompt is computed once)."""
        ...


@runtime_checkable
class FirstTokenBackend(Backend, Protocol):
    def letter_logprobs(
        self, prompts: Sequence[PromptParts], letters: str, variants: str
    ) -> list[list[float]]:
        """Next-token log-probability of each letter after each prompt.

        ``variants``: ``"bare"`` (``A``), ``"space"`` (`` A``) or ``"both"`` (their
        probabilities added).  Prompts sharing a prefix share its computation.
        """
        ...


@runtime_checkable
class StreamingBackend(GenerationBackend, Protocol):
    """A generation backend that hands back each prompt's answer as soon as it is in (APIs)."""

    def generate_stream(
        self, prompts: Sequence[PromptParts], params: GenerationParams, seeds: Sequence[int] | None = None
    ) -> Iterator[tuple[int, Generation]]:
        """Yield ``(prompt index, Generation)`` in the order the answers arrive.

        ``seeds``: one per prompt (default: ``params.seed`` for all); sample ``k``
        of prompt ``i`` is requested with ``seeds[i] + k``.
        """
        ...


@runtime_checkable
class BatchLogProbBackend(LogProbBackend, Protocol):
    """A log-probability backend that scores several questions in one call."""

    def continuation_logprobs_batch(
        self, items: Sequence[tuple[PromptParts, Sequence[str]]]
    ) -> list[list[ContinuationScore]]:
        """:meth:`LogProbBackend.continuation_logprobs` of each (prompt, continuations) pair."""
        ...


@runtime_checkable
class ContextBackend(Backend, Protocol):
    """A backend that counts a prompt's tokens and knows its context window (local models).

    The runner checks every prompt against the context before inference
    (:mod:`enade_bench.runner.context`) and, under ``evaluation.truncate: left``, sets
    the longest prompt the backend may read (:meth:`set_prompt_limit`).
    """

    @property
    def context_length(self) -> int | None:
        """Tokens the model reads at most, prompt and answer together (``None``: unknown)."""
        ...

    def prompt_tokens(self, prompt: PromptParts) -> int:
        """Tokens of the prompt as the model reads it (chat template applied)."""
        ...

    def text_tokens(self, text: str) -> int:
        """Tokens of a text continuing a prompt (an option scored by ``log_prob``)."""
        ...

    def set_prompt_limit(self, limit: int | None) -> None:
        """Read at most ``limit`` tokens of each prompt, its end kept (``None``: all)."""
        ...


@runtime_checkable
class PrefetchBackend(Backend, Protocol):
    """A backend that can prepare prompts ahead (tokenise them while the current chunk runs)."""

    def prefetch(
        self, prompts: Sequence[PromptParts], continuations: Sequence[Sequence[str]] | None = None
    ) -> None:
        """Start preparing ``prompts``, the next chunk's (with the ``continuations`` each is scored
        on, for ``log_prob``); a later call on them takes the result."""
        ...
