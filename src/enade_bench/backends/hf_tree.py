"""One forward pass over a tree of token segments (block-causal mask, restarted positions).

Scoring asks for many sequences that share a head: every question of a chunk
shares the instruction, and every option of a question shares its stem.  Instead
of padding them into a batch (a stem batch, then an option batch on copies of
each stem's key/value cache), the segments are laid end to end in *one* row:

    [head] [stem 1] [option 1a] [option 1b] … [stem 2] [option 2a] …

Each token attends to the cached prefix, to every token of its ancestor segments
and causally to its own segment; position ids restart where the parent ends, so
option 1b sits at the same positions as option 1a.  The mask is block-causal
(a block lower-triangular matrix over the row).  The chunk's common prefix comes
from the run-wide store; each question is a tree ``[stem][option a][option b]…``,
and questions are packed into rows no wider than the longest one (short questions
side by side, each restarting its positions), so the model is called once per
chunk, no key/value cache is copied per option, little padding is computed, and
the output layer runs only at the positions whose next-token distribution is
asked for.  Rows no wider than the longest question rather
than the whole chunk in one row: attention is quadratic in the row width, and
almost all of a chunk-long row's scores would be masked out (measured in
docs/performance.md).

Beyond the chunk's common prefix, contexts are laid out as a radix tree
(:func:`radix_units`): the option orders of one question share the stem *and*
whatever leading options they list alike, identical contexts run once, and a
context's identical continuations once.

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

from enade_bench.backends.hf_prefix import PrefixStore, common_prefix_length, prefix_states


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
    get_head = getattr(model, "get_output_embeddings", None)
    if get_head is None or get_head() is None:
        return False
    text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    if getattr(text, "_attn_implementation", "eager") not in {"sdpa", "eager"}:
        return False
    if any("sliding" in str(kind) for kind in getattr(text, "layer_types", None) or []):
        return False
    window = getattr(text, "sliding_window", None)
    return not (window and getattr(text, "use_sliding_window", True))


def _layout(segments: Sequence[Segment], past: int) -> tuple[list[int], list[int]]:
    """Start of each segment in its row, and each segment's first position id."""
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


def tree_mask(segments: Sequence[Segment], past: int, width: int | None = None) -> torch.Tensor:
    """Boolean ``width × (past + width)`` mask of one row: True where a token may attend.

    ``width`` pads the row (default: its length); a padding token attends to itself
    only, so it stays finite and no real token attends to it.
    """
    starts, _ = _layout(segments, past)
    length = sum(len(s.tokens) for s in segments)
    width = length if width is None else width
    mask = torch.zeros((width, past + width), dtype=torch.bool)
    mask[:length, :past] = True
    for index, seg in enumerate(segments):
        n = len(seg.tokens)
        rows = slice(starts[index], starts[index] + n)
        col = past + starts[index]
        mask[rows, col : col + n] = torch.ones((n, n), dtype=torch.bool).tril()
        parent = seg.parent
        while parent is not None:
            pcol = past + starts[parent]
            mask[rows, pcol : pcol + len(segments[parent].tokens)] = True
            parent = segments[parent].parent
    pad = torch.arange(length, width)
    mask[pad, past + pad] = True
    return mask


@torch.inference_mode()
def tree_logits(
    model: Any,
    rows: Sequence[Sequence[Segment]],
    want: Sequence[tuple[int, int, int]],
    cache: Any = None,
    past: int = 0,
    pad_id: int = 0,
) -> tuple[torch.Tensor, Any]:
    """Log-softmax after the tokens ``want`` = ``(row, segment, offset)``, and the new cache.

    Each row is a tree of segments laid end to end (right-padded to the longest
    row); ``cache`` holds ``past`` tokens every root segment follows, one cache row
    per row (``None``/0: none).  Returns ``len(want) × vocab`` and the cache.
    """
    device = next(model.parameters()).device
    layouts = [_layout(segments, past) for segments in rows]
    lengths = [sum(len(s.tokens) for s in segments) for segments in rows]
    width = max(lengths)
    ids, positions = [], []
    for segments, (_, first_pos), n in zip(rows, layouts, lengths, strict=True):
        ids.append([t for seg in segments for t in seg.tokens] + [pad_id] * (width - n))
        pos = [first_pos[i] + j for i, seg in enumerate(segments) for j in range(len(seg.tokens))]
        positions.append(pos + [past] * (width - n))
    mask = torch.stack([tree_mask(segments, past, width) for segments in rows]).to(device)
    if _attn_implementation(model) == "eager":
        dtype = next(model.parameters()).dtype
        mask = torch.zeros(mask.shape, dtype=dtype, device=device).masked_fill(~mask, torch.finfo(dtype).min)
    # The output layer runs at the wanted (row, column) pairs only: a pre-hook gathers them
    # before the model's own head (and whatever the model does after it, e.g. soft-capping).
    # ``logits_to_keep`` would keep the same columns in every row, the union over all rows.
    rows_at = torch.tensor([r for r, _, _ in want], device=device)
    cols_at = torch.tensor([layouts[r][0][s] + o for r, s, o in want], device=device)
    head = model.get_output_embeddings()
    hook = head.register_forward_pre_hook(lambda _module, args: (args[0][rows_at, cols_at][None], *args[1:]))
    try:
        out = model(
            input_ids=torch.tensor(ids, device=device),
            attention_mask=mask[:, None],
            position_ids=torch.tensor(positions, device=device),
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=0,
        )
    finally:
        hook.remove()
    return torch.log_softmax(out.logits[0].float(), dim=-1), out.past_key_values


def _attn_implementation(model: Any) -> str:
    config = model.config
    text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    return str(getattr(text, "_attn_implementation", "eager"))


