"""Greedy generation of a chunk in one prefill call and one decode loop (:mod:`.hf_slots`).

Model calls per chunk: at most one for the prefix up to its last whole block (none once the
run-wide store holds it), one for the rest of the prefix and every question packed in one
row, and one per new token after the first.  Positions fed: the prefix once and each
question's own tokens once, no padding.  Each row decodes from its own last token at its
own position; the keys and values of a step are written in place in the preallocated cache.

Every attention of the prefill and of a decode step is one FlexAttention call per layer
(:mod:`.hf_flex`), its block mask built once for the prefill and, on the device, after each
decode step's columns are written: each row reads the prefix's tiles (held once, not once per
row: :mod:`.hf_slots`) and the tiles of its own columns written so far, and the shapes stay
the same for the chunk.  The loop reads nothing back per step but whether every row has ended,
every :data:`EOS_CHECK_EVERY` steps; host tensors reach the device through
:func:`.hf_device.to_device` (pinned, non-blocking on CUDA).  With :attr:`.BatchingPolicy.compile_decode` the
decode step runs through ``torch.compile`` (:data:`COMPILE_OPTIONS`: CUDA graphs).  It is off by default: it pays only where the
fixed cost of a step's ~2,000 kernel launches outweighs a compilation per cache shape, which
has to be measured on a card (``python -m bench --device cuda --compile-decode``).  It is
traced with dynamic shapes and no duck sizing (one graph for every cache width after a first one,
the padded decode batch a constant: one per batch; CUDA graphs record one replay per shape), and the cache's width is rounded to a power
of two of blocks then (:func:`cache_width`), so chunks share a few of those recordings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from enade_bench.backends.base import GenerationParams
from enade_bench.backends.hf_batching import BatchingPolicy
from enade_bench.backends.hf_device import to_device
from enade_bench.backends.hf_flex import BLOCK, flex_attention, row_plan, unducked
from enade_bench.backends.hf_prefix import PrefixStore, common_prefix_length, plain_cache, prefix_states
from enade_bench.backends.hf_slots import SlotCache, decode_rows
from enade_bench.backends.hf_tree import supports_tree

#: ``torch.compile`` options of the decode step under ``BatchingPolicy.compile_decode``: CUDA graphs
#: (``reduce-overhead``), dynamic shapes (the cache width a symbol; the padded decode batch a constant).
COMPILE_OPTIONS: dict[str, Any] = {"mode": "reduce-overhead", "dynamic": True}


#: The decode loop reads back whether every row has ended once every this many steps (a sync).
EOS_CHECK_EVERY = 4


def cache_width(columns: int, compiled: bool) -> int:
    """The decode cache's width for ``columns`` written: whole blocks, at least 2 (a count of 1 is a
    shape Dynamo specialises: a chunk that short would compile the kernel again); with
    ``compile_decode`` a power of two of blocks, so that chunks share a few shapes (a CUDA graph
    recorded for each) instead of one apiece."""
    blocks = max(2, -(-columns // BLOCK))
    return (1 << (blocks - 1).bit_length() if compiled else blocks) * BLOCK


def compiled(model: Any) -> Any:
    """``model`` compiled with :data:`COMPILE_OPTIONS` (once per model object)."""
    key = repr(sorted(COMPILE_OPTIONS.items()))
    found = getattr(model, "_enade_compiled", None)
    if found is None or found[0] != key:
        found = (key, unducked(torch.compile(model, **COMPILE_OPTIONS)))
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
    steps = max(params.max_new_tokens - 1, 0)
    rows = decode_rows(n)  # the decode batch, padded (:mod:`.hf_slots`)
    width = cache_width(shared + sum(own) + n * steps + rows - n, policy.compile_decode)
    cache = SlotCache.for_rows(shared, own, steps, width, device, past=past_cache)
    # The prefix's rest is the parent of every question (its keys reach the row's end); each
    # question's keys reach its own end: the packed row's mask (:mod:`.hf_flex`).
    head = len(rest)
    reach = torch.repeat_interleave(
        torch.tensor([len(row)] + [head + end for _, end in spans]), torch.tensor([head, *own])
    )
    prefill = row_plan(past, reach, device, kind="prefill")
    if store is not None:
        store.stats.computed += len(row)
    # Each question's last token in the row (a padding row: the last question's), its position.
    last = to_device([head + end - 1 for _, end in spans] + [head + spans[-1][1] - 1] * (rows - n), device)
    position = to_device(lengths + [lengths[-1]] * (rows - n), device)[:, None]
    new = torch.empty((rows, params.max_new_tokens), dtype=torch.long, device=device)
    finished = torch.arange(rows, device=device) >= n  # a padding row has ended before it begins
    eos = to_device(sorted(eos_ids), device)
    forward = compiled(model) if policy.compile_decode else model
    with flex_attention(model):
        prefill.bind()
        result = model(
            input_ids=to_device([row], device),
            position_ids=to_device([positions], device),
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=last,
            flex_plan=prefill,
        )
        step = result.logits[0].float()
        t = 0
        for t in range(params.max_new_tokens):  # no read-back but the end-of-sequence check
            tokens = step.argmax(dim=-1)
            new[:, t] = tokens
            finished |= torch.isin(tokens, eos)
            if t == params.max_new_tokens - 1 or ((t + 1) % EOS_CHECK_EVERY == 0 and bool(finished.all())):
                break
            decode = cache.advance(t)  # each row's column of the step; the prefix's tiles and its own
            decode.bind()
            feed, at = torch.where(finished, pad_id, tokens)[:, None], position + t
            if policy.compile_decode:  # the batch a constant of the graph, as in :mod:`.hf_flex`
                torch._dynamo.mark_static(feed, 0)
                torch._dynamo.mark_static(at, 0)
            result = forward(
                input_ids=feed,
                position_ids=at,
                past_key_values=cache,
                use_cache=True,
                flex_plan=decode,
            )
            step = result.logits[:, -1].float()
    out: list[list[int]] = [[] for _ in range(n)]
    done = [False] * n
    for tokens_t in new[:n, : t + 1].T.tolist():  # the one read-back of the chunk's tokens
        append_new_tokens(tokens_t, eos_ids, out, done)
    return out
