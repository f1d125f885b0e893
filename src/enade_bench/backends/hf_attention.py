"""Attention for a row of independent trees: each tree sees the cached prefix and itself only.

Tree scoring (:mod:`.hf_tree`) lays every question of a chunk end to end in one row.
Through the model's usual attention kernel with a block-causal mask, every
token would compute a score against every other token of the row and the masked ones
would be thrown away: for the 40 ENEM questions of the benchmark, 4.3 times the scores
needed, and the row padding on top.  This attention runs each tree (a question: its
stem and options) as its own call of transformers' SDPA attention, on the prefix's keys
and the tree's own keys, with the tree's block-causal mask; the rows then need no
padding and no score between two questions is computed.  This is the CPU policy's path
(one SDPA call per tree and layer); the CUDA policy attends the whole row in one
FlexAttention call per layer instead (:mod:`.hf_flex`).

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
class TreeSpans:
    """Where each tree lies in the row (``[start, end)``), its mask, and the cached prefix length.

    ``masks[i]`` is boolean ``(end - start) × (past + end - start)``: True where a token of
    tree ``i`` may attend, over the prefix's keys then the tree's own.
    """

    spans: Sequence[tuple[int, int]]
    masks: Sequence[torch.Tensor]
    past: int
    #: Scoring blocks (:func:`.hf_radix.attention_blocks`) attend more than their own span:
    #: ``key_index[i]`` lists the positions in the key tensor (prefix included) that span ``i``
    #: attends, and ``masks[i]`` is ``(end - start) × len(key_index[i])``.  None: the prefix
    #: and the span itself.
    key_index: Sequence[torch.Tensor] | None = None


def pairs(lengths: Sequence[int], past: int) -> int:
    """Query--key pairs of trees of ``lengths`` tokens run one by one: ``Σ l (past + l)``."""
    return sum(n * (past + n) for n in lengths)


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
