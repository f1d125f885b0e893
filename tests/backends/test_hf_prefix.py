"""The run-wide prefix store: longest match, least recently used out, sliding-window models not stored."""

import torch
from transformers import DynamicCache

from enade_bench.backends.hf_prefix import PrefixStore, common_prefix_length


def _cache(n: int, window: int | None = None) -> DynamicCache:
    k = torch.arange(n, dtype=torch.float32).reshape(1, 1, n, 1)
    layer = (k, k + 100) if window is None else (k, k + 100, torch.tensor(window))
    return DynamicCache(ddp_cache_data=[layer])


def test_common_prefix_length() -> None:
    assert common_prefix_length([[1, 2, 3], [1, 2, 4], [1, 2]]) == 2
    assert common_prefix_length([]) == 0


def test_lookup_returns_the_longest_stored_match_as_its_own_copy() -> None:
    store = PrefixStore(max_entries=4)
    store.add([1, 2, 3, 4, 5], _cache(5))
    store.add([1, 2, 9, 9], _cache(4))
    n, cache = store.lookup([1, 2, 3, 4, 7, 7], limit=10)
    assert n == 4
    assert cache.layers[0].keys[0, 0, :, 0].tolist() == [0.0, 1.0, 2.0, 3.0]
    cache.layers[0].update(torch.zeros(1, 1, 2, 1), torch.zeros(1, 1, 2, 1))  # the model appends ...
    again, cache2 = store.lookup([1, 2, 3, 4, 5], limit=3)  # ... the stored states stay as they were
    assert again == 3 and cache2.layers[0].keys.shape[2] == 3
    assert store.stats.reused == 7


def test_no_match_below_min_tokens_and_lru_eviction() -> None:
    store = PrefixStore(max_entries=2, min_tokens=2)
    assert store.lookup([1, 2, 3], 3) == (0, None)
    store.add([1, 2, 3], _cache(3))
    assert store.lookup([1, 5], 5)[0] == 0  # one shared token is not worth a cache
    store.add([4, 5, 6], _cache(3))
    store.lookup([1, 2, 3], 3)  # [1, 2, 3] used last
    store.add([7, 8, 9], _cache(3))
    assert [e.ids for e in store.entries] == [[1, 2, 3], [7, 8, 9]]


def test_an_entry_covered_by_a_longer_one_is_not_kept_twice() -> None:
    store = PrefixStore()
    store.add([1, 2, 3], _cache(3))
    store.add([1, 2, 3, 4], _cache(4))  # replaces the shorter one
    store.add([1, 2], _cache(2))  # served by the longer one
    assert [e.ids for e in store.entries] == [[1, 2, 3, 4]]


def test_sliding_window_caches_switch_the_store_off() -> None:
    store = PrefixStore()
    store.add([1, 2, 3], _cache(3, window=2))
    assert not store.enabled and not store.entries
    store.add([1, 2, 3], _cache(3))
    assert store.lookup([1, 2, 3], 3) == (0, None)
