"""The decode cache holds a shared prefix once; each decode step reads each row's live tiles only.

Measured from outside (issue 49, item 3 and its Targets): every FlexAttention call whose queries
are decode-like (at most 64 query tokens, however the rows are packed into batch and length) is
intercepted; its BlockMask's admitted key tiles are counted against the tiles that hold a key its
own ``mask_mod`` lets a query of the tile see (the mask evaluated element by element, not read
from our vectors), and its keys are searched for the prefill's prefix keys (a copy of the prefix
in a row would show as a second match).  The CUDA policy runs on the CPU with a two-layer Llama.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch
from tests.backends.test_hf_packed import CPU, CUDA, _llama, enem_chunks  # noqa: F401 (a fixture)
from torch.nn.attention.flex_attention import create_mask
from transformers import LlamaConfig, LlamaForCausalLM

from enade_bench.backends import hf_flex
from enade_bench.backends.base import GenerationParams
from enade_bench.backends.hf_generate import generate_shared
from enade_bench.backends.hf_prefix import PrefixStore, common_prefix_length

BLOCK = hf_flex.BLOCK


def _signatures(keys: torch.Tensor) -> torch.Tensor:
    """One exact integer per key column (``batch·columns``): identical vectors, identical numbers."""
    bits = keys.detach().float().permute(0, 2, 1, 3).reshape(-1, keys.shape[1] * keys.shape[3])
    weights = torch.randint(1, 2**31, (bits.shape[1],), generator=torch.Generator().manual_seed(0))
    return (bits.view(torch.int32).long() * weights).sum(-1)


@dataclass
class DecodeCalls:
    """What the intercepted calls showed: per decode-like call, admitted and live tiles, prefix copies."""

    admitted: list[int] = field(default_factory=list)
    live: list[int] = field(default_factory=list)
    skipped_live: int = 0  # live tiles the BlockMask left out (wrong answers, not just slow ones)
    prefix_copies: list[int] = field(default_factory=list)
    key_columns: list[int] = field(default_factory=list)  # batch x columns of each call's keys
    prefix: list[torch.Tensor] = field(default_factory=list)  # the prefill calls' prefix keys

    def ratio(self) -> float:
        return sum(self.admitted) / sum(self.live)


def _tiles(mask: Any, batch: int) -> torch.Tensor:
    """``batch × q-blocks × kv-blocks``: the tiles a BlockMask admits (partial or full)."""
    num, idx = mask.kv_num_blocks.expand(batch, -1, -1), mask.kv_indices.expand(batch, -1, -1, -1)
    fnum, fidx = mask.full_kv_num_blocks.expand(batch, -1, -1), mask.full_kv_indices.expand(batch, -1, -1, -1)
    out = torch.zeros((batch, num.shape[-1], idx.shape[-1]), dtype=torch.bool)
    for b in range(batch):
        for qb in range(num.shape[-1]):
            out[b, qb, idx[b, 0, qb, : num[b, 0, qb]].long()] = True
            out[b, qb, fidx[b, 0, qb, : fnum[b, 0, qb]].long()] = True
    return out


@contextmanager
def _intercepted(monkeypatch: pytest.MonkeyPatch, shared: int) -> Iterator[DecodeCalls]:
    """Every ``flex_attention`` call of :func:`.hf_flex.kernel`, measured (module docstring)."""
    calls = DecodeCalls()
    real = hf_flex.kernel

    def kernel(device):  # type: ignore[no-untyped-def]
        def spy(query, key, value, **kwargs):  # type: ignore[no-untyped-def]
            mask = kwargs["block_mask"]
            batch, q_len, kv_len = query.shape[0], query.shape[2], key.shape[2]
            if batch * q_len > 64:  # a prefill: its first ``shared`` keys are the prefix's
                calls.prefix.append(_signatures(key[:, :, :shared]))
                return real(device)(query, key, value, **kwargs)
            dense = create_mask(mask.mask_mod, batch, 1, q_len, kv_len, device="cpu")[:, 0]
            qb, kb = -(-q_len // BLOCK), -(-kv_len // BLOCK)
            grid = torch.zeros((batch, qb * BLOCK, kb * BLOCK), dtype=torch.bool)
            grid[:, :q_len, :kv_len] = dense
            live = grid.view(batch, qb, BLOCK, kb, BLOCK).any(dim=(2, 4))
            admitted = _tiles(mask, batch)[..., :kb]
            calls.admitted.append(int(admitted.sum()))
            calls.live.append(int(live.sum()))
            calls.skipped_live += int((live & ~admitted).sum())
            found = torch.isin(_signatures(key), torch.cat(calls.prefix)).sum()
            calls.prefix_copies.append(int(found) - shared)
            calls.key_columns.append(key.shape[0] * kv_len)
            return real(device)(query, key, value, **kwargs)

        return spy

    monkeypatch.setattr(hf_flex, "kernel", kernel)
    yield calls
    monkeypatch.undo()


def test_a_shared_prefix_is_held_once_and_each_row_reads_its_live_tiles(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A 964-token prefix (S3's few-shot block) and 8 rows of 3 to 300 own tokens: 0 copies of the
    prefix in the decode cache, whose columns are the prefix once plus each row's own tokens and
    steps (not rows × (prefix + longest + steps)); every row reads its live tiles only."""
    model = _llama()
    rng = random.Random(11)
    head = [rng.randrange(1, 512) for _ in range(964)]
    seqs = [head + [rng.randrange(1, 512) for _ in range(rng.choice([3, 40, 300]))] for _ in range(8)]
    params = GenerationParams(max_new_tokens=4)
    shared = common_prefix_length(seqs)
    with _intercepted(monkeypatch, shared) as calls:
        got = generate_shared(model, seqs, params, 0, set(), PrefixStore(), CUDA)
    assert got == generate_shared(model, seqs, params, 0, set(), PrefixStore(), CPU)
    steps = params.max_new_tokens - 1
    assert len(calls.admitted) == model.config.num_hidden_layers * steps
    assert calls.prefix_copies == [0] * len(calls.admitted)  # the prefix found once, in one row
    own = shared + sum(len(s) - shared + steps for s in seqs)  # the prefix once, each row's own columns
    assert all(own <= c < own + BLOCK for c in calls.key_columns), (calls.key_columns, own)
    longest = max(len(s) for s in seqs) - shared
    assert calls.key_columns[0] < len(seqs) * (shared + longest + steps) / 4  # it was that, per row
    assert calls.skipped_live == 0 and calls.ratio() <= 1.1, calls.ratio()


