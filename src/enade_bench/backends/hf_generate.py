"""Greedy or sampled decoding for decoder-only models, sharing the common prompt prefix.

``model.generate`` recomputes every prompt in full.  In an exam run the prompts of a
batch share a long prefix — the system message and instruction, and in one/few-shot
prompts the worked examples, which are most of the prompt; the shuffles of one
question also share the stem.  Here that prefix is run once, its key/value cache is
repeated over the batch, the differing suffixes are run as one right-padded batch,
and decoding continues from each row's own last token (explicit position ids, the
padding masked out).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from enade_bench.backends.base import GenerationParams
from enade_bench.backends.hf_prefix import PrefixStore, common_prefix_length, prefix_groups, prefix_states

__all__ = ["common_prefix_length", "generate_shared", "prefill"]


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
) -> list[list[int]]:
    """New token ids for each sequence (``n_samples`` rows per sequence when sampling).

    Rows that fall into families with different long prefixes (:func:`.prefix_groups`)
    decode as separate groups, each sharing its own prefix.
    """
    sampling = params.temperature is not None and params.temperature > 0
    per = params.n_samples if sampling else 1
    groups = prefix_groups(seqs) if len(seqs) > 1 else [list(range(len(seqs)))]
    if len(groups) > 1:
        out: list[list[int]] = [[] for _ in range(len(seqs) * per)]
        for group in groups:
            tokens = _generate_group(model, [seqs[i] for i in group], params, pad_id, eos_ids, store)
            for j, i in enumerate(group):
                out[i * per : (i + 1) * per] = tokens[j * per : (j + 1) * per]
        return out
    return _generate_group(model, seqs, params, pad_id, eos_ids, store)


def _generate_group(
    model: Any,
    seqs: Sequence[Sequence[int]],
    params: GenerationParams,
    pad_id: int,
    eos_ids: set[int],
    store: PrefixStore | None,
) -> list[list[int]]:
    """:func:`generate_shared` on one group of rows sharing their common prefix."""
    sampling = params.temperature is not None and params.temperature > 0
    per = params.n_samples if sampling else 1
    rows = [list(s) for s in seqs for _ in range(per)]
    lengths = [len(r) for r in rows]
    shared = min(common_prefix_length(rows), min(lengths) - 1)
    last = sorted({n - 1 - shared for n in lengths})
    cache, _, logits, mask = prefill(model, rows, shared, pad_id, last, store)
    assert logits is not None
    index = {k: j for j, k in enumerate(last)}
    step = torch.stack([logits[i, index[n - 1 - shared]] for i, n in enumerate(lengths)])
    device = mask.device
    generator = torch.Generator(device="cpu").manual_seed(params.seed)
    out: list[list[int]] = [[] for _ in rows]
    finished = [False] * len(rows)
    position = torch.tensor(lengths, device=device)[:, None]
    for t in range(params.max_new_tokens):
        if sampling:
            probs = torch.softmax(step / float(params.temperature or 1.0), dim=-1).cpu()
            tokens = torch.multinomial(probs, 1, generator=generator)[:, 0].tolist()
        else:
            tokens = step.argmax(dim=-1).tolist()
        for i, token in enumerate(tokens):
            if not finished[i]:
                if token in eos_ids:
                    finished[i] = True
                else:
                    out[i].append(int(token))
        if all(finished) or t == params.max_new_tokens - 1:
            break
        feed = torch.tensor([[pad_id if finished[i] else tokens[i]] for i in range(len(rows))], device=device)
        mask = torch.cat([mask, torch.ones((len(rows), 1), dtype=mask.dtype, device=device)], dim=1)
        result = model(input_ids=feed, attention_mask=mask, position_ids=position + t,
                       past_key_values=cache, use_cache=True)  # fmt: skip
        cache = result.past_key_values
        step = result.logits[:, -1].float()
    return out
