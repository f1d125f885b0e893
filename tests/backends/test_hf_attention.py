"""Attention per tree: equal to one SDPA call over the row with the block-diagonal mask."""

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from enade_bench.backends.hf_attention import (
    TREE_ATTENTION,
    TreeSpans,
    can_switch,
    tree_attention,
    tree_attention_forward,
)
from enade_bench.backends.hf_tree import Segment, tree_mask


def _tiny_llama() -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        attn_implementation="sdpa",
    )
    return LlamaForCausalLM(config).eval()


def test_per_tree_attention_equals_the_masked_row() -> None:
    """Two trees after 3 cached tokens: the same output as the whole row with its full mask."""
    torch.manual_seed(1)
    past = 3
    trees = [[Segment([1, 2, 3]), Segment([4, 5], 0), Segment([6], 0)], [Segment([7, 8])]]
    lengths = [6, 2]
    width = sum(lengths)
    query = torch.randn(1, 4, width, 8)
    key, value = torch.randn(1, 2, past + width, 8), torch.randn(1, 2, past + width, 8)
    full = torch.zeros(width, past + width, dtype=torch.bool)
    full[:, :past] = True
    spans, masks, start = [], [], 0
    for segments, n in zip(trees, lengths, strict=True):
        mask = tree_mask(segments, past)
        full[start : start + n, past + start : past + start + n] = mask[:, past:]
        spans.append((start, start + n))
        masks.append(mask)
        start += n
    module = torch.nn.Module()
    module.num_key_value_groups = 2  # type: ignore[assignment]
    got, _ = tree_attention_forward(module, query, key, value, None, tree_spans=TreeSpans(spans, masks, past))
    want, _ = tree_attention_forward(module, query, key, value, full[None, None])  # plain SDPA
    assert got.shape == (1, width, 4, 8)
    assert torch.allclose(got, want, atol=1e-6)


def test_one_row_only() -> None:
    module = torch.nn.Module()
    module.num_key_value_groups = 1  # type: ignore[assignment]
    q = torch.randn(2, 1, 2, 4)
    with pytest.raises(ValueError, match="one row"):
        tree_attention_forward(module, q, q, q, None, tree_spans=TreeSpans([(0, 2)], [torch.ones(2, 2)], 0))


def test_switched_on_for_the_block_only() -> None:
    model = _tiny_llama()
    assert can_switch(model)
    with tree_attention(model):
        assert model.config._attn_implementation == TREE_ATTENTION
        out = model(input_ids=torch.tensor([[1, 2, 3]])).logits  # no tree_spans: plain SDPA
    assert model.config._attn_implementation == "sdpa"
    assert torch.allclose(out, model(input_ids=torch.tensor([[1, 2, 3]])).logits, atol=1e-6)
    with pytest.raises(RuntimeError, match="inside"), tree_attention(model):
        raise RuntimeError("inside")
    assert model.config._attn_implementation == "sdpa"  # restored after an error too
