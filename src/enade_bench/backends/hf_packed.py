"""Greedy generation of a chunk in one prefill call and one decode loop (:mod:`.hf_slots`).

Model calls per chunk: at most one for the prefix up to its last whole block (none once the
run-wide store holds it), one for the rest of the prefix and every question packed in one
row, and one per new token after the first.  Positions fed: the prefix once and each
question's own tokens once, no padding.  Each row decodes from its own last token at its
own position; the keys and values of a step are written in place in the preallocated cache.

Every attention of the prefill and of a decode step is one FlexAttention call per layer
(:mod:`.hf_flex`), its block mask built once for the prefill and once for the whole decode;
every decode step attends over the whole preallocated width (the unused columns masked), so
the shapes stay the same for the chunk.  With :attr:`.BatchingPolicy.compile_decode` the
decode step runs through ``torch.compile`` (:data:`COMPILE_OPTIONS`: CUDA graphs).  It is off by default: it pays only where the
fixed cost of a step's ~2,000 kernel launches outweighs a compilation per cache shape, which
has to be measured on a card (``enade-bench bench --device cuda --compile-decode``); the cache's
width is rounded to a power of two of blocks then (:func:`cache_width`), so chunks share a few
graphs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from enade_bench.backends.base import GenerationParams
from enade_bench.backends.hf_batching import BatchingPolicy
from enade_bench.backends.hf_flex import (
    BLOCK,
    FlexPlan,
    decode_block_mask,
    flex_attention,
    padded_width,
    row_plan,
)
from enade_bench.backends.hf_prefix import PrefixStore, common_prefix_length, plain_cache, prefix_states
from enade_bench.backends.hf_slots import SlotCache

#: ``torch.compile`` options of the decode step under ``BatchingPolicy.compile_decode``: CUDA graphs
#: (``reduce-overhead``), static shapes (the cache widths of :func:`cache_width`: a few shapes in all).
COMPILE_OPTIONS: dict[str, Any] = {"mode": "reduce-overhead", "dynamic": False}


def cache_width(columns: int, compiled: bool) -> int:
    """The decode cache's width for ``columns`` written: whole blocks, at least 2 (a count of 1 is a
    shape Dynamo specialises: a chunk that short would compile the kernel again); with
    ``compile_decode`` a power of two of blocks, so that chunks share a few shapes (static shapes:
    one graph each) instead of one apiece."""
    blocks = max(2, -(-columns // BLOCK))
    return (1 << (blocks - 1).bit_length() if compiled else blocks) * BLOCK


def compiled(model: Any) -> Any:
    """``model`` compiled with :data:`COMPILE_OPTIONS` (once per model object)."""
    key = repr(sorted(COMPILE_OPTIONS.items()))
    found = getattr(model, "_enade_compiled", None)
    if found is None or found[0] != key:
        found = (key, torch.compile(model, **COMPILE_OPTIONS))
        model._enade_compiled = found
    return found[1]


def append_new_tokens(
    tokens: list[int], eos_ids: set[int], out: list[list[int]], finished: list[bool]
) -> bool:
    """One decode step's tokens into each unfinished row (an EOS finishes it); whether all are finished."""
    for i, token in enumerate(tokens):
        if not finished[i]:
            if token in eos_ids:
                finished[i] = True
            else:
                out[i].append(int(token))
    return all(finished)


def packable(model: Any) -> bool:
    """Whether :func:`generate_packed` is exact for ``model`` (full attention, SDPA, switchable).

    A model split over several devices (``device_map``) is not: the plan's tensors live on one.
    """
    from enade_bench.backends.hf_tree import supports_tree  # noqa: PLC0415 (the same conditions)

    devices = set((getattr(model, "hf_device_map", None) or {}).values())
    return len(devices) <= 1 and supports_tree(model) and plain_cache(model)


@torch.inference_mode()
def generate_packed(
    model: Any,
    seqs: Sequence[Sequence[int]],
    params: GenerationParams,
    pad_id: int,
    eos_ids: set[int],
    store: PrefixStore | None,
    policy: BatchingPolicy,
) -> list[list[int]]:
    """Greedy new token ids for each sequence: one prefill call, one decode loop (module docstring)."""
    device = next(model.parameters()).device
    n = len(seqs)
    lengths = [len(s) for s in seqs]
    shared = min(common_prefix_length(seqs), min(lengths) - 1)
    past_cache, past = None, 0
    if store is not None and store.cut(shared):
        past = store.cut(shared)
        past_cache = prefix_states(model, seqs[0][:past], store, logits=False)[0]
    rest = list(seqs[0][past:shared])
    row, positions, spans = list(rest), list(range(past, shared)), []
    for s in seqs:
        start = len(row) - len(rest)
        row += s[shared:]
        positions += range(shared, len(s))
        spans.append((start, start + len(s) - shared))
    own = [end - start for start, end in spans]
    room = max(own)
    steps = max(params.max_new_tokens - 1, 0)
    gather = torch.tensor(
        [[start + min(j, m - 1) for j in range(room)] for (start, _), m in zip(spans, own, strict=True)]
    )
    width = cache_width(shared + room + steps, policy.compile_decode)
    cache = SlotCache(
        rows=n, width=width, prefix=shared, room=room, past=past_cache, gather=gather.to(device)
    )
    # The prefix's rest is the parent of every question (its keys reach the row's end); each
    # question's keys reach its own end: the packed row's mask (:mod:`.hf_flex`).
    head = len(rest)
    reach = [len(row)] * head + [head + end for start, end in spans for _ in range(start, end)]
    prefill = row_plan(past, reach, device)
    if store is not None:
        store.stats.computed += len(row)
    last = torch.tensor([len(rest) + end - 1 for _, end in spans], device=device)
    valid = torch.zeros((n, padded_width(cache.width)), dtype=torch.bool, device=device)
    valid[:, :shared] = True
    for i, m in enumerate(own):
        valid[i, shared : shared + m] = True
    out: list[list[int]] = [[] for _ in range(n)]
    finished = [False] * n
    position = torch.tensor(lengths, device=device)[:, None]
    forward = compiled(model) if policy.compile_decode else model
    with flex_attention(model):
        prefill.bind()
        result = model(input_ids=torch.tensor([row], device=device), position_ids=torch.tensor([positions], device=device),
                       past_key_values=cache, use_cache=True, logits_to_keep=last, flex_plan=prefill)  # fmt: skip
        step = result.logits[0].float()
        decode = FlexPlan(decode_block_mask(n, cache.width, device), valid=valid)
        decode.bind()
        cache.limit = cache.width  # every step the same shapes: the whole width, its unused columns masked
        for t in range(params.max_new_tokens):
            tokens = step.argmax(dim=-1).tolist()
            if append_new_tokens(tokens, eos_ids, out, finished) or t == params.max_new_tokens - 1:
                break
            column = shared + room + t
            cache.cursor = torch.tensor([column], device=device)
            valid[:, column] = True
            feed = torch.tensor([[pad_id if finished[i] else tokens[i]] for i in range(n)], device=device)
            result = forward(input_ids=feed, position_ids=position + t, past_key_values=cache, use_cache=True,
                           flex_plan=decode)  # fmt: skip
            step = result.logits[:, -1].float()
    return out
