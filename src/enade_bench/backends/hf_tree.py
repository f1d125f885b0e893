"""One forward pass over trees of token segments (tree attention, restarted positions).

Scoring asks for many sequences that share a head: every question of a chunk
shares the instruction, and every option of a question shares its stem.  Instead
of padding them into a batch (a stem batch, then an option batch on copies of
each stem's key/value cache), the segments are laid end to end in *one* row:

    [stem 1] [option 1a] [option 1b] … [stem 2] [option 2a] …

after the chunk's common prefix, which comes from the run-wide store as a key/value
cache.  Each question is a tree ``[stem][option a][option b]…``; each token attends
to the cached prefix, to every token of its ancestor segments and causally to its
own segment, and position ids restart where the parent ends, so option 1b sits at
the same positions as option 1a.  Each tree's attention is computed on its own
(:mod:`.hf_attention`), so the row needs no padding and no attention score between
two questions is computed; the model is called once per chunk, no key/value cache
is copied per option, the output layer runs only at the positions whose
next-token distribution is asked for, and a continuation's last token (whose
next-token distribution nobody asks for) is not run at all.

Beyond the chunk's common prefix, contexts are laid out as a radix tree
(:func:`radix_units`): the option orders of one question share the stem *and*
whatever leading options they list alike, identical contexts run once, and a
context's identical continuations once.

Exactness: each token sees exactly the tokens it would see in its own sequence,
at the same positions, so only floating-point summation order differs from
running the sequences one by one (tested against that).

Limits: models with sliding-window attention layers (Gemma 3, Mistral's window),
models that do not run SDPA (the tree attention calls transformers' SDPA function,
which equals the model's own attention only when that is SDPA: an eager model may
soft-cap its scores), and models whose attention function cannot be switched
through transformers' ``AttentionInterface`` are not run this way;
:func:`supports_tree` says so and the backend keeps its batched path for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from enade_bench.backends.hf_attention import TreeSpans, buckets_for, can_switch, tree_attention
from enade_bench.backends.hf_batching import BatchingPolicy
from enade_bench.backends.hf_prefix import PrefixStore, common_prefix_length, prefix_states


@dataclass(frozen=True)
class Segment:
    """Tokens that follow ``parent`` (an earlier segment's index; ``None``: the cached prefix)."""

    tokens: Sequence[int]
    parent: int | None = None


def supports_tree(model: Any) -> bool:
    """Whether :func:`tree_logits` is exact for ``model`` (full attention, a switchable SDPA kernel)."""
    config = getattr(model, "config", None)
    if config is None or getattr(config, "is_encoder_decoder", False):
        return False
    get_head = getattr(model, "get_output_embeddings", None)
    if get_head is None or get_head() is None:
        return False
    text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    if getattr(text, "_attn_implementation", "eager") != "sdpa":
        return False
    if any("sliding" in str(kind) for kind in getattr(text, "layer_types", None) or []):
        return False
    window = getattr(text, "sliding_window", None)
    return not (window and getattr(text, "use_sliding_window", True)) and can_switch(model)


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


def tree_mask(segments: Sequence[Segment], past: int) -> torch.Tensor:
    """Boolean ``n × (past + n)`` mask of one tree of ``n`` tokens: True where a token may attend."""
    starts, _ = _layout(segments, past)
    length = sum(len(s.tokens) for s in segments)
    mask = torch.zeros((length, past + length), dtype=torch.bool)
    mask[:, :past] = True
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
    return mask


@torch.inference_mode()
def tree_logits(
    model: Any,
    trees: Sequence[Sequence[Segment]],
    want: Sequence[tuple[int, int, int]],
    cache: Any = None,
    past: int = 0,
    policy: BatchingPolicy | None = None,
) -> torch.Tensor:
    """Log-softmax after the tokens ``want`` = ``(tree, segment, offset)``, in one model call.

    The trees are laid end to end in one row, with no padding; each tree attends to
    the ``past`` tokens of ``cache`` (batch 1; ``None``/0: none) and to itself only
    (:mod:`.hf_attention`): one attention call per tree, or, under a policy with
    ``batched_trees`` (CUDA), one per bucket of trees of similar length, padded
    within ``policy.bucket_waste``.  Returns ``len(want) × vocab``.
    """
    device = next(model.parameters()).device
    layouts = [_layout(segments, past) for segments in trees]
    spans: list[tuple[int, int]] = []
    ids: list[int] = []
    positions: list[int] = []
    for segments, (_, first_pos) in zip(trees, layouts, strict=True):
        start = len(ids)
        ids += [t for seg in segments for t in seg.tokens]
        positions += [first_pos[i] + j for i, seg in enumerate(segments) for j in range(len(seg.tokens))]
        spans.append((start, len(ids)))
    masks = [tree_mask(segments, past).to(device) for segments in trees]
    if policy is None:
        policy = BatchingPolicy.for_device(device.type)
    buckets = buckets_for(spans, masks, past, policy.bucket_waste) if policy.batched_trees else None
    plan = TreeSpans(spans, masks, past, buckets)
    # The output layer runs at the wanted columns only: a pre-hook gathers them before the
    # model's own head (and whatever the model does after it, e.g. soft-capping).
    cols_at = torch.tensor([spans[t][0] + layouts[t][0][s] + o for t, s, o in want], device=device)
    head = model.get_output_embeddings()
    hook = head.register_forward_pre_hook(lambda _module, args: (args[0][:, cols_at], *args[1:]))
    try:
        with tree_attention(model):
            out = model(
                input_ids=torch.tensor([ids], device=device),
                position_ids=torch.tensor([positions], device=device),
                past_key_values=cache,
                use_cache=cache is not None,
                logits_to_keep=0,
                tree_spans=plan,
            )
    finally:
        hook.remove()
    return torch.log_softmax(out.logits[0].float(), dim=-1)


def score_tree(
    model: Any,
    contexts: Sequence[Sequence[int]],
    tails: Sequence[Sequence[Sequence[int]]],
    store: PrefixStore | None = None,
    policy: BatchingPolicy | None = None,
) -> tuple[torch.Tensor, list[list[list[float]]]]:
    """Every context and its continuations in one model call.

    The contexts' common prefix is computed once (or taken from the run-wide
    ``store``); beyond it each question is a tree ``[rest of the context]
    [continuation 1][continuation 2]…`` with the continuations side by side
    (:func:`radix_units`), and the trees run end to end in one row
    (:func:`tree_logits`, batched as ``policy`` says).  Returns the log-softmax after each context's last
    token (``len(contexts) × vocab``) and each continuation's token
    log-probabilities.
    """
    shared = min(common_prefix_length(contexts), min(len(c) for c in contexts) - 1)
    head = list(contexts[0][:shared])
    cache = prefix_states(model, head, store, logits=False)[0] if shared else None
    # A continuation's last token predicts nothing that is scored: it is not run at all.
    fed = [[tail[:-1] for tail in options] for options in tails]
    units, ends, tail_segs = radix_units([ctx[shared:] for ctx in contexts], fed)
    want: dict[tuple[int, int, int], int] = {}  # (tree, segment, offset) -> index in the output

    def at(unit: int, seg: int, offset: int) -> int:
        return want.setdefault((unit, seg, offset), len(want))

    after = [at(u, s, len(units[u][s].tokens) - 1) for u, s in ends]  # after each context
    token_at = [
        [
            [] if seg is None else [at(seg[0], seg[1], j) for j in range(len(units[seg[0]][seg[1]].tokens))]
            for seg in per_q
        ]
        for per_q in tail_segs
    ]
    if store is not None:
        store.stats.computed += sum(len(s.tokens) for unit in units for s in unit)
    lp = tree_logits(model, units, list(want), cache, shared, policy)
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
) -> tuple[list[list[Segment]], list[tuple[int, int]], list[list[tuple[int, int] | None]]]:
    """The contexts as radix trees (shared heads once), each context's tails under it.

    The shuffles of a question list the same options in other orders, so their
    contexts share more than the chunk's common prefix: a context's tokens are
    run once per distinct head (identical contexts once), and identical tails of
    one context once.  Contexts that begin with different tokens are separate
    trees, laid side by side in the row.  Returns the units (segments with
    parents inside their unit, parents first), each context's last segment as
    ``(unit, segment)``, and each tail's segment (``None`` for an empty tail).
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
    tail_segs: list[list[tuple[int, int] | None]] = []
    seen: dict[tuple[int, int, tuple[int, ...]], int] = {}  # (unit, context node, tail) -> segment
    for q, options in enumerate(tails):
        u, node = ends[q]
        per_q: list[tuple[int, int] | None] = []
        for tail in options:
            if not tail:  # nothing to run (a one-token continuation, its last token dropped)
                per_q.append(None)
                continue
            key = (u, node, tuple(tail))
            if key not in seen:
                seen[key] = len(units[u])
                units[u].append(Segment(tail, node))
            per_q.append((u, seen[key]))
        tail_segs.append(per_q)
    return units, ends, tail_segs
