"""The run-wide prefix store: whole blocks only, longest match, least recently used out, exact."""

import torch
from transformers import DynamicCache, Gemma3TextConfig, LlamaConfig

from enade_bench.backends.hf_prefix import PrefixStore, common_prefix_length, plain_cache, prefix_states


def _cache(n: int) -> DynamicCache:
    k = torch.arange(n, dtype=torch.float32).reshape(1, 1, n, 1)
    return DynamicCache(ddp_cache_data=[(k, k + 100)])


def test_common_prefix_length() -> None:
    assert common_prefix_length([[1, 2, 3], [1, 2, 4], [1, 2]]) == 2
    assert common_prefix_length([]) == 0


def test_lookup_returns_the_longest_whole_block_match_as_its_own_copy() -> None:
    store = PrefixStore(block=2)
    store.add([1, 2, 3, 4, 5], _cache(5))  # kept: [1, 2, 3, 4] (two whole blocks)
    store.add([1, 2, 9, 9], _cache(4))
    assert [e.ids for e in store.entries] == [[1, 2, 3, 4], [1, 2, 9, 9]]
    n, cache = store.lookup([1, 2, 3, 7, 7], limit=10)  # 3 tokens match: one whole block
    assert n == 2
    n, cache = store.lookup([1, 2, 3, 4, 7, 7], limit=10)
    assert n == 4
    assert cache.layers[0].keys[0, 0, :, 0].tolist() == [0.0, 1.0, 2.0, 3.0]
    cache.layers[0].update(torch.zeros(1, 1, 2, 1), torch.zeros(1, 1, 2, 1))  # the model appends ...
    again, cache2 = store.lookup([1, 2, 3, 4, 5], limit=3)  # ... the stored states stay as they were
    assert again == 2 and cache2.layers[0].keys.shape[2] == 2
    assert store.stats.reused == 8


def test_no_whole_block_no_match_and_lru_eviction() -> None:
    store = PrefixStore(block=2, max_entries=2)
    assert store.lookup([1, 2, 3], 3) == (0, None)
    store.add([1], _cache(1))
    assert not store.entries  # less than a block
    store.add([1, 2, 3], _cache(3))
    assert store.lookup([1, 5], 5)[0] == 0  # one shared token is not a whole block
    store.add([4, 5, 6], _cache(3))
    store.lookup([1, 2, 3], 3)  # [1, 2] used last
    store.add([7, 8, 9], _cache(3))
    assert [e.ids for e in store.entries] == [[1, 2], [7, 8]]


def test_an_entry_covered_by_a_longer_one_is_not_kept_twice() -> None:
    store = PrefixStore(block=1)
    store.add([1, 2, 3], _cache(3))
    store.add([1, 2, 3, 4], _cache(4))  # replaces the shorter one
    store.add([1, 2], _cache(2))  # served by the longer one
    assert [e.ids for e in store.entries] == [[1, 2, 3, 4]]


def test_sliding_window_models_have_no_plain_cache() -> None:
    tiny = {"hidden_size": 8, "intermediate_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1}
    assert plain_cache(type("M", (), {"config": LlamaConfig(num_hidden_layers=2, **tiny)})())
    gemma = Gemma3TextConfig(num_hidden_layers=2, sliding_window=4, head_dim=4, **tiny)
    assert not plain_cache(type("M", (), {"config": gemma})())


def test_stored_states_are_bit_for_bit_the_computed_ones(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    """Whatever the store held before, a prefix gets the same states and logits (exact resume)."""
    tok = smollm2_backend.tokenizer
    base = tok("Leia a questão a seguir e escolha a alternativa correta. " * 4)["input_ids"]
    heads = [base + tok(f" Questão {k}: quanto é {k} mais {k}?")["input_ids"] for k in range(3)]
    model = smollm2_backend.model

    def states(store: PrefixStore, head: list[int]) -> tuple[list[torch.Tensor], torch.Tensor]:
        cache, last = prefix_states(model, head, store, logits=True)
        assert last is not None
        return [layer.keys for layer in cache.layers], last

    warm = PrefixStore(block=8)
    for head in heads[:2]:
        states(warm, head)
    assert warm.entries
    before = warm.stats.reused
    keys_warm, last_warm = states(warm, heads[2])
    assert warm.stats.reused - before >= len(base) // 8 * 8  # the shared blocks came from the store
    keys_cold, last_cold = states(PrefixStore(block=8), heads[2])
    assert torch.equal(last_warm, last_cold)
    assert all(torch.equal(a, b) for a, b in zip(keys_warm, keys_cold, strict=True))
    # without a store the prefix is one call: the same numbers up to rounding, not the same bits
    _, last_one = prefix_states(model, heads[2], None, logits=True)
    assert last_one is not None and torch.allclose(last_one, last_cold, atol=1e-4)
