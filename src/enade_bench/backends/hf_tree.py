"""One forward pass over a tree of token segments (block-causal mask, restarted positions).

Scoring asks for many sequences that share a head: every question of a chunk
shares the instruction, and every option of a question shares its stem.  Instead
of padding them into a batch (a stem batch, then an option batch on copies of
each stem's key/value cache), the segments are laid end to end in *one* row:

    [head] [stem 1] [option 1a] [option 1b] … [stem 2] [option 2a] …

Each token attends to the cached prefix, to every token of its ancestor segments
and causally to its own segment; position ids restart where the parent ends, so
option 1b sits at the same positions as option 1a.  The mask is block-causal
(a block lower-triangular matrix over the row).  No padding is computed, no cache
is copied, and the model is called once per chunk; the output layer runs only at
the positions whose next-token distribution is asked for (``logits_to_keep``).

Exactness: each token sees exactly the tokens it would see in its own sequence,
at the same positions, so only floating-point summation order differs from
running the sequences one by one (tested against that).

Limits: models with sliding-window attention layers (Gemma 3, Mistral's window)
and attention kernels that take no mask (flash-attention) are not run this way;
:func:`supports_tree` says so and the backend keeps its batched path for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from enade_bench.backends.hf_prefix import PrefixStore, common_prefix_length


@dataclass(frozen=True)
class Segment:
    """Tokens that follow ``parent`` (an earlier segment's index; ``None``: the cached prefix)."""

    tokens: Sequence[int]
    parent: int | None = None


def supports_tree(model: Any) -> bool:
    """Whether :func:`tree_logits` is exact for ``model`` (full attention, a mask-taking kernel)."""
    config = getattr(model, "config", None)
    if config is None or getattr(config, "is_encoder_decoder", False):
        return False
    text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    if getattr(text, "_attn_implementation", "eager") not in {"sdpa", "eager"}:
        return False
    if any("sliding" in str(kind) for kind in getattr(text, "layer_types", None) or []):
        return False
    window = getattr(text, "sliding_window", None)
    return not (window and getattr(text, "use_sliding_window", True))


def _layout(segments: Sequence[Segment], past: int) -> tuple[list[int], list[int]]:
    """Start of each segment in the row, and each segment's first position id."""
    starts: list[int] = []
    first_pos: list[int] = []
    flat = 0
    for index, seg in enumerate(segments):
        if seg.parent is not None and not 0 <= seg.parent < index:
            raise ValueError(f"segment {index}: parent {seg.parent} must be an earlier segment")
        starts.append(flat)
        parent = seg.parent
        first_pos.append(past if parent is None else first_pos[parent] + len(segments[parent].tokens))
        flat += len(seg.tokens)
    return starts, first_pos


def tree_mask(segments: Sequence[Segment], past: int, device: Any = "cpu") -> torch.Tensor:
    """Boolean ``L × (past + L)`` mask: True where a row token may attend to a column."""
    starts, _ = _layout(segments, past)
    length = sum(len(s.tokens) for s in segments)
    mask = torch.zeros((length, past + length), dtype=torch.bool, device=device)
    mask[:, :past] = True
    for index, seg in enumerate(segments):
        n = len(seg.tokens)
        rows = slice(starts[index], starts[index] + n)
        col = past + starts[index]
        mask[rows, col : col + n] = torch.ones((n, n), dtype=torch.bool, device=device).tril()
        parent = seg.parent
        while parent is not None:
            pcol = past + starts[parent]
            mask[rows, pcol : pcol + len(segments[parent].tokens)] = True
            parent = segments[parent].parent
    return mask


@torch.inference_mode()
def tree_logits(
    model: Any,
    segments: Sequence[Segment],
    want: Sequence[tuple[int, int]],
    cache: Any = None,
    past: int = 0,
) -> tuple[torch.Tensor, Any]:
    """Log-softmax rows after the tokens ``want`` = ``(segment, offset)``, and the new cache.

    ``cache`` holds ``past`` tokens every segment follows (``None``/0: none).
    Returns ``(len(want) × vocab, cache)``; the cache's first ``past + len(segments[0])``
    positions are the prefix plus a root first segment, usable as a stored prefix.
    """
    device = next(model.parameters()).device
    starts, first_pos = _layout(segments, past)
    ids = [t for seg in segments for t in seg.tokens]
    positions = [first_pos[i] + j for i, seg in enumerate(segments) for j in range(len(seg.tokens))]
    mask = tree_mask(segments, past, device)
    text = (
        model.config.get_text_config(decoder=True)
        if hasattr(model.config, "get_text_config")
        else model.config
    )
    if getattr(text, "_attn_implementation", "eager") == "eager":
        dtype = next(model.parameters()).dtype
        mask = torch.zeros(mask.shape, dtype=dtype, device=device).masked_fill(~mask, torch.finfo(dtype).min)
    flat = sorted({starts[s] + o for s, o in want})
    out = model(
        input_ids=torch.tensor([ids], device=device),
        attention_mask=mask[None, None],
        position_ids=torch.tensor([positions], device=device),
        past_key_values=cache,
        use_cache=True,
        logits_to_keep=torch.tensor(flat, device=device),
    )
    row = {k: i for i, k in enumerate(flat)}
    logits = out.logits[0].float()
    picked = logits[[row[starts[s] + o] for s, o in want]]
    return torch.log_softmax(picked, dim=-1), out.past_key_values


def score_tree(
    model: Any,
    contexts: Sequence[Sequence[int]],
    tails: Sequence[Sequence[Sequence[int]]],
    store: PrefixStore | None = None,
) -> tuple[torch.Tensor, list[list[list[float]]]]:
    """Every context and its continuations in one pass.

    Returns the log-softmax after each context's last token (``len(contexts) × vocab``)
    and, for each context, each continuation's token log-probabilities.  The contexts'
    common prefix comes from (and goes to) the run-wide ``store``.
    """
    shared = min(common_prefix_length(contexts), min(len(c) for c in contexts) - 1)
    head = list(contexts[0][:shared])
    start, cache = store.lookup(head, shared) if store is not None else (0, None)
    segments: list[Segment] = []
    root = None
    if shared > start:
        segments.append(Segment(head[start:]))
        root = 0
    want: list[tuple[int, int]] = []
    ends: list[int] = []  # the row after each context's last token
    tail_rows: list[list[tuple[int, list[int]]]] = []
    for ctx, options in zip(contexts, tails, strict=True):
        ci = len(segments)
        segments.append(Segment(ctx[shared:], root))
        ends.append(len(want))
        want.append((ci, len(ctx) - shared - 1))
        rows = []
        for tail in options:
            ti = len(segments)
            segments.append(Segment(tail, ci))
            rows.append((len(want), list(tail)))
            want += [(ti, j) for j in range(len(tail) - 1)]
        tail_rows.append(rows)
    lp, new_cache = tree_logits(model, segments, want, cache, start)
    if store is not None:
        store.stats.computed += sum(len(s.tokens) for s in segments)
        store.add(head, new_cache)
    scores: list[list[list[float]]] = []
    for q, rows in enumerate(tail_rows):
        per_q = []
        for first_row, tail in rows:
            token_lp = [float(lp[ends[q], tail[0]])]
            token_lp += [float(lp[first_row + j - 1, tail[j]]) for j in range(1, len(tail))]
            per_q.append(token_lp)
        scores.append(per_q)
    return lp[ends], scores
