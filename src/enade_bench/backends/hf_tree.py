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
the same positions as option 1a.  Each tree's attention is computed on its own (one SDPA
call per tree on a CPU, :mod:`.hf_attention`; on CUDA one FlexAttention call per layer over
the row, whose block-sparse mask skips other questions' tiles, :mod:`.hf_flex`), so the row
needs no padding and no attention score between two questions is computed (on CUDA, but in
the tiles two neighbours share, masked); the model is called once per chunk, no key/value cache
is copied per option, the output layer runs only at the positions whose
next-token distribution is asked for, and a continuation's last token (whose
next-token distribution nobody asks for) is not run at all.

Beyond the chunk's common prefix, contexts are laid out as a radix tree
(:func:`radix_units`): the option orders of one question share the stem *and*
whatever leading options they list alike, identical contexts run once, and a
context's identical continuations once.
A tree that merges several contexts is attended block by block
(:func:`.hf_radix.attention_blocks`), so that no question costs more query--key
pairs than it would as its own tree, and the scored tokens' log-probabilities are
gathered on the device and read back once per call.

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
from typing import Any

import torch

from enade_bench.backends.hf_attention import TreeSpans, can_switch, tree_attention
from enade_bench.backends.hf_batching import BatchingPolicy
from enade_bench.backends.hf_device import to_device
from enade_bench.backends.hf_flex import flex_attention, row_plan
from enade_bench.backends.hf_prefix import PrefixStore, common_prefix_length, prefix_states
from enade_bench.backends.hf_radix import Block, Segment, attention_blocks, radix_units, unit_members

__all__ = [
    "Segment",
    "radix_units",
    "score_tree",
    "subtree_ends",
    "supports_tree",
    "tree_mask",
]


def supports_tree(model: Any) -> bool:
    """Whether :func:`score_tree` is exact for ``model`` (full attention, a switchable SDPA kernel)."""
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


def subtree_ends(segments: Sequence[Segment]) -> list[int]:
    """Where each segment's subtree ends in the tree's flat layout (exclusive).

    Every subtree must be one contiguous span (the tree laid out depth first, as
    :func:`radix_units` does): the segment before a child is its parent or one of the
    parent's descendants.  The flex path's mask is built on these ends (:mod:`.hf_flex`).
    """
    starts, _ = _layout(segments, 0)
    n = len(segments)
    last = list(range(n))
    for i in range(n - 1, -1, -1):
        up = segments[i].parent
        if up is not None:
            last[up] = max(last[up], last[i])
    for i, seg in enumerate(segments):
        node = None if seg.parent is None or i - 1 == seg.parent else segments[i - 1].parent
        while node is not None and node != seg.parent:
            node = segments[node].parent
        if seg.parent is not None and i - 1 != seg.parent and node != seg.parent:
            raise ValueError(
                f"segment {i}: its parent's subtree is not contiguous (lay the tree out depth first)"
            )
    return [starts[last[i]] + len(segments[last[i]].tokens) for i in range(n)]


