"""One prefill per chunk and a cheap decode step (issue 35, items 2 and 4), counted on the CPU.

The CUDA policy runs here on the CPU, as in test_hf_batching.py.  The calls, the positions fed
and the attention's keys are counted with forward hooks and a spy on the FlexAttention kernel; the
chunk is 8 of the 32 real ENEM questions of a chunk (2019-2022, the GPU arm's ``mixed`` order;
eager FlexAttention on the CPU scores every query-key pair) tokenized by the packaged SmolLM2,
through a two-layer model of SmolLM2's vocabulary (the counts do not depend on the weights); the
tokens are compared with today's path (the CPU policy) on that model and on the real SmolLM2.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import torch
from tests.conftest import require_shared
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes
from torch.utils._pytree import tree_flatten
from transformers import LlamaConfig, LlamaForCausalLM

from enade_bench.backends import hf_flex, hf_slots
from enade_bench.backends.base import GenerationParams
from enade_bench.backends.hf_batching import BatchingPolicy
from enade_bench.backends.hf_generate import generate_shared
from enade_bench.backends.hf_prefix import PrefixStore, common_prefix_length

CPU, CUDA = BatchingPolicy.for_device("cpu"), BatchingPolicy.for_device("cuda:0")
GENERATION = ("S1", "S2", "S3", "S4")


def _llama(vocab: int = 512) -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=vocab,
        hidden_size=96,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=6,
        num_key_value_heads=2,
        attn_implementation="sdpa",
    )  # type: ignore[call-arg]
    return LlamaForCausalLM(config).eval()


@pytest.fixture(scope="module")
def llama() -> LlamaForCausalLM:
    return _llama()


class Calls:
    """The model's forward calls: ``(rows, positions)`` of each."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.shapes: list[tuple[int, int]] = []
        self.handle = model.register_forward_pre_hook(self._hook, with_kwargs=True)

    def _hook(self, _module: Any, _args: Any, kwargs: dict[str, Any]) -> None:
        self.shapes.append(tuple(kwargs["input_ids"].shape))  # type: ignore[arg-type]

    def __enter__(self) -> Calls:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.remove()


def _random_chunk(n: int = 16) -> list[list[int]]:
    rng = random.Random(7)
    head = [rng.randrange(1, 512) for _ in range(70)]
    return [head + [rng.randrange(1, 512) for _ in range(rng.choice([3, 40, 300]))] for _ in range(n)]


@pytest.mark.parametrize("store", [True, False], ids=["store", "no-store"])
def test_packed_generation_gives_todays_tokens_in_one_prefill(llama, store) -> None:  # type: ignore[no-untyped-def]
    seqs = _random_chunk()
    params = GenerationParams(max_new_tokens=6)
    eos = {int(t) for t in range(0, 512, 37)}  # some rows stop early
    want = generate_shared(llama, seqs, params, 0, eos, PrefixStore() if store else None, CPU)
    with Calls(llama) as calls:
        got = generate_shared(llama, seqs, params, 0, eos, PrefixStore() if store else None, CUDA)
    assert got == want
    prefill = [s for s in calls.shapes if s[0] == 1]
    assert len(prefill) == (2 if store else 1)  # the stored block of the prefix, then one packed row
    assert len(calls.shapes) <= len(prefill) + params.max_new_tokens - 1
    shared = common_prefix_length(seqs)
    assert sum(w for _, w in prefill) == shared + sum(len(s) - shared for s in seqs)  # no padding


@contextmanager
def _spy_kernel(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[torch.Tensor, torch.Tensor, Any]]]:
    """Every attention kernel call's query, key and BlockMask (FlexAttention, :mod:`.hf_flex`)."""
    seen: list[tuple[torch.Tensor, torch.Tensor, Any]] = []
    real = hf_flex.kernel

    def kernel(device):  # type: ignore[no-untyped-def]
        def spy(query, key, value, **kwargs):  # type: ignore[no-untyped-def]
            seen.append((query, key, kwargs["block_mask"]))
            with _disable_current_modes():
                return real(device)(query, key, value, **kwargs)

        return spy

    monkeypatch.setattr(hf_flex, "kernel", kernel)
    yield seen
    monkeypatch.undo()


class _NewBigTensors(TorchDispatchMode):
    """Operations that allocate a tensor of at least ``size`` elements (a copy of a cache would).

    In-place writes and views return storage their inputs already hold: not counted.  The
    attention kernel runs outside the mode (:func:`_spy_kernel`): FlexAttention's eager CPU
    reference materialises its scores, which the card's fused kernel does not.
    """

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        out = func(*args, **(kwargs or {}))
        held = {
            t.untyped_storage().data_ptr()
            for t in tree_flatten((args, kwargs))[0]
            if isinstance(t, torch.Tensor)
        }
        for t in tree_flatten(out)[0]:
            if (
                isinstance(t, torch.Tensor)
                and t.numel() >= self.size
                and t.untyped_storage().data_ptr() not in held
            ):
                self.ops.append(str(func))
        return out


