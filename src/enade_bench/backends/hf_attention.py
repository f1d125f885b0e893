"""Attention for a row of independent trees: each tree sees the cached prefix and itself only.

Tree scoring (:mod:`.hf_tree`) lays every question of a chunk end to end in one row.
Through the model's usual attention kernel with a block-causal mask, every
token would compute a score against every other token of the row and the masked ones
would be thrown away: for the 40 ENEM questions of the benchmark, 4.3 times the scores
needed, and the row padding on top.  This attention runs each tree (a question: its
stem and options) as its own call of transformers' SDPA attention, on the prefix's keys
and the tree's own keys, with the tree's block-causal mask; the rows then need no
padding and no score between two questions is computed.

It is registered with transformers' ``AttentionInterface`` (the documented way to add
an attention function) under :data:`TREE_ATTENTION`, switched on for one model call by
:func:`tree_attention`, and reads the trees from the ``tree_spans`` keyword argument,
which transformers hands from the model's ``forward`` down to every attention layer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

import torch

#: The name this attention is registered under.
TREE_ATTENTION = "enade_tree"


@dataclass(frozen=True)
class Bucket:
    """Trees run as one padded SDPA batch: ``n`` trees, each padded to ``width`` tokens.

    ``index`` (``n × width``) holds each padded slot's column in the row (a padding slot
    repeats its tree's first column); ``valid`` (``n × width``, boolean) marks the real
    slots; ``mask`` (``n × 1 × width × (past + width)``) is each tree's mask, padding keys
    masked out and padding queries attending to the first key only (their output is dropped).
    """

    index: torch.Tensor
    valid: torch.Tensor
    mask: torch.Tensor
    #: Blocks with keys of their own (:attr:`TreeSpans.key_index`): ``n × (past + kwidth)``, each
    #: key slot's position in the key tensor (a padding slot repeats the first); the mask is then
    #: ``n × 1 × width × (past + kwidth)``.  None: the keys are the prefix and the query slots.
    key_index: torch.Tensor | None = None


@dataclass(frozen=True)
class TreeSpans:
    """Where each tree lies in the row (``[start, end)``), its mask, and the cached prefix length.

    ``masks[i]`` is boolean ``(end - start) × (past + end - start)``: True where a token of
    tree ``i`` may attend, over the prefix's keys then the tree's own.  With ``buckets``
    (:func:`buckets_for`) the trees run as a few padded batches instead of one by one.
    """

    spans: Sequence[tuple[int, int]]
    masks: Sequence[torch.Tensor]
    past: int
    buckets: Sequence[Bucket] | None = None
    #: Scoring blocks (:func:`.hf_radix.attention_blocks`) attend more than their own span:
    #: ``key_index[i]`` lists the positions in the key tensor (prefix included) that span ``i``
    #: attends, and ``masks[i]`` is ``(end - start) × len(key_index[i])``.  None: the prefix
    #: and the span itself.
    key_index: Sequence[torch.Tensor] | None = None


def pairs(lengths: Sequence[int], past: int) -> int:
    """Query--key pairs of trees of ``lengths`` tokens run one by one: ``Σ l (past + l)``."""
    return sum(n * (past + n) for n in lengths)


def bucket_members(
    lengths: Sequence[int], past: int, waste: float, keys: Sequence[int] | None = None
) -> list[list[int]]:
    """Trees (indices) grouped so that padding each group to its longest adds at most ``waste``.

    Longest first; a tree joins the open group while the group's padded pairs
    ``n · L · (past + K)`` (``L`` its most queries, ``K`` its most keys beyond the prefix;
    ``keys``: each tree's, default its ``lengths``) stay within ``(1 + waste)`` × the pairs
    its trees need ``Σ l (past + k)``, so all buckets together compute at most
    ``(1 + waste)`` × the pairs of running each tree alone.
    """
    klen = list(lengths) if keys is None else list(keys)
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], -klen[i]))
    groups: list[list[int]] = []
    for i in order:
        if groups:
            group = [*groups[-1], i]
            width, kwidth = max(lengths[j] for j in group), max(klen[j] for j in group)
            need = sum(lengths[j] * (past + klen[j]) for j in group)
            if len(group) * width * (past + kwidth) <= (1 + waste) * need:
                groups[-1].append(i)
                continue
        groups.append([i])
    return groups


def buckets_for(
    spans: Sequence[tuple[int, int]],
    masks: Sequence[torch.Tensor],
    past: int,
    waste: float,
    key_index: Sequence[torch.Tensor] | None = None,
    device: torch.device | None = None,
) -> list[Bucket]:
    """The padded batches of :func:`bucket_members`, as :class:`Bucket` on ``device``.

    ``key_index``: the blocks' own keys (:attr:`TreeSpans.key_index`), None: each tree's span.
    ``device``: the model's (None: the masks'); the masks may be built on the host.
    """
    lengths = [end - start for start, end in spans]
    if device is None:
        device = masks[0].device if masks else torch.device("cpu")
    if key_index is not None:
        return _key_buckets(spans, masks, past, waste, key_index, device)
    out = []
    for members in bucket_members(lengths, past, waste):
        width = lengths[members[0]]
        index = torch.zeros((len(members), width), dtype=torch.long)
        valid = torch.zeros((len(members), width), dtype=torch.bool)
        mask = torch.zeros((len(members), 1, width, past + width), dtype=torch.bool, device=device)
        mask[:, 0, :, 0] = True  # padding queries see one key (their output is dropped)
        for row, tree in enumerate(members):
            start, end = spans[tree]
            n = end - start
            index[row, :n] = torch.arange(start, end)
            index[row, n:] = start
            valid[row, :n] = True
            mask[row, 0, :n] = False
            mask[row, 0, :n, :past] = masks[tree][:, :past].to(device)
            mask[row, 0, :n, past : past + n] = masks[tree][:, past:].to(device)
        out.append(Bucket(index.to(device), valid.to(device), mask))
    return out


def _key_buckets(
    spans: Sequence[tuple[int, int]],
    masks: Sequence[torch.Tensor],
    past: int,
    waste: float,
    key_index: Sequence[torch.Tensor],
    device: torch.device,
) -> list[Bucket]:
    """:func:`buckets_for` of blocks with keys of their own, built on the host, moved once per bucket."""
    lengths = [end - start for start, end in spans]
    keys = [len(k) - past for k in key_index]
    out = []
    for members in bucket_members(lengths, past, waste, keys):
        width, kwidth = max(lengths[i] for i in members), max(keys[i] for i in members)
        index = torch.zeros((len(members), width), dtype=torch.long)
        valid = torch.zeros((len(members), width), dtype=torch.bool)
        kindex = torch.zeros((len(members), past + kwidth), dtype=torch.long)
        mask = torch.zeros((len(members), 1, width, past + kwidth), dtype=torch.bool)
        mask[:, 0, :, 0] = True  # padding queries see one key (their output is dropped)
        for row, block in enumerate(members):
            start, end = spans[block]
            n, k = end - start, len(key_index[block])
            index[row, :n] = torch.arange(start, end)
            index[row, n:] = start
            valid[row, :n] = True
            kindex[row, :k] = key_index[block].cpu()
            kindex[row, k:] = kindex[row, 0]
            mask[row, 0, :n] = False
            mask[row, 0, :n, :k] = masks[block].cpu()
        out.append(Bucket(index.to(device), valid.to(device), mask.to(device), kindex.to(device)))
    return out


def _sdpa() -> Any:
    from transformers.integrations.sdpa_attention import sdpa_attention_forward  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    return sdpa_attention_forward


def tree_attention_forward(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    tree_spans: TreeSpans | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """An ``AttentionInterface`` function: SDPA per tree (``query``: batch 1 × heads × row × dim).

    Without ``tree_spans`` it is plain SDPA (a call that is not a tree call).  Returns the
    output as ``1 × row × heads × dim``, as transformers' own attention functions do.
    """
    sdpa = _sdpa()
    if tree_spans is None:
        return sdpa(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs)  # type: ignore[no-any-return]
    if query.shape[0] != 1:
        raise ValueError(f"tree attention runs one row, got a batch of {query.shape[0]}")
    past = tree_spans.past
    if tree_spans.buckets is not None:
        return _bucketed(module, query, key, value, tree_spans, dropout, scaling), None
    outputs = []
    for i, ((start, end), mask) in enumerate(zip(tree_spans.spans, tree_spans.masks, strict=True)):
        if tree_spans.key_index is not None:  # a scoring block: its ancestors' keys and its own
            keys = key.index_select(2, tree_spans.key_index[i])
            values = value.index_select(2, tree_spans.key_index[i])
        else:
            keys = torch.cat((key[:, :, :past], key[:, :, past + start : past + end]), dim=2)
            values = torch.cat((value[:, :, :past], value[:, :, past + start : past + end]), dim=2)
        out, _ = sdpa(
            module, query[:, :, start:end], keys, values, mask[None, None], dropout=dropout, scaling=scaling
        )
        outputs.append(out)
    return torch.cat(outputs, dim=1), None


def _bucketed(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    tree_spans: TreeSpans,
    dropout: float,
    scaling: float | None,
) -> torch.Tensor:
    """:func:`tree_attention_forward` with the trees run as padded batches (``tree_spans.buckets``)."""
    sdpa = _sdpa()
    past = tree_spans.past
    heads = query.shape[1]
    out = query.new_empty((1, query.shape[2], heads, value.shape[3]))
    for bucket in tree_spans.buckets or ():
        n, width = bucket.index.shape
        flat = bucket.index.reshape(-1)

        def rows(
            t: torch.Tensor, offset: int, flat: torch.Tensor = flat, n: int = n, width: int = width
        ) -> torch.Tensor:
            """``1 × h × row × d`` -> ``n × h × width × d``: each tree's (padded) slots."""
            return t[0][:, offset + flat].reshape(t.shape[1], n, width, t.shape[3]).transpose(0, 1)

        if bucket.key_index is not None:  # scoring blocks: each its own keys, prefix included
            keys, values = _gathered(key, bucket.key_index), _gathered(value, bucket.key_index)
        else:
            keys = torch.cat((key[:, :, :past].expand(n, -1, -1, -1), rows(key, past)), dim=2)
            values = torch.cat((value[:, :, :past].expand(n, -1, -1, -1), rows(value, past)), dim=2)
        result, _ = sdpa(module, rows(query, 0), keys, values, bucket.mask, dropout=dropout, scaling=scaling)
        # result: n × width × h × d; keep the real slots
        keep = bucket.valid.reshape(-1)
        out[0, flat[keep]] = result.reshape(n * width, heads, -1)[keep]
    return out


