"""One prefill per chunk, then decoding on a preallocated cache: the attention and the cache.

Generation under a policy with ``packed_prefill`` (CUDA, :mod:`.hf_batching`) runs a chunk as
(:func:`.hf_generate.generate_packed`):

1. the chunk's common prefix, up to its last whole block, from the run-wide store
   (:mod:`.hf_prefix`; one call when it is not stored yet);
2. **one** call on one row: the rest of the prefix, then every question's own tokens end to
   end, ``[rest][question 1][question 2]…`` (no padding).  Each question attends to the
   prefix and causally to itself only (:func:`slot_attention_forward`, ``prefill``): one SDPA
   call per question on a CPU, or per bucket of questions of similar length padded within
   :attr:`.BatchingPolicy.bucket_waste` (:func:`.hf_attention.bucket_members`);
3. the keys and values of that call are placed once in a :class:`SlotCache` preallocated for
   the whole decode (``rows × kv-heads × (prefix + longest question + new tokens) × dim``):
   the prefix in every row, each question's own tokens in its rows, the gap after a shorter
   question masked;
4. one decode loop: each step writes its token's keys and values in place at the step's
   column (``index_copy_``, no concatenation, no copy of the cache) and attends over the
   columns written so far.

Grouped-query attention is native: the query heads that share a key/value head are folded
into the query length (``batch × kv-heads × (group · length) × dim``), so SDPA reads each
key/value head once, with any mask, on any device and kernel (transformers' SDPA function
repeats the keys and values per head group whenever there is a mask).

The attention function is registered with transformers' ``AttentionInterface`` under
:data:`SLOT_ATTENTION` and reads its plan from the ``slot_plan`` keyword argument, as
:mod:`.hf_attention` reads ``tree_spans``.  No mask is built by the model for it (transformers
builds none for an attention it has no mask function for).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F

from enade_bench.backends.hf_attention import bucket_members, switched_attention

#: The name the attention is registered under.
SLOT_ATTENTION = "enade_slots"


def grouped_sdpa(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: torch.Tensor, scale: float | None
) -> torch.Tensor:
    """SDPA with grouped-query attention folded into the query length (no key/value repeat).

    ``query``: ``n × H × L × d``; ``key``, ``value``: ``n × Hkv × S × d`` (``H = g · Hkv``, the
    heads of one group adjacent, as transformers orders them); ``mask``: boolean ``n × 1 × L × S``
    (True: attend), or already folded, ``n × 1 × (g · L) × S``.  Returns ``n × L × H × d`` (transformers' attention output layout).
    """
    n, heads, length, dim = query.shape
    kv_heads = key.shape[1]
    group = heads // kv_heads
    folded = query.reshape(n, kv_heads, group * length, dim)
    if length > 1 and mask.shape[-2] != group * length:  # not folded yet (one query: it broadcasts)
        mask = _fold(mask, group)
    out = F.scaled_dot_product_attention(folded, key, value, attn_mask=mask, scale=scale)
    return out.reshape(n, heads, length, value.shape[-1]).transpose(1, 2)


@dataclass(frozen=True)
class SlotBucket:
    """Questions run as one padded SDPA batch in the prefill, built once for every layer.

    ``cols`` (``n × width``): each padded slot's offset after the prefix's rest (a padding slot
    repeats its question's last token); ``mask``: boolean ``n × 1 × (group · width) × (prefix +
    width)``, folded for grouped-query attention (:func:`grouped_sdpa`); ``src`` and ``dest``: the
    real slots (flat in ``n · width``) and their offsets in the row, for placing the output.
    """

    cols: torch.Tensor
    mask: torch.Tensor
    src: torch.Tensor
    dest: torch.Tensor


@dataclass
class SlotPlan:
    """What one call of :func:`slot_attention_forward` does.

    Prefill (``decode`` False): the row holds ``rest`` tokens of the prefix after the ``past``
    cached ones (``causal``: their folded mask), then the questions, run as ``buckets``.  Decode:
    ``valid`` (``rows × width``, boolean) marks the cache columns each row attends to.
    """

    past: int = 0
    rest: int = 0
    causal: torch.Tensor | None = None
    buckets: Sequence[SlotBucket] = ()
    decode: bool = False
    valid: torch.Tensor | None = None


def _fold(mask: torch.Tensor, group: int) -> torch.Tensor:
    """``n × 1 × L × S`` -> ``n × 1 × (group · L) × S``: the mask of the folded query heads."""
    n, _, length, keys = mask.shape
    return mask[:, :, None].expand(n, 1, group, length, keys).reshape(n, 1, group * length, keys)


def prefill_plan(past: int, rest: int, spans: Sequence[tuple[int, int]], buckets: Sequence[Sequence[int]],
                 group: int, device: torch.device) -> SlotPlan:  # fmt: skip
    """The prefill's plan: the rest's causal mask and each bucket's slots and mask, on ``device``."""
    prefix = past + rest
    causal = None
    if rest:
        causal = _fold(torch.ones((rest, prefix), dtype=torch.bool).tril(past)[None, None], group).to(device)
    out = []
    for members in buckets:
        lengths = torch.tensor([spans[i][1] - spans[i][0] for i in members])
        starts = torch.tensor([spans[i][0] for i in members])
        width = int(lengths[0])
        own = torch.arange(width)
        cols = starts[:, None] + torch.minimum(own[None, :], lengths[:, None] - 1)
        real = own[None, :] < lengths[:, None]
        mask = torch.cat((torch.ones((len(members), width, prefix), dtype=torch.bool),
                          (own[None, None, :] <= own[None, :, None]) & real[:, None, :]), dim=2)  # fmt: skip
        src = torch.nonzero(real.reshape(-1))[:, 0]
        out.append(SlotBucket(cols.to(device), _fold(mask[:, None], group).to(device), src.to(device),
                              (rest + cols.reshape(-1)[src]).to(device)))  # fmt: skip
    return SlotPlan(past=past, rest=rest, causal=causal, buckets=out)


def _prefill_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, plan: SlotPlan,
                       scale: float | None) -> torch.Tensor:  # fmt: skip
    """The packed row: the prefix's rest causally, then each question over the prefix and itself."""
    rest = plan.rest
    prefix = plan.past + rest
    heads, dim = query.shape[1], value.shape[3]
    out = query.new_empty((query.shape[2], heads, dim))
    if plan.causal is not None:
        out[:rest] = grouped_sdpa(
            query[:, :, :rest], key[:, :, :prefix], value[:, :, :prefix], plan.causal, scale
        )[0]
    for bucket in plan.buckets:
        n, width = bucket.cols.shape
        flat = bucket.cols.reshape(-1)

        def rows(
            t: torch.Tensor, offset: int, flat: torch.Tensor = flat, n: int = n, width: int = width
        ) -> torch.Tensor:
            """``1 × h × row × d`` -> ``n × h × width × d``: each question's (padded) slots."""
            return t[0][:, offset + flat].reshape(t.shape[1], n, width, t.shape[3]).transpose(0, 1)

        keys = torch.cat((key[:, :, :prefix].expand(n, -1, -1, -1), rows(key, prefix)), dim=2)
        values = torch.cat((value[:, :, :prefix].expand(n, -1, -1, -1), rows(value, prefix)), dim=2)
        result = grouped_sdpa(rows(query, rest), keys, values, bucket.mask, scale)  # n × width × H × d
        out[bucket.dest] = result.reshape(n * width, heads, dim)[bucket.src]
    return out[None]


