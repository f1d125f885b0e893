"""The next chunk's prompts tokenised on a host thread while the current chunk runs on the card.

On a GPU the host renders and tokenises a chunk's prompts (chat template, then the tokenizer)
while the card waits, between two chunks.  Under a policy with ``tokenize_ahead`` (CUDA,
:mod:`.hf_batching`) the runner hands the backend the next chunk's prompts before it runs the
current one (:meth:`.ChunkExecutor.ahead`; with the options each is scored on, for ``log_prob``);
one worker thread turns them into token ids while the current chunk's model calls run, and the
next chunk takes its ids from there.  Not on the CPU: the worker would take one of the model's
cores.  The ids are the same either way (the same
function computes them); only where and when differ.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class TokenizeAhead:
    """Token ids of prompts (or of prompts and their continuations) computed ahead on one worker
    thread, kept for two submissions."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._current: dict[Hashable, Future[Any]] = {}
        self._last: dict[Hashable, Future[Any]] = {}

    def submit(self, prompts: Sequence[Hashable], encode: Callable[[Hashable], Any]) -> None:
        """Start computing ``encode(p)`` for each prompt (the submission before the last is dropped)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="enade-tokenize")
        pool = self._pool
        self._last, self._current = self._current, {p: pool.submit(encode, p) for p in dict.fromkeys(prompts)}

    def take(self, prompt: Hashable, encode: Callable[[Hashable], Any]) -> Any:
        """``encode(prompt)``: from a submission if there is one (waiting for it), else computed now."""
        found = self._current.get(prompt) or self._last.get(prompt)
        return found.result() if found is not None else encode(prompt)
