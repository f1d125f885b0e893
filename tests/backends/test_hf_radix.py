"""Scoring attention on real ENEM text: each question costs at most its own pairs, read back once.

The contexts are the arm's (``bench/speed/gpu.py``): the ENEM booklets of 2019–2022 from the shared
data, S5 and S6 prompts rendered with the packaged SmolLM2's chat template and tokenizer, in
file order and in the ``mixed`` order (short and long stems alternating).  On this text many
unrelated questions begin with the same token, so the radix trees merge them: attended as one
rectangle, such a tree cost 2–7× the pairs of its questions run alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import torch
from tests.conftest import executor_for, require_shared
from transformers import LlamaConfig, LlamaForCausalLM

from bench.speed.gpu import load_questions, mixed_order
from enade_bench.backends import hf_attention, hf_flex
from enade_bench.backends.hf_attention import pairs
from enade_bench.backends.hf_batching import BatchingPolicy
from enade_bench.backends.hf_prefix import common_prefix_length
from enade_bench.backends.hf_radix import (
    Block,
    Members,
    Segment,
    attention_blocks,
    radix_units,
    unit_members,
)
from enade_bench.backends.hf_tree import score_tree
from enade_bench.strategies.registry import STRATEGIES

Split = list[tuple[list[int], list[list[int]]]]
CPU, CUDA = BatchingPolicy.for_device("cpu"), BatchingPolicy.for_device("cuda")


def question_pairs(segments: Sequence[Segment], members: Members, past: int) -> int:
    """Query--key pairs of the tree's contexts each run alone: ``Σ_c l_c (past + l_c)``.

    ``l_c``: context ``c``'s tokens in the tree (its path) and its continuations'.
    """
    total = 0
    for end, tail_nodes in members:
        n = sum(len(segments[t].tokens) for t in tail_nodes)
        node: int | None = end
        while node is not None:
            n += len(segments[node].tokens)
            node = segments[node].parent
        total += n * (past + n)
    return total


@pytest.fixture(scope="module")
def enem_splits(smollm2_backend) -> dict[str, Split]:  # type: ignore[no-untyped-def]
    """S5 and S6 contexts and option tokens of the first 256 of the arm's ENEM questions."""
    folder = require_shared("enem", "questions", "pt-br")
    questions = load_questions(str(folder), 256).questions
    backend = smollm2_backend
    out: dict[str, Split] = {}
    for name in ("S5", "S6"):
        executor = executor_for(backend, STRATEGIES[name], questions)
        out[name] = [
            backend._split_ids((executor.plan.prompt_of(it), tuple(" " + o for o in it.options)))
            for it in executor.plan.items
        ]
    return out


def _chunk(split: Split, order: str, size: int) -> Split:
    index = list(range(len(split))) if order == "file" else mixed_order([len(c) for c, _ in split])
    return [split[i] for i in index[:size]]


def _plan(chunk: Split) -> tuple[int, list[list[Segment]], list[list[Block]], int]:
    contexts = [c for c, _ in chunk]
    shared = min(common_prefix_length(contexts), min(len(c) for c in contexts) - 1)
    fed = [[t[:-1] for t in tails] for _, tails in chunk]
    units, ends, tail_segs = radix_units([c[shared:] for c in contexts], fed)
    members = unit_members(len(units), ends, tail_segs)
    blocks = [attention_blocks(u, m, shared) for u, m in zip(units, members, strict=True)]
    need = pairs(
        [len(c) - shared + sum(len(t) for t in f) for c, f in zip(contexts, fed, strict=True)], shared
    )
    # the planner's own bound: each context alone, its identical options once
    bound = sum(question_pairs(u, m, shared) for u, m in zip(units, members, strict=True))
    assert bound <= need
    assert sum((b.end - b.start) * b.mask.shape[1] for tree in blocks for b in tree) <= bound
    return shared, units, blocks, need


@pytest.mark.parametrize("order", ["file", "mixed"])
@pytest.mark.parametrize("strategy", ["S5", "S6"])
def test_blocks_cost_each_question_its_own_pairs_on_real_enem(enem_splits, strategy, order) -> None:  # type: ignore[no-untyped-def]
    for size in (32, 64, 128):
        chunk = _chunk(enem_splits[strategy], order, size)
        shared, units, blocks, need = _plan(chunk)
        rectangles = pairs([sum(len(s.tokens) for s in u) for u in units], shared)
        assert rectangles > 1.5 * need, (size, rectangles / need)  # the text merges unrelated questions
        attended = sum((b.end - b.start) * b.mask.shape[1] for tree in blocks for b in tree)
        assert attended <= 1.1 * need, (strategy, order, size, attended / need)
        # the shared heads stay shared: no more positions than the questions one by one
        fed = sum(len(s.tokens) for u in units for s in u)
        alone = sum(len(c) - shared + sum(len(t) - 1 for t in tails) for c, tails in chunk)
        assert fed <= alone
        for unit, tree in zip(units, blocks, strict=True):  # the blocks tile each tree in order
            assert [b.start for b in tree] == [0, *[b.end for b in tree[:-1]]]
            assert tree[-1].end == sum(len(s.tokens) for s in unit)


@pytest.fixture(scope="module")
def tiny_llama() -> LlamaForCausalLM:
    """A 2-layer random Llama with SmolLM2's vocabulary size (the real token ids fit)."""
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=49152,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        attn_implementation="sdpa",
    )  # type: ignore[call-arg]
    return LlamaForCausalLM(config).eval()