def slot_attention_forward(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    slot_plan: SlotPlan | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """An ``AttentionInterface`` function: the packed prefill or a decode step (``slot_plan``)."""
    if slot_plan is None:
        raise ValueError("slot attention needs a slot_plan (it runs inside generate_packed only)")
    if not slot_plan.decode:
        return _prefill_attention(query, key, value, slot_plan, scaling), None
    assert slot_plan.valid is not None
    mask = slot_plan.valid[:, None, None, : key.shape[2]]
    return grouped_sdpa(query, key, value, mask, scaling), None


@dataclass
class SlotCache:
    """A key/value cache preallocated for a whole decode, written in place.

    ``rows`` decode rows, ``width`` columns: the prefix (``prefix`` columns, the same in every
    row), each row's question (``owner[row]``'s span of the prefill row, at most ``room``
    columns), then one column per decode step.  The model calls :meth:`update` in every layer:
    in the prefill (batch 1) it returns the prefix's cached states and the row's, and places
    them in the slots; in a decode step it writes the step's column (:attr:`cursor`) in place and
    returns the columns in use.
    """

    rows: int
    width: int
    prefix: int
    room: int
    past: Any = None  # the store's batch-1 cache of the first ``past`` prefix tokens, or None
    gather: torch.Tensor | None = None  # rows × room: prefill-row columns of each row's question
    cursor: torch.Tensor | None = None  # the decode step's column (a 1-element tensor)
    limit: int = 0  # columns returned to the attention in a decode step
    layers: list[tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list)

    def update(
        self, key: torch.Tensor, value: torch.Tensor, layer: int, *args: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if len(self.layers) <= layer:  # the prefill: batch 1, the packed row
            if self.past is not None:
                key = torch.cat((self.past.layers[layer].keys, key), dim=2)
                value = torch.cat((self.past.layers[layer].values, value), dim=2)
            self.layers.append((self._place(key), self._place(value)))
            return key, value
        keys, values = self.layers[layer]
        assert self.cursor is not None
        keys.index_copy_(2, self.cursor, key)
        values.index_copy_(2, self.cursor, value)
        return keys[:, :, : self.limit], values[:, :, : self.limit]

    def _place(self, states: torch.Tensor) -> torch.Tensor:
        """The slots of one layer from the prefill row's states (``1 × Hkv × (prefix + row) × d``)."""
        slots = states.new_zeros((self.rows, states.shape[1], self.width, states.shape[3]))
        slots[:, :, : self.prefix] = states[:, :, : self.prefix]
        if self.gather is not None:
            own = states[0][:, self.prefix + self.gather.reshape(-1)]  # Hkv × rows·room × d
            slots[:, :, self.prefix : self.prefix + self.room] = own.reshape(
                states.shape[1], self.rows, self.room, -1
            ).transpose(0, 1)
        return slots

    def get_seq_length(self, layer: int = 0) -> int:
        return self.limit


def slot_buckets(lengths: Sequence[int], past: int, batched: bool, waste: float) -> list[list[int]]:
    """The questions run together in the prefill attention: buckets (CUDA) or one by one (CPU)."""
    if not batched:
        return [[i] for i in range(len(lengths))]
    return bucket_members(lengths, past, waste)


def slot_attention(model: Any) -> AbstractContextManager[None]:
    """Within the block, ``model`` runs :func:`slot_attention_forward` (then its own again)."""
    return switched_attention(model, SLOT_ATTENTION, slot_attention_forward)