def test_decode_reads_live_tiles_only_on_sixteen_enem_questions(enem_chunks, monkeypatch) -> None:  # type: ignore[no-untyped-def]  # noqa: F811 (the fixture)
    """The Targets' outside check: S1 on 16 ENEM questions of mixed length, every decode-like call:
    admitted key tiles at most 1.1x the live ones, nothing live skipped, 0 prefix copies, and the
    CUDA policy's tokens the CPU policy's on all 16 questions."""
    seqs = enem_chunks["S1"][:16]
    lengths = sorted(len(s) for s in seqs)
    assert lengths[-1] > 2 * lengths[0]  # mixed lengths
    # SmolLM2's vocabulary, two layers of 2 query heads and 1 KV head: eager FlexAttention on the CPU
    # scores every query-key pair of the ~10,700-token prefill row, per head (the counts need no more).
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=49152,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        attn_implementation="sdpa",
    )  # type: ignore[call-arg]
    model = LlamaForCausalLM(config).eval()
    params = GenerationParams(max_new_tokens=4)
    shared = common_prefix_length(seqs)
    with _intercepted(monkeypatch, shared) as calls:
        got = generate_shared(model, seqs, params, 0, set(), PrefixStore(), CUDA)
    want = generate_shared(model, seqs, params, 0, set(), PrefixStore(), CPU)
    assert sum(g == w for g, w in zip(got, want, strict=True)) == 16
    assert len(calls.admitted) == model.config.num_hidden_layers * (params.max_new_tokens - 1)
    assert calls.skipped_live == 0 and calls.ratio() <= 1.1, calls.ratio()
    assert calls.prefix_copies == [0] * len(calls.admitted)