def _tree_forward(
    model: Any,
    trees: Sequence[Sequence[Segment]],
    want: Sequence[tuple[int, int, int]],
    cache: Any,
    past: int,
    policy: BatchingPolicy | None,
    blocks: Sequence[Sequence[Block]] | None,
) -> torch.Tensor:
    """The float32 logits after the tokens ``want`` = ``(tree, segment, offset)``, in one model call.

    The trees are laid end to end in one row, with no padding; each tree attends to
    the ``past`` tokens of ``cache`` (batch 1; ``None``/0: none) and to itself only
    (:mod:`.hf_attention`): one attention call per tree (per block of ``blocks``, each
    tree's :func:`.hf_radix.attention_blocks`), or, under a policy with
    ``flex_attention`` (CUDA), one FlexAttention call over the whole row per layer
    (:mod:`.hf_flex`).  Returns ``len(want) × vocab``.
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
    if policy is None:
        policy = BatchingPolicy.for_device(device.type)
    extra: dict[str, Any]
    if policy.flex_attention:  # one kernel call per layer over the row, its BlockMask built once
        ends = [spans[t][0] + end for t, segments in enumerate(trees) for end in subtree_ends(segments)]
        sizes = [len(seg.tokens) for segments in trees for seg in segments]
        flex = row_plan(past, torch.repeat_interleave(torch.tensor(ends), torch.tensor(sizes)), device)
        flex.bind()
        attention, extra = flex_attention(model), {"flex_plan": flex}
    else:
        if blocks is None:
            masks = [tree_mask(segments, past).to(device) for segments in trees]
            plan = TreeSpans(spans, masks, past)
        else:
            plan = _block_spans(spans, blocks, past, device)
        attention, extra = tree_attention(model), {"tree_spans": plan}
    # The output layer runs at the wanted columns only: a pre-hook gathers them before the
    # model's own head (and whatever the model does after it, e.g. soft-capping).
    cols_at = to_device([spans[t][0] + layouts[t][0][s] + o for t, s, o in want], device)
    head = model.get_output_embeddings()
    hook = head.register_forward_pre_hook(lambda _module, args: (args[0][:, cols_at], *args[1:]))
    try:
        with attention:
            out = model(
                input_ids=to_device([ids], device),
                position_ids=to_device([positions], device),
                past_key_values=cache,
                use_cache=cache is not None,
                logits_to_keep=0,
                **extra,
            )
    finally:
        hook.remove()
    return out.logits[0].float()


def _block_spans(
    spans: Sequence[tuple[int, int]],
    blocks: Sequence[Sequence[Block]],
    past: int,
    device: torch.device,
) -> TreeSpans:
    """The trees' blocks as one :class:`TreeSpans` (row coordinates; keys prefix included)."""
    q_spans: list[tuple[int, int]] = []
    key_index: list[torch.Tensor] = []
    masks: list[torch.Tensor] = []
    prefix = torch.arange(past)
    for (offset, _), tree_blocks in zip(spans, blocks, strict=True):
        for block in tree_blocks:
            q_spans.append((offset + block.start, offset + block.end))
            ranges = [torch.arange(past + offset + a, past + offset + b) for a, b in block.keys]
            key_index.append(torch.cat([prefix, *ranges]))
            masks.append(block.mask)
    if device.type != "cpu":  # one transfer each, all before the model call
        masks = [m.to(device) for m in masks]
        key_index = [k.to(device) for k in key_index]
    return TreeSpans(q_spans, masks, past, key_index)


@torch.inference_mode()
def score_tree(
    model: Any,
    contexts: Sequence[Sequence[int]],
    tails: Sequence[Sequence[Sequence[int]]],
    store: PrefixStore | None = None,
    policy: BatchingPolicy | None = None,
) -> tuple[torch.Tensor, list[list[list[float]]]]:
    """Every context and its continuations in one model call.

    The contexts' common prefix is computed once (or taken from the run-wide
    ``store``); beyond it the contexts are radix trees with their continuations
    side by side (:func:`radix_units`), attended block by block so that no question
    costs more attention than alone (:func:`.hf_radix.attention_blocks`), and the
    trees run end to end in one row (:func:`_tree_forward`, its attention as ``policy``
    says).  The scored tokens' log-probabilities are gathered on the device and
    read back in one transfer.  Returns the log-softmax after each context's last
    token (``len(contexts) × vocab``) and each continuation's token log-probabilities.
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
    rows: list[int] = []  # per scored token: its row in the output, and the token
    targets: list[int] = []
    for q, options in enumerate(tails):
        for seg, tail in zip(tail_segs[q], options, strict=True):
            if not tail:
                raise ValueError(f"context {q}: an empty continuation has nothing to score")
            rows += [after[q]] + (
                [] if seg is None else [at(seg[0], seg[1], j) for j in range(len(tail) - 1)]
            )
            targets += list(tail)
    if store is not None:
        store.stats.computed += sum(len(s.tokens) for unit in units for s in unit)
    device = next(model.parameters()).device
    if policy is None:
        policy = BatchingPolicy.for_device(device.type)
    blocks = None  # the flex path attends the whole row in one call: no blocks to plan
    if not policy.flex_attention:
        members = unit_members(len(units), ends, tail_segs)
        blocks = [attention_blocks(unit, member, shared) for unit, member in zip(units, members, strict=True)]
    rows_at, targets_at, after_at = (to_device(v, device) for v in (rows, targets, after))  # before the call
    logits = _tree_forward(model, units, list(want), cache, shared, policy, blocks)
    norm = torch.logsumexp(logits, dim=-1)
    flat = (logits[rows_at, targets_at] - norm[rows_at]).tolist()  # the one transfer to the host
    scores: list[list[list[float]]] = []
    read = 0
    for options in tails:
        per_q = []
        for tail in options:
            per_q.append(flat[read : read + len(tail)])
            read += len(tail)
        scores.append(per_q)
    return logits[after_at] - norm[after_at, None], scores
