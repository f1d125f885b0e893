"""Measuring one phase of work: wall time, peak memory (RSS) and tokens through the model."""

from __future__ import annotations

import resource
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psutil

from bench.speed.records import PhaseFigures


def rss_mb() -> float:
    """Resident set size of this process, in MiB."""
    return float(psutil.Process().memory_info().rss) / 2**20


def tree_rss_mb() -> float:
    """RSS of this process and all its descendants, in MiB (vLLM runs its engine in a child)."""
    me = psutil.Process()
    total = me.memory_info().rss
    for child in me.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.Error:  # exited meanwhile
            pass
    return float(total) / 2**20


def max_rss_mb() -> float:
    """Peak resident set size of this process since it started, in MiB (``ru_maxrss``)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class TokenCounter:
    """Counts the positions fed to a model (``input_ids.numel()``, padding included).

    Installed as a forward pre-hook, so it sees every call: our scorer's calls,
    lm-eval's ``self.model(inps)`` and each step of ``generate``.
    """

    def __init__(self, model: Any) -> None:
        self.tokens = 0
        self.calls = 0
        self._handle = model.register_forward_pre_hook(self._hook, with_kwargs=True)

    # ``kwargs``: the keyword arguments of torch's forward call (third-party, untyped).
    def _hook(self, module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        ids = args[0] if args else kwargs.get("input_ids")
        if ids is not None:
            self.tokens += int(ids.numel())
        self.calls += 1

    def remove(self) -> None:
        self._handle.remove()


class VllmTokenCounter:
    """Counts the positions a ``vllm.LLM`` computes: prompt tokens not served from its prefix
    cache (``len(prompt_token_ids) - num_cached_tokens``) plus generated tokens.

    Wraps the instance's ``generate``, the one entry point both our backend and lm-eval's
    ``VLLM`` call, so it sees every request of either side alike.
    """

    def __init__(self, llm: Any) -> None:
        self.tokens = 0
        self.calls = 0
        self.cached = 0
        inner = llm.generate

        def generate(*args: Any, **kwargs: Any) -> Any:
            outputs = inner(*args, **kwargs)
            self.calls += 1
            for out in outputs:
                cached = int(out.num_cached_tokens or 0)
                self.cached += cached
                self.tokens += len(out.prompt_token_ids) - cached
                self.tokens += sum(len(o.token_ids) for o in out.outputs)
            return outputs

        llm.generate = generate


@dataclass
class Phase:
    """Figures of one measured phase."""

    seconds: float = 0.0
    peak_rss_mb: float = 0.0
    start_rss_mb: float = 0.0
    tokens: int = 0
    model_calls: int = 0
    #: vLLM: prompt tokens served from its prefix cache (not fed); None elsewhere.
    prefix_cached_tokens: int | None = None

    def as_dict(self) -> PhaseFigures:
        figures = PhaseFigures(
            seconds=self.seconds,
            peak_rss_mb=self.peak_rss_mb,
            start_rss_mb=self.start_rss_mb,
            tokens=self.tokens,
            model_calls=self.model_calls,
        )
        if self.prefix_cached_tokens is not None:
            figures["prefix_cached_tokens"] = self.prefix_cached_tokens
        return figures


class _RssSampler(threading.Thread):
    """Samples the RSS every ``interval`` seconds and keeps the maximum."""

    def __init__(self, interval: float = 0.01, tree: bool = False) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.rss = tree_rss_mb if tree else rss_mb
        self.peak = self.rss()
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            self.peak = max(self.peak, self.rss())

    def stop(self) -> float:
        self._stop_event.set()
        self.join()
        self.peak = max(self.peak, self.rss())
        return self.peak


@contextmanager
def measured(counter: TokenCounter | VllmTokenCounter, tree: bool = False) -> Iterator[Phase]:
    """Measure the body: wall time, peak RSS (sampled every 10 ms), tokens through the model.

    ``tree``: the RSS counts the process's descendants too (vLLM's engine process).
    """
    phase = Phase(start_rss_mb=tree_rss_mb() if tree else rss_mb())
    tokens0, calls0 = counter.tokens, counter.calls
    cached0 = getattr(counter, "cached", None)
    sampler = _RssSampler(tree=tree)
    sampler.start()
    start = time.perf_counter()
    try:
        yield phase
    finally:
        phase.seconds = time.perf_counter() - start
        phase.peak_rss_mb = sampler.stop()
        phase.tokens = counter.tokens - tokens0
        phase.model_calls = counter.calls - calls0
        if cached0 is not None:  # vLLM: prompt tokens served from the prefix cache (not fed)
            phase.prefix_cached_tokens = getattr(counter, "cached", 0) - cached0
