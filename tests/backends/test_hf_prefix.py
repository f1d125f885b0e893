"""The run-wide prefix store: whole blocks only, longest match, least recently used out, exact."""

import torch
from transformers import DynamicCache, Gemma3TextConfig, LlamaConfig

from enade_bench.backends.hf_prefix import (
    PrefixStore,
    common_prefix_length,
    plain_cache,
    prefix_groups,
    prefix_states,
)


def _cache(n: int) -> DynamicCache:
    k = torch.arange(n, dtype=torch.float32).reshape(1, 1, n, 1)
    return DynamicCache(ddp_cache_data=[(k, k + 100)])


def test_common_prefix_length() -> None:
    assert common_prefix_length([[1, 2, 3], [1, 2, 4], [1, 2]]) == 2
    assert common_prefix_length([]) == 0


def test_prefix_groups_split_families_with_different_long_prefixes() -> None:
    """Four- and five-option questions differ early (the letters in the instruction), then share
    hundreds of worked-example tokens: each family is a group; rows of one family stay together."""
    head, examples = list(range(90)), list(range(1000, 1900))
    five = [head + [5] + examples + [7000 + i] * (50 + 10 * i) for i in range(5)]
    four = [head + [4] + examples + [8000 + i] * (40 + 5 * i) for i in range(3)]
    rows = [five[0], four[0], five[1], five[2], four[1], five[3], four[2], five[4]]
    assert prefix_groups(rows) == [[0, 2, 3, 5, 7], [1, 4, 6]]


def test_prefix_groups_keep_one_batch_when_splitting_saves_little() -> None:
    shared = list(range(500))
    rows = [shared + [9000 + i] * (100 + 7 * i) for i in range(8)]  # only padding to save
    assert prefix_groups(rows) == [list(range(8))]
    assert prefix_groups([[1, 2, 3], [1, 2, 3]]) == [[0, 1]]
    assert prefix_groups([[1, 2], [3, 4]]) == [[0, 1]]  # nothing shared: one batch, nothing to gain


def test_an_entry_serves_exactly_its_ids_as_its_own_copy() -> None:
    store = PrefixStore(block=2)
    assert [store.cut(n) for n in (1, 2, 5)] == [0, 2, 4]
    store.put([1, 2, 3, 4], _cache(5))
    assert store.get([1, 2]) is None  # states computed as four tokens are not those of two
    cache = store.get([1, 2, 3, 4])
    assert cache.layers[0].keys[0, 0, :, 0].tolist() == [0.0, 1.0, 2.0, 3.0]
    cache.layers[0].update(torch.zeros(1, 1, 2, 1), torch.zeros(1, 1, 2, 1))  # the model appends ...
    again = store.get([1, 2, 3, 4])  # ... the stored states stay as they were
    assert again.layers[0].keys.shape[2] == 4
    assert store.stats.reused == 8


def test_least_recently_used_goes_first() -> None:
    store = PrefixStore(block=1, max_entries=2)
    store.put([1], _cache(1))
    store.put([2], _cache(1))
    store.get([1])  # [1] used last
    store.put([3], _cache(1))
    assert list(store.entries) == [(1,), (3,)]


def test_sliding_window_models_have_no_plain_cache() -> None:
    tiny = {"hidden_size": 8, "intermediate_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1}
    assert plain_cache(type("M", (), {"config": LlamaConfig(num_hidden_layers=2, **tiny)})())
    gemma = Gemma3TextConfig(num_hidden_layers=2, sliding_window=4, head_dim=4, **tiny)
    assert not plain_cache(type("M", (), {"config": gemma})())


def test_stored_states_are_bit_for_bit_the_computed_ones(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    """Whatever the store held before, a prefix gets the same states and logits (exact resume)."""
    tok = smollm2_backend.tokenizer
    base = tok("Leia a questão a seguir e escolha a alternativa correta. " * 4)["input_ids"]
    # the same cut (last whole block of 8 before the last token) for all three heads
    heads = [[*base, k + 100] for k in range(3)]
    model = smollm2_backend.model

    def states(store: PrefixStore, head: list[int]) -> tuple[list[torch.Tensor], torch.Tensor]:
        cache, last = prefix_states(model, head, store, logits=True)
        assert last is not None
        return [layer.keys for layer in cache.layers], last

    warm = PrefixStore(block=8)
    states(warm, base + list(range(200, 230)))  # a longer prefix, cut elsewhere: no use to the others
    for head in heads[:2]:
        states(warm, head)
    before = warm.stats.reused
    keys_warm, last_warm = states(warm, heads[2])
    assert warm.stats.reused - before == len(base) // 8 * 8  # the part before the cut came from the store
    keys_cold, last_cold = states(PrefixStore(block=8), heads[2])
    assert torch.equal(last_warm, last_cold)
    assert all(torch.equal(a, b) for a, b in zip(keys_warm, keys_cold, strict=True))
    # without a store the prefix is one call: the same numbers up to rounding, not the same bits
    _, last_one = prefix_states(model, heads[2], None, logits=True)
    assert last_one is not None and torch.allclose(last_one, last_cold, atol=1e-4)
