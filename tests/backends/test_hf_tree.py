"""Tree scoring (one call per chunk, attention per tree) against naive full-sequence runs of the real model."""

from pathlib import Path

import pytest
import torch
from tests.conftest import executor_for
from transformers import Gemma3TextConfig, LlamaConfig

from enade_bench.backends.hf_prefix import PrefixStore, common_prefix_length
from enade_bench.backends.hf_tree import Segment, radix_units, score_tree, supports_tree, tree_mask
from enade_bench.config import DatasetConfig, EvaluationConfig
from enade_bench.dataset.loader import load_dataset
from enade_bench.strategies.registry import STRATEGIES, Strategy

ROOT = Path(__file__).resolve().parents[2]


def test_tree_mask_lets_each_token_see_its_ancestors_only() -> None:
    # root [a b c], two children of the root [d e] and [f g], two cached tokens
    segments = [Segment([1, 2, 3]), Segment([4, 5], 0), Segment([6, 7], 0)]
    mask = tree_mask(segments, past=2)
    assert mask.shape == (7, 9)
    assert mask[:, :2].all()  # every token sees the cache
    assert mask[0, 2:].tolist() == [True] + [False] * 6  # causal inside the root
    row_f = mask[5]  # first token of the second child
    assert row_f[2:5].all() and not row_f[5:7].any()  # the root yes, the sibling no
    assert row_f[7] and not row_f[8]  # itself, not what follows


def test_parent_must_come_first() -> None:
    with pytest.raises(ValueError, match="earlier segment"):
        tree_mask([Segment([1], 1), Segment([2])], past=0)


def test_radix_units_run_shared_heads_and_identical_tails_once() -> None:
    contexts = [[1, 2, 3, 4], [1, 2, 5], [1, 2, 3, 4], [7, 8], [1, 2, 3]]
    tails = [[[9], [10, 11]], [[9]], [[10, 11], [12]], [[9]], []]
    units, ends, tail_segs = radix_units(contexts, tails)
    assert len(units) == 2  # contexts starting with 1, and the one starting with 7
    first = [(list(s.tokens), s.parent) for s in units[0]]
    # depth first, each node's tails right after it: [1 2] [3] [4] (its tails) [5] (its tail)
    assert first == [
        ([1, 2], None),
        ([3], 0),
        ([4], 1),
        ([9], 2),
        ([10, 11], 2),
        ([12], 2),
        ([5], 0),
        ([9], 6),
    ]
    assert ends[0] == ends[2] == (0, 2) and ends[4] == (0, 1) and ends[1] == (0, 6) and ends[3] == (1, 0)
    assert tail_segs[0][1] == tail_segs[2][0]  # identical context and tail: one segment
    assert tail_segs[0][0] != tail_segs[1][0]  # the same tail under another context: its own
    n_tail = sum(
        len(units[0][s].tokens) for u, s in {seg for per_q in tail_segs for seg in per_q if seg} if u == 0
    )
    assert n_tail == 1 + 2 + 1 + 1  # [9] [10 11] [12] under [1 2 3 4]; [9] under [1 2 5]
    for unit in units:
        assert all(s.parent is None or s.parent < i for i, s in enumerate(unit))


def test_score_tree_shares_shuffled_option_lists_exactly(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    """first_token shuffles: contexts that share more than the common prefix, against naive runs."""
    backend = smollm2_backend
    (question,) = load_dataset(
        DatasetConfig(path=str(ROOT / "data" / "enade_demo.csv"), benchmark="enade")
    ).questions[:1]
    strategy = Strategy("FT", "first_token", "zero", True, 6)
    executor = executor_for(backend, strategy, [question])
    items = executor.plan.items
    contexts = [backend.encode(backend.render(executor.plan.prompt_of(it))) for it in items]
    contexts.append(contexts[0])  # an identical context
    cp = common_prefix_length(contexts)
    units, _, _ = radix_units([c[cp:] for c in contexts], [[] for _ in contexts])
    # six orders of five options: two begin with the same option (and the copy costs nothing)
    assert sum(len(s.tokens) for u in units for s in u) < sum(len(c) - cp for c in contexts[:-1])
    last, _ = score_tree(backend.model, contexts, [[] for _ in contexts], PrefixStore())
    for k, ctx in enumerate(contexts):
        assert torch.allclose(last[k], _naive(backend.model, ctx)[-1], atol=1e-4)


def test_supports_tree_refuses_sliding_window_models() -> None:
    llama = LlamaConfig(num_hidden_layers=1)
    llama._attn_implementation = "sdpa"
    gemma = Gemma3TextConfig(num_hidden_layers=2)
    gemma._attn_implementation = "sdpa"

    def model(config, switchable=True):  # type: ignore[no-untyped-def]
        attrs = {
            "config": config,
            "get_output_embeddings": lambda self: torch.nn.Identity(),
            "_can_set_attn_implementation": lambda self: switchable,
        }
        return type("M", (), attrs)()

    assert supports_tree(model(llama))
    assert not supports_tree(model(gemma))
    assert not supports_tree(model(llama, switchable=False))  # attention not taken from AttentionInterface
    llama._attn_implementation = "flash_attention_2"
    assert not supports_tree(model(llama))
    llama._attn_implementation = "eager"  # the tree attention runs SDPA, not the model's eager code
    assert not supports_tree(model(llama))


def _naive(model, ids: list[int]) -> torch.Tensor:  # type: ignore[no-untyped-def]
    with torch.inference_mode():
        return torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)


