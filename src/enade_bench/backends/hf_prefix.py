"""The run-wide prefix cache of the HF backend: key/value states kept across calls.

Every prompt of a strategy starts with the same tokens: the chat template's
opening, the system message, the instruction and, for one/few-shot strategies,
the worked examples (hundreds of tokens).  Within one call
:func:`~enade_bench.backends.hf_generate.prefill` already runs a batch's common
prefix once; this store keeps the key/value states of the last few calls'
prefixes so that the *next* call starts from the longest stored match instead
of from the first token.  After the first call of a strategy, every later call
recomputes only what follows the part its prompts share with the earlier ones.

Exactness: a stored state is reused only for the tokens that are literally the
same ids at the same positions, and a causal model's key/value states at a
position depend only on the tokens up to it, so the reuse changes nothing but
floating-point summation order (scores agree to about 1e-5; tested).

Which prefixes to keep needs no knowledge of the prompt layout: the store keeps
the ``max_entries`` most recent batch prefixes (least recently used out), each
as views on tensors the model produced anyway, and a lookup takes the longest
common prefix over them.  Models whose cache is not a plain
:class:`~transformers.DynamicCache` (sliding-window layers, e.g. Gemma 3) are
not stored: their layers keep only a window of the past.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch


def common_prefix_length(seqs: Sequence[Sequence[int]]) -> int:
    """Length of the longest common prefix of token sequences."""
    if not seqs:
        return 0
    shortest = min(len(s) for s in seqs)
    first = seqs[0]
    for i in range(shortest):
        token = first[i]
        if any(s[i] != token for s in seqs[1:]):
            return i
    return shortest


@dataclass
class _Entry:
    ids: list[int]
    #: Per layer (keys, values), batch 1, shape ``1 × heads × len(ids) × head_dim``.
    layers: list[tuple[torch.Tensor, torch.Tensor]]


@dataclass
class PrefixStats:
    """Tokens served from the store and tokens the model computed, since creation."""

    reused: int = 0
    computed: int = 0


class PrefixStore:
    """The most recent batch prefixes' key/value states (see the module docstring).

    Parameters
    ----------
    max_entries
        How many prefixes to keep (the least recently used goes first).
    min_tokens
        Shorter matches are not worth building a cache for.
    """

    def __init__(self, max_entries: int = 4, min_tokens: int = 2) -> None:
        self.max_entries = max_entries
        self.min_tokens = min_tokens
        self.entries: list[_Entry] = []
        self.stats = PrefixStats()
        self.enabled = True

    def lookup(self, ids: Sequence[int], limit: int) -> tuple[int, Any]:
        """``(n, cache)``: a batch-1 ``DynamicCache`` holding ``ids[:n]`` (``n <= limit``), or ``(0, None)``."""
        best, best_n = None, 0
        for entry in self.entries:
            n = min(common_prefix_length([entry.ids, ids]), limit)
            if n > best_n:
                best, best_n = entry, n
        if best is None or best_n < self.min_tokens:
            return 0, None
        from transformers import DynamicCache  # noqa: PLC0415 (optional or heavy dependency, imported at use)

        self.entries.remove(best)
        self.entries.append(best)
        cache = DynamicCache(ddp_cache_data=[(k[:, :, :best_n], v[:, :, :best_n]) for k, v in best.layers])
        self.stats.reused += best_n
        return best_n, cache

    def add(self, ids: Sequence[int], cache: Any) -> None:
        """Keep ``ids``' states from a cache whose first row starts with exactly ``ids``."""
        if not self.enabled or len(ids) < self.min_tokens:
            return
        if any(type(layer).__name__ != "DynamicLayer" for layer in getattr(cache, "layers", [None])):
            self.enabled = False  # sliding-window or other layer kinds: not stored
            self.entries.clear()
            return
        if any(common_prefix_length([e.ids, ids]) == len(ids) for e in self.entries):
            return  # already served by a longer entry
        n = len(ids)
        layers = [(layer.keys[:1, :, :n], layer.values[:1, :, :n]) for layer in cache.layers]
        self.entries = [e for e in self.entries if common_prefix_length([e.ids, ids]) < len(e.ids)]
        self.entries.append(_Entry(list(ids), layers))
        del self.entries[: -self.max_entries]

    def clear(self) -> None:
        self.entries.clear()
