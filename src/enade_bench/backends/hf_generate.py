"""Greedy or sampled decoding for decoder-only models, sharing the common prompt prefix.

``model.generate`` recomputes every prompt in full.  In an exam run the prompts of a
batch share a long prefix — the system message and instruction, and in one/few-shot
prompts the worked examples, which are most of the prompt; the shuffles of one
question also share the stem.  Here that prefix is run once, its key/value cache is
repeated over the batch, the differing suffixes are run as one right-padded batch,
and decoding continues from each row's own last token (explicit position ids, the
padding masked out).  Rows in families with different long prefixes are prefilled as
groups; whether the groups then decode in one loop (CUDA) or one loop each (CPU) is the
device's :class:`.BatchingPolicy`.  Under the CUDA policy, greedy chunks take another path:
one packed prefill call and one decode loop on a preallocated cache (:mod:`.hf_packed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from enade_bench.backends.base import GenerationParams
from enade_bench.backends.hf_batching import BatchingPolicy
from enade_bench.backends.hf_packed import append_new_tokens, generate_packed, packable
from enade_bench.backends.hf_prefix import (
    PrefixStore,
    common_prefix_length,
    plain_cache,
    prefix_groups,
    prefix_states,
)

__all__ = ["generate_shared", "merge_starts", "prefill"]


@torch.inference_mode()
def prefill(
    model: Any,
    seqs: Sequence[Sequence[int]],
    shared: int,
    pad_id: int,
    keep: list[int] | None,
    store: PrefixStore | None = None,
) -> tuple[Any, torch.Tensor | None, torch.Tensor | None, torch.Tensor]:
    """Run ``seqs`` with their first ``shared`` tokens computed once.

    With a ``store`` (the run-wide prefix cache) the shared part is taken from it as
    far as it holds it, and stored in turn for later calls (:func:`.prefix_states`).

    Returns ``(cache, prefix_logits, logits, mask)``: the key/value cache of the whole
    batch, the logits after the shared prefix (``None`` if ``shared == 0``), the logits
    at suffix offsets ``keep`` (shape ``batch × len(keep) × vocab``; all offsets when
    ``keep`` is ``None``) and the attention mask over the cache.
    """
    device = next(model.parameters()).device
    batch = len(seqs)
    cache, prefix_logits = None, None
    if shared >= 1:
        cache, prefix_logits = prefix_states(model, seqs[0][:shared], store, logits=True)
        cache.batch_repeat_interleave(batch)
    suffixes = [list(s[shared:]) for s in seqs]
    width = max(len(s) for s in suffixes)
    ids = torch.tensor([s + [pad_id] * (width - len(s)) for s in suffixes], device=device)
    mask = torch.tensor([[1] * (shared + len(s)) + [0] * (width - len(s)) for s in suffixes], device=device)
    logits = None
    if keep is None or keep:
        out = model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=torch.arange(shared, shared + width, device=device).expand(batch, -1),
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=0 if keep is None else torch.tensor(keep, device=device),
        )
        cache = out.past_key_values
        logits = out.logits.float()
    return cache, prefix_logits, logits, mask


@torch.inference_mode()
def generate_shared(
    model: Any,
    seqs: Sequence[Sequence[int]],
    params: GenerationParams,
    pad_id: int,
    eos_ids: set[int],
    store: PrefixStore | None = None,
    policy: BatchingPolicy | None = None,
) -> list[list[int]]:
    """New token ids for each sequence (``n_samples`` rows per sequence when sampling).

    Greedy, under a policy with ``packed_prefill`` (CUDA), on a model that allows it
    (:func:`.packable`): one prefill call for the chunk and one decode loop on a preallocated
    cache (:func:`.generate_packed`).  Otherwise rows that fall into families with different
    long prefixes (:func:`.prefix_groups`, with the ``policy``'s split cost) are prefilled as
    separate groups, each sharing its
    own prefix.  Under a policy with ``shared_decode`` (CUDA) greedy groups then decode
    in one loop, their caches padded to one length (:func:`merge_starts`); otherwise
    (CPU, or sampling, whose draws depend on the rows of a loop) each group decodes in
    its own loop.  ``policy`` defaults to the model's device's
    (:meth:`.BatchingPolicy.for_device`).
    """
    if policy is None:
        policy = BatchingPolicy.for_device(next(model.parameters()).device.type)
    sampling = params.temperature is not None and params.temperature > 0
    if policy.packed_prefill and not sampling and len(seqs) > 1 and packable(model):
        return generate_packed(model, seqs, params, pad_id, eos_ids, store, policy)
    per = params.n_samples if sampling else 1
    groups = prefix_groups(seqs, policy.split_cost) if len(seqs) > 1 else [list(range(len(seqs)))]
    if len(groups) == 1:
        return _decode(model, _start(model, seqs, per, pad_id, store), params, pad_id, eos_ids)
    out: list[list[int]] = [[] for _ in range(len(seqs) * per)]
    if policy.shared_decode and not sampling and plain_cache(model):
        starts = [_start(model, [seqs[i] for i in group], per, pad_id, store) for group in groups]
        tokens = _decode(model, merge_starts(starts), params, pad_id, eos_ids)
        order = [i for group in groups for i in group]
        for j, i in enumerate(order):
            out[i] = tokens[j]
        return out
    for group in groups:
        start = _start(model, [seqs[i] for i in group], per, pad_id, store)
        tokens = _decode(model, start, params, pad_id, eos_ids)
        for j, i in enumerate(group):
            out[i * per : (i + 1) * per] = tokens[j * per : (j + 1) * per]
    return out


@dataclass
class Start:
    """A prefilled batch, ready to decode: its cache, mask, next-token logits and row lengths."""

    cache: Any
    mask: torch.Tensor
    step: torch.Tensor
    lengths: list[int]


def _start(
    model: Any, seqs: Sequence[Sequence[int]], per: int, pad_id: int, store: PrefixStore | None
) -> Start:
    """Prefill one group of rows sharing their common prefix (``per`` rows per sequence)."""
    rows = [list(s) for s in seqs for _ in range(per)]
    lengths = [len(r) for r in rows]
    shared = min(common_prefix_length(rows), min(lengths) - 1)
    last = sorted({n - 1 - shared for n in lengths})
    cache, _, logits, mask = prefill(model, rows, shared, pad_id, last, store)
    assert logits is not None
    index = {k: j for j, k in enumerate(last)}
    step = torch.stack([logits[i, index[n - 1 - shared]] for i, n in enumerate(lengths)])
    return Start(cache, mask, step, lengths)


def merge_starts(starts: Sequence[Start]) -> Start:
    """One batch of several prefilled groups: caches right-padded to one length, padding masked.

    Each row keeps exactly its own keys and values at its own positions; the padding
    columns are masked out, so decoding the merged batch gives each row what decoding
    its own group gives (up to floating-point summation order).
    """
    from transformers import DynamicCache  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    width = max(s.mask.shape[1] for s in starts)

    def pad(t: torch.Tensor, dim: int) -> torch.Tensor:
        missing = width - t.shape[dim]
        if not missing:
            return t
        shape = list(t.shape)
        shape[dim] = missing
        return torch.cat([t, t.new_zeros(shape)], dim=dim)

    layers = [
        (
            torch.cat([pad(s.cache.layers[i].keys, 2) for s in starts]),
            torch.cat([pad(s.cache.layers[i].values, 2) for s in starts]),
        )
        for i in range(len(starts[0].cache.layers))
    ]
    return Start(
        cache=DynamicCache(ddp_cache_data=layers),
        mask=torch.cat([pad(s.mask, 1) for s in starts]),
        step=torch.cat([s.step for s in starts]),
        lengths=[n for s in starts for n in s.lengths],
    )


def _decode(
    model: Any, start: Start, params: GenerationParams, pad_id: int, eos_ids: set[int]
) -> list[list[int]]:
    """Decode a prefilled batch: greedy or sampled, until ``max_new_tokens`` or every row's EOS."""
    sampling = params.temperature is not None and params.temperature > 0
    cache, mask, step, lengths = start.cache, start.mask, start.step, start.lengths
    device = mask.device
    generator = torch.Generator(device="cpu").manual_seed(params.seed)
    n = len(lengths)
    out: list[list[int]] = [[] for _ in range(n)]
    finished = [False] * n
    position = torch.tensor(lengths, device=device)[:, None]
    for t in range(params.max_new_tokens):
        if sampling:
            probs = torch.softmax(step / float(params.temperature or 1.0), dim=-1).cpu()
            tokens = torch.multinomial(probs, 1, generator=generator)[:, 0].tolist()
        else:
            tokens = step.argmax(dim=-1).tolist()
        if append_new_tokens(tokens, eos_ids, out, finished) or t == params.max_new_tokens - 1:
            break
        feed = torch.tensor([[pad_id if finished[i] else tokens[i]] for i in range(n)], device=device)
        mask = torch.cat([mask, torch.ones((n, 1), dtype=mask.dtype, device=device)], dim=1)
        result = model(
            input_ids=feed,
            attention_mask=mask,
            position_ids=position + t,
            past_key_values=cache,
            use_cache=True,
        )
        cache = result.past_key_values
        step = result.logits[:, -1].float()
    return out
