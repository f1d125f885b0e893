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
empty) would write different digits than an uninterrupted one.  So the prefix is
always computed in the same cut: blocks of ``block`` tokens at fixed positions
(0, 32, 64, …), each run on top of the blocks before it, then the rest up to the
end of the prefix.  The store keeps whole blocks only (like vLLM's automatic
prefix caching, which hashes full blocks) and is a pure memo: a state comes out
bit-for-bit the same whether it was stored or computed (tested).

The store keeps the ``max_entries`` most recent prefixes (least recently used
out), each as views on tensors the model produced anyway; a lookup takes the
longest whole-block match over them.  Models whose cache is not a plain
:class:`~transformers.DynamicCache` (sliding-window layers, e.g. Gemma 3) get no
store (:func:`plain_cache`): their layers keep only a window of the past.
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


def plain_cache(model: Any) -> bool:
    """Whether ``model``'s key/value cache is a plain one (every layer keeps all the past)."""
    from transformers import DynamicCache  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    try:
        layers = DynamicCache(config=model.config).layers
    except (AttributeError, TypeError, ValueError):
        return False
    return all(type(layer).__name__ == "DynamicLayer" for layer in layers)


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
    """Whole blocks of recent prefixes' key/value states (see the module docstring).

    Parameters
    ----------
    block
        The fixed cut of every prefix, in tokens; only whole blocks are kept.
    max_entries
        How many prefixes to keep (the least recently used goes first).
    """

    def __init__(self, block: int = 32, max_entries: int = 4) -> None:
        self.block = block
        self.max_entries = max_entries
        self.entries: list[_Entry] = []
        self.stats = PrefixStats()

    def lookup(self, ids: Sequence[int], limit: int) -> tuple[int, Any]:
        """``(n, cache)``: a batch-1 ``DynamicCache`` of ``ids[:n]``, ``n`` whole blocks ``<= limit``; or ``(0, None)``."""
        best, best_n = None, 0
        for entry in self.entries:
            n = min(common_prefix_length([entry.ids, ids]), limit) // self.block * self.block
            if n > best_n:
                best, best_n = entry, n
        if best is None:
            return 0, None
        from transformers import DynamicCache  # noqa: PLC0415 (optional or heavy dependency, imported at use)

        self.entries.remove(best)
        self.entries.append(best)
        cache = DynamicCache(ddp_cache_data=[(k[:, :, :best_n], v[:, :, :best_n]) for k, v in best.layers])
        self.stats.reused += best_n
        return best_n, cache

    def add(self, ids: Sequence[int], cache: Any) -> None:
        """Keep the whole blocks of ``ids`` from a batch-1 cache that starts with exactly ``ids``."""
        n = len(ids) // self.block * self.block
        if n == 0 or any(common_prefix_length([e.ids, ids[:n]]) == n for e in self.entries):
            return  # nothing whole, or already served by a longer entry
        layers = [(layer.keys[:1, :, :n], layer.values[:1, :, :n]) for layer in cache.layers]
        self.entries = [e for e in self.entries if common_prefix_length([e.ids, ids]) < len(e.ids)]
        self.entries.append(_Entry(list(ids[:n]), layers))
        del self.entries[: -self.max_entries]

    def clear(self) -> None:
        self.entries.clear()


@torch.inference_mode()
def prefix_states(
    model: Any, head: Sequence[int], store: PrefixStore | None, logits: bool
) -> tuple[Any, torch.Tensor | None]:
    """``(cache, last)``: a batch-1 cache holding ``head``, and the logits after its last token.

    With a ``store`` the states are computed in its fixed blocks, from the store as
    far as it holds them (see the module docstring), and stored back; without one,
    in one call.  ``last`` is ``None`` unless ``logits`` (then the last token is
    always run).
    """
    device = next(model.parameters()).device
    n = len(head)

    def run(start: int, stop: int, cache: Any, keep: int) -> Any:
        return model(
            input_ids=torch.tensor([list(head[start:stop])], device=device),
            position_ids=torch.arange(start, stop, device=device)[None],
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=keep,
        )

    if store is None:
        out = run(0, n, None, 1)
        return out.past_key_values, out.logits[0, -1].float() if logits else None
    whole = (n - 1 if logits else n) // store.block * store.block
    start, cache = store.lookup(head, whole)
    for begin in range(start, whole, store.block):
        cache = run(begin, begin + store.block, cache, 1).past_key_values
    last = None
    if whole < n:
        out = run(whole, n, cache, 1)
        cache, last = out.past_key_values, out.logits[0, -1].float()
    store.stats.computed += n - start
    store.add(head, cache)
    return cache, last if logits else None
