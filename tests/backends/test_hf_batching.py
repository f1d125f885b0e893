"""Batching by device: one decode loop on CUDA, scoring attention linear in each question's tokens.

The device is a parameter of :class:`BatchingPolicy`, so the CUDA policy runs here on the CPU
(on a small random Llama built from a transformers config) and its contracts are counted.
"""

import random
from pathlib import Path

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from enade_bench.backends import hf_attention
from enade_bench.backends.base import GenerationParams
from enade_bench.backends.hf_attention import pairs
from enade_bench.backends.hf_batching import BatchingPolicy
from enade_bench.backends.hf_generate import generate_shared
from enade_bench.backends.hf_prefix import PrefixStore, common_prefix_length, prefix_groups
from enade_bench.backends.hf_tree import score_tree
from enade_bench.config import DatasetConfig
from enade_bench.dataset.loader import load_dataset
from enade_bench.strategies.registry import STRATEGIES

ROOT = Path(__file__).resolve().parents[2]
CPU, CUDA = BatchingPolicy.for_device("cpu"), BatchingPolicy.for_device("cuda:0")


@pytest.fixture(scope="module")
def llama() -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=512,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        attn_implementation="sdpa",
    )
    return LlamaForCausalLM(config).eval()


def _zero_shot_prompts(n: int = 32) -> list[list[int]]:
    """``n`` prompts sharing a 60-token instruction, then stems alternating short and long.

    As on ENEM, stems open alike within a kind (a long one with a quoted text's opening,
    a short one with a question's): four openings of 20 tokens, two per kind.
    """
    rng = random.Random(7)
    head = [rng.randrange(1, 512) for _ in range(60)]
    openings = [[rng.randrange(1, 512) for _ in range(20)] for _ in range(4)]
    rows = []
    for i in range(n):
        short = i % 2 == 1
        opening = openings[(2 if short else 0) + (i // 2) % 2]
        rows.append(head + opening + [rng.randrange(1, 512) for _ in range(12 if short else 300 + 5 * i)])
    return rows


class _Calls:
    """Counts the model's forward calls by how many new positions each feeds."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.widths: list[int] = []
        self.handle = model.register_forward_pre_hook(self._hook, with_kwargs=True)

    def _hook(self, _module, _args, kwargs):  # type: ignore[no-untyped-def]
        self.widths.append(int(kwargs["input_ids"].shape[1]))

    def __enter__(self) -> "_Calls":
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.remove()


def test_policy_follows_the_device() -> None:
    assert CPU == BatchingPolicy() and not CPU.shared_decode and not CPU.flex_attention
    assert CUDA.device == "cuda" and CUDA.shared_decode and CUDA.flex_attention
    assert BatchingPolicy.for_device("mps") == CPU
    with pytest.raises(AttributeError):  # frozen: the engine reads it, nothing changes it in passing
        CUDA.split_cost = 1  # type: ignore[misc]


def test_cuda_policy_decodes_32_zero_shot_prompts_of_different_lengths_in_one_loop(llama) -> None:  # type: ignore[no-untyped-def]
    seqs = _zero_shot_prompts()
    params = GenerationParams(max_new_tokens=6)
    assert len(prefix_groups(seqs, CPU.split_cost)) > 1  # the CPU splits this chunk ...
    with _Calls(llama) as cpu_calls:
        cpu = generate_shared(llama, seqs, params, 0, set(), PrefixStore(), CPU)
    with _Calls(llama) as cuda_calls:
        cuda = generate_shared(llama, seqs, params, 0, set(), PrefixStore(), CUDA)
    steps = params.max_new_tokens - 1  # no end-of-sequence token: every row decodes them all
    assert cuda_calls.widths.count(1) == steps  # ... the CUDA policy decodes it in one loop
    assert cpu_calls.widths.count(1) == steps * len(prefix_groups(seqs, CPU.split_cost))
    assert cuda == cpu  # the same greedy tokens for every prompt
    assert all(len(t) == params.max_new_tokens for t in cuda)


def test_sampling_keeps_a_loop_per_group(llama) -> None:  # type: ignore[no-untyped-def]
    """Sampled draws depend on the rows of a loop: the groups stay as on the CPU."""
    seqs = _zero_shot_prompts(8)
    params = GenerationParams(max_new_tokens=3, temperature=0.7, n_samples=2, seed=3)
    assert generate_shared(llama, seqs, params, 0, set(), None, CUDA) == generate_shared(
        llama, seqs, params, 0, set(), None, CPU
    )


def _questions(n: int = 32) -> tuple[list[list[int]], list[list[list[int]]]]:
    rng = random.Random(11)
    head = [rng.randrange(1, 512) for _ in range(40)]
    contexts = [
        head + [rng.randrange(1, 512) for _ in range(rng.choice([8, 30, 120, 260]))] for _ in range(n)
    ]
    tails = [
        [[rng.randrange(1, 512) for _ in range(rng.randrange(1, 9))] for _ in range(5)] for _ in range(n)
    ]
    return contexts, tails


def _counting_sdpa(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Records the query--key pairs of every mask handed to the attention kernel."""
    counted: list[int] = []
    real = hf_attention._sdpa()

    def spy(module, query, key, value, mask, **kwargs):  # type: ignore[no-untyped-def]
        if mask is not None:
            counted.append(mask.shape[0] * mask.shape[-2] * mask.shape[-1])
        return real(module, query, key, value, mask, **kwargs)

    monkeypatch.setattr(hf_attention, "_sdpa", lambda: spy)
    return counted


def test_cpu_scoring_of_32_questions_attends_within_each_question(llama, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The CPU policy's per-tree SDPA calls; the CUDA policy's one call: ``test_hf_radix``."""
    contexts, tails = _questions()
    counted = _counting_sdpa(monkeypatch)
    score_tree(llama, contexts, tails, None, CPU)
    shared = min(common_prefix_length(contexts), min(len(c) for c in contexts) - 1)
    tree_tokens = [len(c) - shared + sum(len(t) for t in ts) for c, ts in zip(contexts, tails, strict=True)]
    question_tokens = [len(c) + sum(len(t) for t in ts) for c, ts in zip(contexts, tails, strict=True)]
    layers = llama.config.num_hidden_layers
    assert len(counted) % layers == 0 and counted  # every layer's attention went through the count
    per_layer = sum(counted) // layers
    assert per_layer <= 1.1 * sum(n * n for n in question_tokens)
    assert per_layer <= 1.1 * pairs(tree_tokens, shared)  # within 10 % of each tree alone


def test_cuda_policy_scores_32_questions_as_the_cpu_policy(llama) -> None:  # type: ignore[no-untyped-def]
    contexts, tails = _questions()
    last, scores = score_tree(llama, contexts, tails, None, CUDA)
    ref_last, ref_scores = score_tree(llama, contexts, tails, None, CPU)
    assert torch.allclose(last, ref_last, atol=1e-5)
    for got, want in zip(scores, ref_scores, strict=True):
        for g, w in zip(got, want, strict=True):
            assert g == pytest.approx(w, abs=1e-5)


@pytest.mark.slow
def test_cuda_policy_scores_the_demo_as_the_cpu_policy(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    """S5 on the demo through the real model: the CUDA policy's one FlexAttention call, within 1e-4.

    One call over the row changes only the kernel's summation order: the sums of 30 layers'
    float32 noise over an option's tokens stay within the tolerance the full-sequence
    comparisons use (``test_hf_tree``).
    """
    from tests.conftest import executor_for

    backend = smollm2_backend
    questions = load_dataset(
        DatasetConfig(path=str(ROOT / "data" / "enade_demo.csv"), benchmark="enade")
    ).questions
    executor = executor_for(backend, STRATEGIES["S5"], list(questions[:3]))  # eager flex scores every pair
    items = [(executor.plan.prompt_of(it), [" " + o for o in it.options]) for it in executor.plan.items]
    try:
        backend.batching = CPU
        want = backend.continuation_logprobs_batch(items)
        backend.batching = CUDA
        got = backend.continuation_logprobs_batch(items)
    finally:
        backend.batching = BatchingPolicy.for_device(backend.device.type)
    for g_q, w_q in zip(got, want, strict=True):
        assert [g.sum_logprob for g in g_q] == pytest.approx([w.sum_logprob for w in w_q], abs=1e-4)