def pack_rows(lengths: Sequence[int]) -> list[list[int]]:
    """Items into rows no longer than the longest item: first fit, longest first.

    A row holds several short questions side by side instead of padding each to the
    longest one; the row width (and so the quadratic attention cost) does not grow.
    """
    capacity = max(lengths)
    rows: list[list[int]] = []
    room: list[int] = []
    for item in sorted(range(len(lengths)), key=lambda i: (-lengths[i], i)):
        for r, free in enumerate(room):
            if lengths[item] <= free:
                rows[r].append(item)
                room[r] -= lengths[item]
                break
        else:
            rows.append([item])
            room.append(capacity - lengths[item])
    return rows


def score_tree(
    model: Any,
    contexts: Sequence[Sequence[int]],
    tails: Sequence[Sequence[Sequence[int]]],
    store: PrefixStore | None = None,
    pad_id: int = 0,
) -> tuple[torch.Tensor, list[list[list[float]]]]:
    """Every context and its continuations in one model call.

    The contexts' common prefix is computed once (or taken from the run-wide
    ``store``); each question is a tree ``[rest of the context][continuation 1]
    [continuation 2]…`` with the continuations side by side (block-causal), and
    short questions share a row (:func:`pack_rows`).  Returns the log-softmax
    after each context's last token (``len(contexts) × vocab``) and each
    continuation's token log-probabilities.
    """
    shared = min(common_prefix_length(contexts), min(len(c) for c in contexts) - 1)
    head = list(contexts[0][:shared])
    cache = prefix_states(model, head, store, logits=False)[0] if shared else None
    units, ends, tail_segs = radix_units([ctx[shared:] for ctx in contexts], tails)
    packing = pack_rows([sum(len(s.tokens) for s in unit) for unit in units])
    if cache is not None and len(packing) > 1:
        cache.batch_repeat_interleave(len(packing))
    rows: list[list[Segment]] = []
    place: dict[int, tuple[int, int]] = {}  # unit -> (row, first segment's index in the row)
    for r, members in enumerate(packing):
        row: list[Segment] = []
        for u in members:
            place[u] = (r, len(row))
            base = len(row)
            row += [
                Segment(seg.tokens, None if seg.parent is None else base + seg.parent) for seg in units[u]
            ]
        rows.append(row)
    want: dict[tuple[int, int, int], int] = {}  # (row, segment, offset) -> index in the output

    def at(unit: int, seg: int, offset: int) -> int:
        r, base = place[unit]
        return want.setdefault((r, base + seg, offset), len(want))

    after = [at(u, s, len(units[u][s].tokens) - 1) for u, s in ends]  # after each context
    token_at = [
        [[at(u, s, j) for j in range(len(units[u][s].tokens) - 1)] for u, s in per_q] for per_q in tail_segs
    ]
    if store is not None:
        store.stats.computed += sum(len(s.tokens) for unit in units for s in unit)
    lp, _ = tree_logits(model, rows, list(want), cache, shared, pad_id)
    scores: list[list[list[float]]] = []
    for q, options in enumerate(tails):
        per_q = []
        for positions, tail in zip(token_at[q], options, strict=True):
            token_lp = [float(lp[after[q], tail[0]])]
            token_lp += [float(lp[positions[j - 1], tail[j]]) for j in range(1, len(tail))]
            per_q.append(token_lp)
        scores.append(per_q)
    return lp[after], scores


def radix_units(
    contexts: Sequence[Sequence[int]], tails: Sequence[Sequence[Sequence[int]]]
) -> tuple[list[list[Segment]], list[tuple[int, int]], list[list[tuple[int, int]]]]:
    """The contexts as radix trees (shared heads once), each context's tails under it.

    The shuffles of a question list the same options in other orders, so their
    contexts share more than the chunk's common prefix: a context's tokens are
    run once per distinct head (identical contexts once), and identical tails of
    one context once.  Contexts that begin with different tokens are separate
    trees, the units :func:`pack_rows` places.  Returns the units (segments with
    parents inside their unit, parents first), each context's last segment as
    ``(unit, segment)``, and each tail's segment.
    """
    units: list[list[Segment]] = []
    ends: list[tuple[int, int]] = [(0, 0)] * len(contexts)

    def build(unit: list[Segment], members: list[int], depth: int, parent: int | None) -> None:
        n = common_prefix_length([contexts[m][depth:] for m in members])
        unit.append(Segment(contexts[members[0]][depth : depth + n], parent))
        node, depth = len(unit) - 1, depth + n
        groups: dict[int, list[int]] = {}
        for m in members:
            if len(contexts[m]) == depth:
                ends[m] = (len(units), node)
            else:
                groups.setdefault(contexts[m][depth], []).append(m)
        for group in groups.values():
            build(unit, group, depth, node)

    roots: dict[int, list[int]] = {}
    for q, ctx in enumerate(contexts):
        if not ctx:
            raise ValueError(f"context {q} is empty after the shared prefix")
        roots.setdefault(ctx[0], []).append(q)
    for members in roots.values():
        unit: list[Segment] = []
        build(unit, members, 0, None)
        units.append(unit)
    tail_segs: list[list[tuple[int, int]]] = []
    seen: dict[tuple[int, int, tuple[int, ...]], int] = {}  # (unit, context node, tail) -> segment
    for q, options in enumerate(tails):
        u, node = ends[q]
        per_q = []
        for tail in options:
            key = (u, node, tuple(tail))
            if key not in seen:
                seen[key] = len(units[u])
                units[u].append(Segment(tail, node))
            per_q.append((u, seen[key]))
        tail_segs.append(per_q)
    return units, ends, tail_segs