def _counting_sdpa(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    counted: list[int] = []
    real = hf_attention._sdpa()

    def spy(module, query, key, value, mask, **kwargs):  # type: ignore[no-untyped-def]
        if mask is not None:
            counted.append(mask.shape[0] * mask.shape[-2] * mask.shape[-1])
        return real(module, query, key, value, mask, **kwargs)

    monkeypatch.setattr(hf_attention, "_sdpa", lambda: spy)
    return counted


def _naive(model, ids: list[int]) -> torch.Tensor:  # type: ignore[no-untyped-def]
    with torch.inference_mode():
        return torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)


@pytest.mark.parametrize("policy", [CPU, CUDA], ids=["cpu", "cuda"])
def test_model_attends_within_each_question_on_real_enem(  # type: ignore[no-untyped-def]
    enem_splits, tiny_llama, policy, monkeypatch
) -> None:
    """Real S5 questions (mixed order) through a model: the kernel's calls counted, scores exact.

    CPU policy: 32 questions, per-block SDPA calls, their pairs within 1.1 × each question's own.
    CUDA policy: 8 questions (eager FlexAttention on the CPU scores every pair of the row), exactly
    one attention kernel call per decoder-layer call (FlexAttention over the whole row), no SDPA
    call, no per-question call.
    """
    chunk = _chunk(enem_splits["S5"], "mixed", 8 if policy.flex_attention else 32)
    contexts, tails = [c for c, _ in chunk], [t for _, t in chunk]
    _, _, _, need = _plan(chunk)
    counted = _counting_sdpa(monkeypatch)
    events = _kernel_log(monkeypatch, tiny_llama)
    last, scores = score_tree(tiny_llama, contexts, tails, None, policy)
    layers = tiny_llama.config.num_hidden_layers
    per_layer_call: list[tuple[str, list[str]]] = []  # each attention layer's call: its kernels
    for event in events:
        if event.startswith("layer "):
            per_layer_call.append((event[6:], []))
        else:
            per_layer_call[-1][1].append(event)
    tree_calls = [kernels for impl, kernels in per_layer_call if impl != "sdpa"]  # not the prefix's call
    assert len(tree_calls) == layers  # one model call over the row
    if policy.flex_attention:
        assert tree_calls == [["flex_attention"]] * layers  # exactly one kernel call per layer call
    else:
        assert all(len(k) > 1 and set(k) == {"sdpa"} for k in tree_calls)  # one per block
        assert counted and len(counted) % layers == 0
        assert sum(counted) // layers <= 1.1 * need
    monkeypatch.undo()
    for q in range(0, len(chunk), len(chunk) // 4):  # against each option's full sequence run alone
        for tail, got in zip(tails[q], scores[q], strict=True):
            full = _naive(tiny_llama, contexts[q] + tail)
            want = [float(full[len(contexts[q]) + j - 1, tok]) for j, tok in enumerate(tail)]
            assert got == pytest.approx(want, abs=1e-5)
        assert torch.allclose(last[q], full[len(contexts[q]) - 1], atol=1e-5)


def _kernel_log(monkeypatch: pytest.MonkeyPatch, model: LlamaForCausalLM) -> list[str]:
    """In order: each attention layer's call (``layer <implementation>``) and each kernel call."""
    events: list[str] = []
    real_kernel, real_sdpa = hf_flex.kernel, torch.nn.functional.scaled_dot_product_attention

    def kernel(device):  # type: ignore[no-untyped-def]
        def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
            events.append("flex_attention")
            return real_kernel(device)(*args, **kwargs)

        return counted

    def sdpa(*args, **kwargs):  # type: ignore[no-untyped-def]
        events.append("sdpa")
        return real_sdpa(*args, **kwargs)

    monkeypatch.setattr(hf_flex, "kernel", kernel)
    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", sdpa)
    for layer in model.model.layers:
        hooks.append(
            layer.self_attn.register_forward_pre_hook(
                lambda *_a: events.append(f"layer {model.config._attn_implementation}")
            )
        )
    return events


hooks: list[torch.utils.hooks.RemovableHandle] = []


@pytest.fixture(autouse=True)
def _remove_hooks():  # type: ignore[no-untyped-def]
    yield
    while hooks:
        hooks.pop().remove()


def test_score_tree_reads_the_scores_back_once(enem_splits, tiny_llama, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """No host synchronisation per scored token: the reads back do not grow with the questions."""
    reads: list[str] = []
    for name in ("item", "tolist", "cpu", "numpy", "__float__", "__int__", "__bool__"):
        real = getattr(torch.Tensor, name)

        def counted(self, *args, _real=real, _name=name, **kwargs):  # type: ignore[no-untyped-def]
            reads.append(_name)
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, name, counted)
    chunk = enem_splits["S5"]
    per_size = []
    for size in (2, 12):
        reads.clear()
        _, scores = score_tree(tiny_llama, [c for c, _ in chunk[:size]], [t for _, t in chunk[:size]])
        per_size.append(list(reads))
        assert sum(len(t) for per_q in scores for t in per_q) > 10 * size  # tokens scored
    assert per_size[0] == per_size[1]  # the same reads for 2 questions as for 12
    assert per_size[1].count("tolist") == 1 and len(per_size[1]) <= 3, per_size[1]