def test_a_decode_step_writes_in_place_and_reads_keys_once_per_kv_head(llama, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """No per-step concatenation or copy of the cache, no key/value heads repeated (item 4)."""
    seqs = _random_chunk()
    params = GenerationParams(max_new_tokens=5)
    kv_heads = llama.config.num_key_value_heads
    dim = llama.config.hidden_size // llama.config.num_attention_heads
    shared = common_prefix_length(seqs)
    caches: list[Any] = []
    steps: list[_NewBigTensors] = []

    def pre(_module, _args, kwargs):  # type: ignore[no-untyped-def]
        caches.append(kwargs["past_key_values"])
        if kwargs["input_ids"].shape[1] == 1:  # a decode step: anything as big as the rows' prefix keys
            steps.append(_NewBigTensors(len(seqs) * kv_heads * shared * dim))
            steps[-1].__enter__()

    def post(_module, args, kwargs, _out):  # type: ignore[no-untyped-def]
        if kwargs["input_ids"].shape[1] == 1:
            steps[-1].__exit__(None, None, None)

    handles = [
        llama.register_forward_pre_hook(pre, with_kwargs=True),
        llama.register_forward_hook(post, with_kwargs=True),
    ]
    try:
        with _spy_kernel(monkeypatch) as seen:
            generate_shared(llama, seqs, params, 0, set(), PrefixStore(), CUDA)
    finally:
        for h in handles:
            h.remove()
    assert len(steps) == params.max_new_tokens - 1
    assert all(not s.ops for s in steps), [s.ops for s in steps]  # nothing cache-sized is made per step
    cache = caches[-1]
    assert isinstance(cache, hf_slots.SlotCache) and all(c is cache for c in caches[1:])
    slots = {t.untyped_storage().data_ptr() for layer in cache.layers for t in layer}
    decode_keys = [k for q, k, _ in seen if q.shape[0] == len(seqs)]
    assert len(decode_keys) == llama.config.num_hidden_layers * (params.max_new_tokens - 1)
    assert {k.untyped_storage().data_ptr() for k in decode_keys} <= slots  # views of the preallocated slots
    assert all(k.shape[1] == kv_heads for _, k, _ in seen)  # every kernel call: one key per kv head
    layers = llama.config.num_hidden_layers
    assert len(seen) == layers * params.max_new_tokens  # one call per layer: the prefill's, then each step's


# -- the chunk of the issue: 32 real ENEM questions, mixed short and long --------------------
@pytest.fixture(scope="module")
def enem_chunks(smollm2_backend) -> dict[str, list[list[int]]]:  # type: ignore[no-untyped-def]
    """S1-S4 token ids of the GPU arm's first ``mixed`` chunk, as ``enade-bench run`` renders them."""
    from bench.speed.gpu import GpuOurs, load_questions, mixed_order
    from bench.speed.measure import TokenCounter
    from enade_bench.config import EvaluationConfig
    from enade_bench.strategies.registry import STRATEGIES

    dataset = load_questions(str(require_shared("enem", "questions", "pt-br")), 720)
    order = mixed_order([len(q.stem) for q in dataset.questions])[:32]
    ours = GpuOurs(dataset, smollm2_backend, TokenCounter(smollm2_backend.model), 32)
    out = {}
    for sid in GENERATION:
        executor = ours.executor_for(STRATEGIES[sid], order, EvaluationConfig(batch_size=32, seed=42))
        out[sid] = [
            smollm2_backend.encode(smollm2_backend.render(executor.plan.prompt_of(it)))
            for it in executor.plan.items
        ]
    return out


@pytest.mark.parametrize("sid", GENERATION)
def test_a_chunk_of_enem_questions_is_one_prefill_and_one_decode_loop(enem_chunks, sid, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Eight of the chunk's questions: FlexAttention runs eager on the CPU, where it scores every
    # query-key pair (32 questions of S3 would hold a dense row x row matrix of ~13 GB).
    assert len(enem_chunks[sid]) == 32
    seqs = enem_chunks[sid][:8]
    model = _llama(vocab=49152)  # SmolLM2's vocabulary; two small layers (the counts only)
    params = GenerationParams(max_new_tokens=4)
    with Calls(model) as calls, _spy_kernel(monkeypatch) as seen:
        got = generate_shared(model, seqs, params, 0, set(), PrefixStore(), CUDA)
    layers = model.config.num_hidden_layers
    assert len(calls.shapes) <= 1 + 1 + (params.max_new_tokens - 1)
    assert len(seen) == layers * (
        len(calls.shapes) - 1
    )  # one kernel call per layer per call after the stored prefix
    fed = sum(w for rows, w in calls.shapes if w > 1 or rows == 1)
    shared = common_prefix_length(seqs)
    real = shared + sum(len(s) - shared for s in seqs)
    assert fed == real  # no prefill padding
    past = PrefixStore().cut(shared)
    # the pairs the mask attends: the prefix's rest causally, each question over the prefix and causally itself
    need = sum(past + i + 1 for i in range(shared - past)) + sum(
        shared + j + 1 for s in seqs for j in range(len(s) - shared)
    )
    prefill = next(m for q, _, m in seen if q.shape[0] == 1)  # the packed row's BlockMask, every layer's
    tiles = int(prefill.kv_num_blocks.sum() + prefill.full_kv_num_blocks.sum())
    computed = tiles * hf_flex.BLOCK**2  # the query-key pairs of the tiles the kernel computes
    # 128 x 128 tiles: a question's diagonal tiles are half empty (1.52 on S1's chunk)
    assert need <= computed <= 1.6 * need, computed / need
    assert got == generate_shared(model, seqs, params, 0, set(), PrefixStore(), CPU)  # today's tokens


@pytest.mark.slow
def test_packed_generation_gives_todays_answers_on_smollm2(enem_chunks, smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    """The packaged SmolLM2, greedy: the same new tokens as today's path on S3 (few-shot: the shared
    prefix and two packed ENEM prompts; eager FlexAttention on the CPU scores every pair of the row,
    so S1-S4 on many questions are the tiny model's, ``test_a_chunk_of_enem_questions_...``)."""
    model = smollm2_backend.model
    params = GenerationParams(max_new_tokens=5)
    eos = {int(smollm2_backend.tokenizer.eos_token_id)}
    for sid in ("S3",):
        seqs = enem_chunks[sid][:2]
        want = generate_shared(model, seqs, params, smollm2_backend.pad_id, eos, PrefixStore(), CPU)
        with Calls(model) as calls:
            got = generate_shared(model, seqs, params, smollm2_backend.pad_id, eos, PrefixStore(), CUDA)
        assert got == want
        assert sum(1 for rows, w in calls.shapes if rows == 1) <= 2


def test_a_compiled_decode_step_gives_the_same_tokens(llama, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``compile_decode`` traced by dynamo (its ``eager`` backend here; CUDA graphs on a card)."""
    from dataclasses import replace

    from enade_bench.backends import hf_packed

    monkeypatch.setattr(hf_packed, "COMPILE_OPTIONS", {"backend": "eager", "dynamic": False})
    torch._dynamo.reset()
    seqs = _random_chunk(6)
    params = GenerationParams(max_new_tokens=4)
    want = generate_shared(llama, seqs, params, 0, set(), None, CUDA)
    assert not CUDA.compile_decode  # off by default
    with Calls(llama) as calls:
        got = generate_shared(llama, seqs, params, 0, set(), None, replace(CUDA, compile_decode=True))
    assert got == want
    assert len(calls.shapes) == 1 + params.max_new_tokens - 1
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] > 0  # the step was traced


def test_a_model_split_over_devices_keeps_the_grouped_path(llama, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from enade_bench.backends.hf_packed import packable

    assert packable(llama)
    monkeypatch.setattr(llama, "hf_device_map", {"model.layers.0": 0, "model.layers.1": 1}, raising=False)
    assert not packable(llama)


def test_a_compiled_decode_step_makes_at_most_two_graphs_over_five_chunks(llama, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``compile_decode`` with dynamic shapes and no duck sizing: the rows and the cache's width are
    symbols and nothing per chunk is a guarded constant, so 5 chunks of different lengths and row
    counts (4, 2 = the model's KV heads, a duck-sizing coincidence, and 5) share at most 2 graphs
    (Dynamo's limit is 8: a minute each on an 8B model)."""
    from dataclasses import replace

    from torch._dynamo.backends.registry import lookup_backend

    from enade_bench.backends import hf_packed

    graphs: list[int] = []
    eager = lookup_backend("eager")

    def counting(gm: Any, example_inputs: Any) -> Any:
        graphs.append(len(example_inputs))
        return eager(gm, example_inputs)

    options = {
        "backend": counting,
        "dynamic": hf_packed.COMPILE_OPTIONS["dynamic"],
    }  # ours, eager for CUDA graphs
    monkeypatch.setattr(hf_packed, "COMPILE_OPTIONS", options)
    monkeypatch.delattr(llama, "_enade_compiled", raising=False)
    torch._dynamo.reset()
    rng = random.Random(3)
    head = [rng.randrange(1, 512) for _ in range(40)]
    params = GenerationParams(max_new_tokens=3)
    for own, rows in ((30, 4), (250, 4), (150, 2), (400, 5), (300, 4)):  # caches of 256 to 2,048 columns
        seqs = [head + [rng.randrange(1, 512) for _ in range(own + 7 * i)] for i in range(rows)]
        got = generate_shared(llama, seqs, params, 0, set(), None, replace(CUDA, compile_decode=True))
        assert got == generate_shared(llama, seqs, params, 0, set(), None, CPU)
    torch._dynamo.reset()
    assert 1 <= len(graphs) <= 2, f"{len(graphs)} graphs"