def test_score_tree_equals_each_sequence_run_alone(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    """Contexts of different lengths (side by side in one row) and options of different lengths."""
    backend = smollm2_backend
    questions = load_dataset(
        DatasetConfig(path=str(ROOT / "data" / "enade_demo.csv"), benchmark="enade")
    ).questions[:3]
    executor = executor_for(backend, STRATEGIES["S5"], questions)
    items = executor.plan.items
    split = [
        backend._split_ids((executor.plan.prompt_of(it), tuple(" " + o for o in it.options))) for it in items
    ]
    expected = []
    for ctx, tails in split:
        full = [_naive(backend.model, ctx + tail) for tail in tails]
        lps = [
            [float(f[len(ctx) + j - 1, tok]) for j, tok in enumerate(t)]
            for f, t in zip(full, tails, strict=True)
        ]
        expected.append((full[0][len(ctx) - 1], lps))
    store = PrefixStore()
    for attempt in range(2):  # the second time the shared prefix comes from the store
        last, scores = score_tree(backend.model, [c for c, _ in split], [t for _, t in split], store)
        for q, (after_context, lps) in enumerate(expected):
            assert torch.allclose(last[q], after_context, atol=1e-4)
            for got, want in zip(scores[q], lps, strict=True):
                assert got == pytest.approx(want, abs=1e-4)
        assert (store.stats.reused > 0) == (attempt == 1)
        assert backend.model.config._attn_implementation == "sdpa"  # the model's own attention again


def test_score_tree_runs_no_continuation_last_token(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    """One-token options and options that differ only in their last token: exact, and not run."""
    backend = smollm2_backend
    ctx = backend.encode("Pergunta: qual alternativa? Resposta:")
    a, b, c, d = backend.encode(" A B C D")[:4]
    tails = [[a], [b, c], [b, d], [b, c, d]]
    store = PrefixStore()
    _, scores = score_tree(backend.model, [ctx, ctx], [tails, tails[:1]], store)
    full = _naive(backend.model, [*ctx, b, c, d])
    want = [
        [float(full[len(ctx) - 1, a])],
        [float(full[len(ctx) - 1, b]), float(full[len(ctx), c])],
        [float(full[len(ctx) - 1, b]), float(full[len(ctx), d])],
        [float(full[len(ctx) - 1, b]), float(full[len(ctx), c]), float(full[len(ctx) + 1, d])],
    ]
    for got, expected in zip(scores[0], want, strict=True):
        assert got == pytest.approx(expected, abs=1e-4)
    assert scores[1][0] == pytest.approx(want[0], abs=1e-4)
    # the shared head (all but the context's last token), that last token, [b] once, [b c]
    # once; a and d are never run
    assert store.stats.computed == (len(ctx) - 1) + 1 + 1 + 2


@pytest.mark.slow
def test_executor_predictions_identical_with_and_without_tree_and_store(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    """S5, first_token (one-shot) and S2 on the demo: the batched path against store + tree (S6 is
    S5 after the one-shot prefix that first_token's one-shot run takes from the store here)."""
    backend = smollm2_backend
    questions = list(
        load_dataset(DatasetConfig(path=str(ROOT / "data" / "enade_demo.csv"), benchmark="enade")).questions[
            :4
        ]
    )
    strategies = [
        STRATEGIES["S5"],
        STRATEGIES["S2"],
        Strategy("FT1", "first_token", "one", False),
    ]
    # two chunks of two: the second takes its prefix from the store, and each row holds two trees
    evaluation = EvaluationConfig(batch_size=2, max_new_tokens=4)
    store, tree = backend.prefix_store, backend.tree
    try:
        for strategy in strategies:
            runs = []
            for on in (False, True):
                backend.prefix_store = PrefixStore() if on else None
                backend.tree = tree and on
                executor = executor_for(backend, strategy, questions, evaluation)
                runs.append([r for c in executor.plan.chunks for r in executor.run(c)])
            for old, new in zip(*runs, strict=True):
                assert (old.prediction, old.raw_output) == (new.prediction, new.raw_output), strategy.id
                for letter, value in (old.option_scores or {}).items():
                    assert new.option_scores is not None
                    assert new.option_scores[letter] == pytest.approx(value, abs=1e-4)
    finally:
        backend.prefix_store, backend.tree = store, tree
