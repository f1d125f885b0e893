"""The run-wide prefix cache of the HF backend: key/value states kept across calls.

Every prompt of a strategy starts with the same tokens: the chat template's
opening, the system message, the instruction and, for one/few-shot strategies,
the worked examples (hundreds of tokens).  Within one call the batch's common
prefix is run once (:func:`prefix_states`); this store keeps those states across
calls, so that after the first call of a strategy every later call starts from
what the earlier ones computed.

Exactness (a resumed run writes the same bytes as a fresh one)
--------------------------------------------------------------
Floating-point results depend on how a sequence is cut into model calls: the
states of tokens 0–299 computed in one call differ in the last bits from the
same states computed as 0–149 then 150–299.  A store that served "the longest
match it happens to hold" would therefore make a call's scores depend on which
calls ran before it, and a run resumed after an interruption (whose store starts
empty) would write different digits than an uninterrupted one.  So where a
prefix is cut depends on the prefix alone: at its last whole block of ``block``
tokens (a multiple of 32).  The part before the cut is one model call, stored
under exactly those token ids and reused only by a prefix with the same ids
before the same cut; the rest (less than a block) is run on top of it.  The
store is then a pure memo: a state comes out bit for bit the same whether it was
stored or computed (tested).  The prefixes of a strategy's chunks differ by a
few tokens at most (the system message, instruction and worked examples are the
same), so they fall on the same cut and the first chunk's states serve all
later ones; a prefix that falls on another cut is computed, in one call, as
without a store.

The store keeps the ``max_entries`` most recently used prefixes, each as views
on tensors the model produced anyway.  Models whose cache is not a plain
:class:`~transformers.DynamicCache` (sliding-window layers, e.g. Gemma 3) get no
store (:func:`plain_cache`): their layers keep only a window of the past.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import torch

from enade_bench.backends.hf_device import to_device


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


def prefix_groups(seqs: Sequence[Sequence[int]], group_cost: int = 256) -> list[list[int]]:
    """Split a batch into groups of rows that share a long prefix (indices into ``seqs``).

    One batch shares only the prefix common to *all* its rows.  When the rows fall
    into families (questions with four options and with five differ in the
    instruction's letters, ``{valid_letters}``, before the worked examples), the
    batch-wide prefix stops early and every row recomputes the worked examples.
    Each family run as its own group shares its own long prefix instead.

    The rows are sorted; a group is split at its weakest links (the adjacent pairs
    whose common prefix is the group's own) when that saves tokens.  The cost of a
    group is its prefix (computed once: the store holds a prefix only under its exact
    tokens, so a parent's prefix is not reused) plus its right-padded suffix batch,
    ``lcp_g + n_g * max_r (len_r - lcp_g)``; a split must save at least a quarter of the group's cost and ``group_cost``
    tokens per extra group: the device's :attr:`.BatchingPolicy.split_cost` (on a CPU
    each group decodes in its own loop, 256; on CUDA the groups share one loop and a
    group costs one more prefill call, 64).  The grouping depends on the rows and the
    device alone, so it is the same in a fresh and a resumed run.
    """
    order = sorted(range(len(seqs)), key=lambda i: tuple(seqs[i]))
    floor = min(len(s) for s in seqs) - 1 if seqs else 0

    def lcp(members: list[int]) -> int:
        return min(common_prefix_length([seqs[i] for i in members]), min(len(seqs[i]) for i in members) - 1)

    def cost(members: list[int]) -> int:
        shared = lcp(members)
        return shared + len(members) * max(len(seqs[i]) - shared for i in members)

    def split(members: list[int]) -> list[list[int]]:
        links = [common_prefix_length([seqs[a], seqs[b]]) for a, b in pairwise(members)]
        if not links:
            return [members]
        weakest = min(links)
        parts: list[list[int]] = [[members[0]]]
        for link, member in zip(links, members[1:], strict=True):
            if link == weakest:
                parts.append([])
            parts[-1].append(member)
        merged = cost(members)
        saving = merged - sum(cost(part) for part in parts)
        if len(parts) == 1 or saving < max(merged // 4, group_cost * (len(parts) - 1)):
            return [members]
        return [group for part in parts for group in split(part)]

    groups = split(order) if floor >= 0 else [order]
    return [sorted(group) for group in sorted(groups, key=min)]


def plain_cache(model: Any) -> bool:
    """Whether ``model``'s key/value cache is a plain one (every layer keeps all the past)."""
    from transformers import DynamicCache  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    try:
        layers = DynamicCache(config=model.config).layers
    except (AttributeError, TypeError, ValueError):
        return False
    return all(type(layer).__name__ == "DynamicLayer" for layer in layers)


@dataclass
class PrefixStats:
    """Tokens served from the store and tokens the model computed, since creation."""

    reused: int = 0
    computed: int = 0


class PrefixStore:
    """Recent prefixes' key/value states, cut at their last whole block (module docstring).

    Parameters
    ----------
    block
        Prefixes are cut at a multiple of ``block`` tokens.
    max_entries
        How many prefixes to keep (the least recently used goes first).
    """

    def __init__(self, block: int = 32, max_entries: int = 4) -> None:
        self.block = block
        self.max_entries = max_entries
        self.entries: dict[tuple[int, ...], list[tuple[torch.Tensor, torch.Tensor]]] = {}
        self.stats = PrefixStats()

    def cut(self, n: int) -> int:
        """Where a prefix of ``n`` tokens is cut: its last whole block."""
        return n // self.block * self.block

    def get(self, ids: Sequence[int]) -> Any:
        """A batch-1 ``DynamicCache`` of exactly ``ids`` (its own copy), or ``None``."""
        layers = self.entries.pop(tuple(ids), None)
        if layers is None:
            return None
        from transformers import DynamicCache  # noqa: PLC0415 (optional or heavy dependency, imported at use)

        self.entries[tuple(ids)] = layers  # most recently used last
        self.stats.reused += len(ids)
        return DynamicCache(ddp_cache_data=list(layers))

    def put(self, ids: Sequence[int], cache: Any) -> None:
        """Keep the states of ``ids`` from a batch-1 cache that starts with exactly ``ids``."""
        n = len(ids)
        self.entries[tuple(ids)] = [
            (layer.keys[:1, :, :n], layer.values[:1, :, :n]) for layer in cache.layers
        ]
        while len(self.entries) > self.max_entries:
            del self.entries[next(iter(self.entries))]

    def clear(self) -> None:
        self.entries.clear()


@torch.inference_mode()
def prefix_states(
    model: Any, head: Sequence[int], store: PrefixStore | None, logits: bool
) -> tuple[Any, torch.Tensor | None]:
    """``(cache, last)``: a batch-1 cache holding ``head``, and the logits after its last token.

    With a ``store``, ``head`` is cut at its last whole block (before its last token
    when ``logits``); the part before the cut comes from the store or is run in one
    call and stored, the rest is run on top.  Without one, ``head`` is one call.
    ``last`` is ``None`` unless ``logits``.
    """
    device = next(model.parameters()).device
    n = len(head)

    def run(start: int, stop: int, cache: Any) -> Any:
        return model(
            input_ids=to_device([list(head[start:stop])], device),
            position_ids=torch.arange(start, stop, device=device)[None],
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=1,
        )

    cut = store.cut(n - 1 if logits else n) if store is not None else 0
    cache = None
    if store is not None and cut:
        cache = store.get(head[:cut])
        if cache is None:
            cache = run(0, cut, None).past_key_values
            store.stats.computed += cut
            store.put(head[:cut], cache)
    last = None
    if cut < n:
        out = run(cut, n, cache)
        cache, last = out.past_key_values, out.logits[0, -1].float()
        if store is not None:
            store.stats.computed += n - cut
    return cache, last if logits else None