def _gathered(t: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``1 × h × positions × d`` at ``index`` (``n × k``) -> ``n × h × k × d``."""
    n, k = index.shape
    return t[0][:, index.reshape(-1)].reshape(t.shape[1], n, k, t.shape[3]).transpose(0, 1)


def can_switch(model: Any) -> bool:
    """Whether ``model`` takes its attention function from ``AttentionInterface`` (can be switched)."""
    check = getattr(model, "_can_set_attn_implementation", None)
    return bool(check is not None and check())


@contextmanager
def switched_attention(model: Any, name: str, forward: Callable[..., Any]) -> Iterator[None]:
    """Within the block, ``model`` runs ``forward`` registered as ``name`` (then its own again)."""
    from transformers import AttentionInterface  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    AttentionInterface.register(name, forward)
    before = model.config._attn_implementation
    model.set_attn_implementation(name)
    try:
        if model.config._attn_implementation != name:
            raise RuntimeError(f"{type(model).__name__} did not switch to the attention '{name}'")
        yield
    finally:
        model.set_attn_implementation(before)


def tree_attention(model: Any) -> AbstractContextManager[None]:
    """Within the block, ``model`` runs :func:`tree_attention_forward` (then its own again)."""
    return switched_attention(model, TREE_ATTENTION, tree_attention_forward)
