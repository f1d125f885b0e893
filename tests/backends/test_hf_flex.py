"""One FlexAttention call over a packed row: its mask, its BlockMask and its output.

The element mask is checked against :func:`.hf_tree.tree_mask` (the per-tree path's), the
BlockMask tile by tile against that element mask (no attended pair in a skipped tile, no
masked pair in a full one), and the output against SDPA with the dense mask, eager and
through a compiled CPU kernel (which, unlike the eager reference, skips the tiles).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from enade_bench.backends import hf_flex
from enade_bench.backends.hf_batching import BatchingPolicy
from enade_bench.backends.hf_flex import BLOCK, FlexPlan, flex_attention_forward, row_plan
from enade_bench.backends.hf_tree import Segment, subtree_ends, tree_mask

TREES = [
    [Segment([1, 2, 3]), Segment([4, 5], 0), Segment([6, 7, 8], 1), Segment([9], 0), Segment([10, 11])],
    [Segment([12, 13])],
    [Segment([14]), Segment([15, 16], 0), Segment([17], 0)],
]


def _reach(trees: list[list[Segment]]) -> list[int]:
    out, offset = [], 0
    for segments in trees:
        out += [
            offset + end
            for end, seg in zip(subtree_ends(segments), segments, strict=True)
            for _ in seg.tokens
        ]
        offset += sum(len(s.tokens) for s in segments)
    return out


def _dense(plan: FlexPlan, past: int, n: int) -> torch.Tensor:
    assert plan.pos is not None and plan.reach is not None
    q = torch.arange(n)[:, None]
    return (plan.pos[None, : past + n] <= q) & (q < plan.reach[None, : past + n])


def test_the_row_mask_is_each_trees_own_mask() -> None:
    past = 4
    lengths = [sum(len(s.tokens) for s in t) for t in TREES]
    n = sum(lengths)
    want = torch.zeros((n, past + n), dtype=torch.bool)
    want[:, :past] = True
    start = 0
    for segments, m in zip(TREES, lengths, strict=True):
        want[start : start + m, past + start : past + start + m] = tree_mask(segments, past)[:, past:]
        start += m
    assert torch.equal(_dense(row_plan(past, _reach(TREES), torch.device("cpu")), past, n), want)


def test_a_tree_not_laid_out_depth_first_is_refused() -> None:
    with pytest.raises(ValueError, match="depth first"):
        subtree_ends([Segment([1]), Segment([2]), Segment([3], 0)])


def _random_row(rng: random.Random) -> tuple[int, list[int]]:
    """A packed prefill row: the prefix's rest, then questions of random lengths."""
    rest = rng.randrange(0, 60)
    lengths = [rng.randrange(1, 400) for _ in range(rng.randrange(1, 9))]
    n = rest + sum(lengths)
    reach, end = [n] * rest, rest
    for m in lengths:
        end += m
        reach += [end] * m
    return rng.randrange(0, 300), reach


def _tiles(num: torch.Tensor, idx: torch.Tensor, kb: int) -> torch.Tensor:
    out = torch.zeros((num.shape[-1], kb), dtype=torch.bool)
    for row in range(num.shape[-1]):
        out[row, idx[0, 0, row, : num[0, 0, row]].long()] = True
    return out


@pytest.mark.parametrize("seed", range(6))
def test_the_block_mask_keeps_every_attended_tile_and_fills_only_whole_ones(seed: int) -> None:
    past, reach = _random_row(random.Random(seed))
    n = len(reach)
    plan = row_plan(past, reach, torch.device("cpu"))
    mask = plan.block_mask
    keys = past + n
    qb, kb = -(-n // BLOCK), -(-keys // BLOCK)
    dense = torch.zeros((qb * BLOCK, kb * BLOCK), dtype=torch.bool)
    dense[:n, :keys] = _dense(plan, past, n)
    any_pair = dense.view(qb, BLOCK, kb, BLOCK).any(dim=(1, 3))
    dense[n:, :keys] = True  # padding queries: their output is dropped, a full tile may hold them
    all_pairs = dense.view(qb, BLOCK, kb, BLOCK).all(dim=(1, 3))
    partial = _tiles(mask.kv_num_blocks, mask.kv_indices, kb)
    full = _tiles(mask.full_kv_num_blocks, mask.full_kv_indices, kb)
    assert not (partial & full).any()
    assert torch.equal(
        any_pair & ~(partial | full), torch.zeros_like(any_pair)
    )  # nothing attended is skipped
    assert torch.equal(full & ~all_pairs, torch.zeros_like(full))  # a full tile attends every pair
    assert mask.seq_lengths == (n, keys)


def test_other_questions_tiles_are_skipped_and_the_prefix_tiles_full() -> None:
    """256 cached tokens, then 4 questions of 512: a question's queries read 2 prefix tiles whole."""
    past, m = 2 * BLOCK, 4 * BLOCK
    reach = [end for q in range(4) for end in [(q + 1) * m] * m]
    mask = row_plan(past, reach, torch.device("cpu")).block_mask
    kb = (past + len(reach)) // BLOCK
    partial = _tiles(mask.kv_num_blocks, mask.kv_indices, kb)
    full = _tiles(mask.full_kv_num_blocks, mask.full_kv_indices, kb)
    for qtile in range(len(reach) // BLOCK):
        question, within = divmod(qtile, 4)
        own = 2 + 4 * question  # the question's first key tile
        assert full[qtile].nonzero().flatten().tolist() == [0, 1, *range(own, own + within)]
        assert partial[qtile].nonzero().flatten().tolist() == [own + within]  # the diagonal tile


def _qkv(n: int, keys: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(1, 6, n, 16, generator=g),
        torch.randn(1, 2, keys, 16, generator=g),
        torch.randn(1, 2, keys, 16, generator=g),
    )


def test_one_flex_call_equals_sdpa_with_the_dense_mask() -> None:
    past, reach = _random_row(random.Random(1))
    n = len(reach)
    plan = row_plan(past, reach, torch.device("cpu"))
    plan.bind()
    q, k, v = _qkv(n, past + n)
    got, _ = flex_attention_forward(None, q, k, v, None, scaling=0.25, flex_plan=plan)
    want = F.scaled_dot_product_attention(
        q, k, v, attn_mask=_dense(plan, past, n)[None, None], scale=0.25, enable_gqa=True
    ).transpose(1, 2)
    assert got.shape == (1, n, 6, 16)
    assert torch.allclose(got, want, atol=1e-5)


def test_a_decode_step_reads_the_shared_prefix_and_each_rows_written_columns() -> None:
    """One query per row over one cache (key batch 1): row ``b`` attends the prefix and the columns
    of its own region written so far (its question, the steps), as SDPA with that dense mask."""
    from enade_bench.backends.hf_slots import SlotCache

    prefix, own, steps = 100, [5, 130, 60], 3
    width = prefix + sum(own) + 3 * steps + 1  # one column for the padding row (4 rows)
    cache = SlotCache.for_rows(prefix, own, steps, width, torch.device("cpu"))
    cache.advance(0)
    plan = cache.advance(1)
    plan.bind()
    seen = torch.zeros((4, width), dtype=torch.bool)
    seen[:3, :prefix] = True
    start = prefix
    for r, m in enumerate(own):
        seen[r, start : start + m + 2] = True  # its question, then steps 0 and 1
        start += m + steps
    seen[3, start] = True  # the padding row: its one column, nothing else
    g = torch.Generator().manual_seed(0)
    q = torch.randn(4, 6, 1, 16, generator=g)
    k, v = (torch.randn(1, 2, width, 16, generator=g) for _ in range(2))
    got, _ = flex_attention_forward(None, q, k, v, None, flex_plan=plan)
    want = F.scaled_dot_product_attention(
        q, k.expand(4, -1, -1, -1), v.expand(4, -1, -1, -1), attn_mask=seen[:, None, None], enable_gqa=True
    )
    assert torch.allclose(got, want.transpose(1, 2), atol=1e-5)
    tiles = _tiles(plan.block_mask.kv_num_blocks[1:2], plan.block_mask.kv_indices[1:2], -(-width // BLOCK))
    full = _tiles(
        plan.block_mask.full_kv_num_blocks[1:2], plan.block_mask.full_kv_indices[1:2], -(-width // BLOCK)
    )
    assert (tiles | full)[0].nonzero().flatten().tolist() == [0, 1]  # row 1: the prefix's tile and its own
    assert plan.block_mask.q_num_blocks is None  # no transposed tiles: no backward pass runs


def test_flex_attention_needs_its_plan() -> None:
    q = torch.randn(1, 2, 3, 4)
    with pytest.raises(ValueError, match="flex_plan"):
        flex_attention_forward(None, q, q, q, None)


@pytest.mark.slow
def test_inductors_kernel_skips_the_tiles_and_gives_the_same_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's own compile call with the real Inductor on the CPU (static shapes: its C++ template
    fails to build with dynamic ones in torch 2.13) honours the BlockMask's skipped and full tiles
    (the eager reference does not look at them): SDPA's output with the dense mask, within 1e-5."""
    monkeypatch.setattr(hf_flex, "COMPILE", hf_flex.CompileSettings(frozenset({"cpu"}), "inductor", False))
    monkeypatch.setattr(hf_flex, "_COMPILED", {})
    past, reach = _random_row(random.Random(3))
    n = len(reach)
    plan = row_plan(past, reach, torch.device("cpu"))
    plan.bind()
    q, k, v = _qkv(n, past + n, seed=3)
    got, _ = flex_attention_forward(None, q, k, v, None, scaling=0.25, flex_plan=plan)
    want = F.scaled_dot_product_attention(
        q, k, v, attn_mask=_dense(plan, past, n)[None, None], scale=0.25, enable_gqa=True
    )
    assert list(hf_flex._COMPILED) == [("cpu", "'inductor'", False)]  # compiled, not eager
    assert torch.allclose(got, want.transpose(1, 2), atol=1e-5)


# -- the compiled kernel, on the CPU (issue 49): aot_eager standing for Inductor ----------------


def _llama() -> Any:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=512,
        hidden_size=96,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=6,
        num_key_value_heads=3,
        attn_implementation="sdpa",
    )  # type: ignore[call-arg]
    return LlamaForCausalLM(config).eval()


@pytest.fixture(scope="module")
def llama() -> Any:
    return _llama()


@dataclass
class Compiled:
    """The graphs :func:`hf_flex.kernel` compiled (kind, dtype, the query's batch as traced) and which
    of them the backend refuses (``fail``), raising as a backend whose compiler breaks does."""

    graphs: list[tuple[str, torch.dtype, Any]] = field(default_factory=list)
    fail: Callable[[str, torch.dtype, Any], bool] = lambda *_: False


@pytest.fixture
def compiled_here(monkeypatch: pytest.MonkeyPatch) -> Iterator[Compiled]:
    """:func:`hf_flex.kernel` compiles on the CPU as on CUDA, with ``aot_eager``; yields the graphs made."""
    from torch._dynamo.backends.registry import lookup_backend

    made = Compiled()
    aot = lookup_backend("aot_eager")

    def counting(gm: Any, example_inputs: Any) -> Any:
        query = next(t for t in example_inputs if isinstance(t, torch.Tensor) and t.dim() == 4)
        kind = "decode" if query.shape[2] == 1 else "row"  # one query per row; a row's length a symbol
        made.graphs.append((kind, query.dtype, query.shape[0]))
        if made.fail(kind, query.dtype, query.shape[0]):
            raise RuntimeError(f"no {kind} kernel today")
        return aot(gm, example_inputs)

    monkeypatch.setattr(hf_flex, "COMPILE", hf_flex.CompileSettings(frozenset({"cpu", "cuda"}), counting))
    monkeypatch.setattr(hf_flex, "_COMPILED", {})
    for name, empty in (("_PROVEN", set()), ("_FAILED", {}), ("_ENTERED", {})):
        monkeypatch.setattr(hf_flex, name, empty)
    torch._dynamo.reset()
    yield made
    torch._dynamo.reset()


def _scoring_chunk(seed: int, n: int) -> tuple[list[list[int]], list[list[list[int]]]]:
    rng = random.Random(seed)
    head = [rng.randrange(1, 512) for _ in range(30)]
    contexts = [head + [rng.randrange(1, 512) for _ in range(rng.randrange(100, 300))] for _ in range(n)]
    tails = [
        [[rng.randrange(1, 512) for _ in range(rng.randrange(1, 6))] for _ in range(5)] for _ in range(n)
    ]
    return contexts, tails


def _backend(model: Any) -> Any:
    """What :meth:`.HFLocalBackend._attend` reads, under the CUDA policy on the CPU."""
    return SimpleNamespace(
        batching=BatchingPolicy.for_device("cuda"),
        device=torch.device("cpu"),
        model=model,
        attention_fallbacks=[],
    )


def _score(backend: Any, seed: int, n: int = 2) -> Any:
    from enade_bench.backends.hf_local import HFLocalBackend
    from enade_bench.backends.hf_tree import score_tree

    contexts, tails = _scoring_chunk(seed, n)
    got = HFLocalBackend._attend(
        backend, ("scoring",), lambda p: score_tree(backend.model, contexts, tails, None, p)
    )
    return got, score_tree(backend.model, contexts, tails, None, BatchingPolicy.for_device("cpu"))


def _generate(backend: Any, rows: int, seed: int = 0) -> tuple[list[list[int]], list[list[int]]]:
    from enade_bench.backends.base import GenerationParams
    from enade_bench.backends.hf_generate import generate_shared
    from enade_bench.backends.hf_local import HFLocalBackend

    seqs = [c[: 110 + 2 * i] for i, c in enumerate(_scoring_chunk(seed, rows)[0])]
    params = GenerationParams(max_new_tokens=3)
    got = HFLocalBackend._attend(
        backend,
        ("prefill", "decode"),
        lambda p: generate_shared(backend.model, seqs, params, 0, set(), None, p),
    )
    cpu = BatchingPolicy.for_device("cpu")
    return got, generate_shared(backend.model, seqs, params, 0, set(), None, cpu)


def _warnings(capsys: pytest.CaptureFixture[str]) -> list[str]:
    err = capsys.readouterr().err.splitlines()
    assert all(line.startswith("warning: compiled FlexAttention failed (") for line in err), err
    return err


def test_a_failing_decode_graph_falls_back_alone(llama, compiled_here, capsys) -> None:  # type: ignore[no-untyped-def]
    """Scoring compiled and proven, then the decode graph fails to compile: that chunk and every later
    generation run the CPU policy's code (its tokens exactly), with one warning line; scoring stays compiled."""
    from enade_bench.backends.hf_local import HFLocalBackend

    compiled_here.fail = lambda kind, *_: kind == "decode"
    backend = _backend(llama)
    got, want = _score(backend, 0)
    assert torch.allclose(got[0], want[0], atol=1e-5)
    assert [k for k, *_ in compiled_here.graphs] == ["row"] and not _warnings(capsys)
    tokens, cpu = _generate(backend, 3)
    assert tokens == cpu  # the CPU policy's own code: its tokens
    err = _warnings(capsys)
    assert len(err) == 1 and "decode float32 batch 4: BackendCompilerFailed" in err[0], err
    assert "no decode kernel today" in err[0]
    graphs = len(compiled_here.graphs)
    tokens, cpu = _generate(backend, 4, seed=1)  # falls back silently, compiles nothing
    assert tokens == cpu
    _score(backend, 1)
    assert len(compiled_here.graphs) == graphs and not _warnings(capsys)
    assert set(hf_flex._FAILED) == {("cpu", "float32", "decode")}
    attention = HFLocalBackend.attention.fget(backend)  # type: ignore[attr-defined]
    assert attention.startswith("flex (sdpa where flex failed: decode float32 batch 4: BackendCompilerFailed")


def test_a_graph_failing_in_float32_or_on_a_later_chunk_falls_back_alone(
    llama, compiled_here, capsys
) -> None:  # type: ignore[no-untyped-def]
    """The backend refuses float32 graphs and a decode batch of 8: bfloat16 scoring compiles; float32
    scoring falls back (the float32 check's case); a first generation chunk (3 rows: decode batch 4)
    compiles, its second (5 rows: batch 8) falls back, each with one warning line naming its graph."""
    import copy

    compiled_here.fail = lambda kind, dtype, batch: dtype == torch.float32 or batch == 8
    half = _backend(copy.deepcopy(llama).to(torch.bfloat16))
    got, want = _score(half, 0)
    assert torch.allclose(got[0].float(), want[0].float(), atol=0.1) and not _warnings(capsys)
    full = _backend(llama)
    got, want = _score(full, 0)
    assert torch.equal(got[0], want[0]) and got[1] == want[1]  # the CPU policy's code, exactly
    assert "scoring float32: BackendCompilerFailed" in " ".join(_warnings(capsys))
    tokens, cpu = _generate(half, 3)
    assert tokens == cpu and not _warnings(capsys)
    tokens, cpu = _generate(half, 5)
    assert tokens == cpu
    err = _warnings(capsys)
    assert len(err) == 1 and "decode bfloat16 batch 8: BackendCompilerFailed" in err[0], err
    assert [g[:2] for g in compiled_here.graphs] == [
        ("row", torch.bfloat16),
        ("row", torch.float32),
        ("decode", torch.bfloat16),
        ("decode", torch.bfloat16),
    ]
    _score(half, 1)
    assert not _warnings(capsys) and len(compiled_here.graphs) == 4  # bfloat16 scoring: still compiled


def test_an_out_of_memory_error_is_not_a_fallback(compiled_here) -> None:  # type: ignore[no-untyped-def]
    """Running out of memory is the runner's to halve (``run_halving``), not a reason to leave FlexAttention."""

    def oom(_policy: BatchingPolicy) -> None:
        raise torch.OutOfMemoryError("CUDA out of memory")

    with pytest.raises(torch.OutOfMemoryError):
        hf_flex.attend_or_fall_back(
            BatchingPolicy.for_device("cuda"), torch.device("cpu"), torch.float32, ("scoring",), oom
        )


def test_the_compiled_kernel_scores_as_the_eager_one_in_at_most_two_graphs(llama, compiled_here) -> None:  # type: ignore[no-untyped-def]
    """8 S5 chunks of different lengths, 3 S1 chunks of 8, 5 and 7 rows (one padded decode batch, 8):
    the compiled path's scores and tokens are the eager path's, and Dynamo makes at most 2 graphs
    (no duck-sizing coincidence recompiles, and the attention's scale, a float, does not restart a
    trace), the decode graph's batch a constant (Inductor's flex-decoding needs it), not a symbol."""
    from enade_bench.backends.base import GenerationParams
    from enade_bench.backends.hf_generate import generate_shared
    from enade_bench.backends.hf_tree import score_tree

    cuda = BatchingPolicy.for_device("cuda")
    eager: list[Any] = []
    for seed in range(8):
        contexts, tails = _scoring_chunk(seed, 2)
        got_last, got = score_tree(llama, contexts, tails, None, cuda)
        eager.append((contexts, tails, got_last, got))
    assert len(compiled_here.graphs) >= 1  # the kernel was compiled, not run eager
    for rows in (8, 5, 7):  # the same tokens as the CPU policy's on the first (the counts need no more)
        seqs = [c[: 110 + 2 * i] for i, c in enumerate(_scoring_chunk(rows, rows)[0])]
        tokens = generate_shared(llama, seqs, GenerationParams(max_new_tokens=2), 0, set(), None, cuda)
        if rows == 8:
            assert tokens == generate_shared(
                llama,
                seqs,
                GenerationParams(max_new_tokens=2),
                0,
                set(),
                None,
                BatchingPolicy.for_device("cpu"),
            )
    assert len(compiled_here.graphs) <= 2, compiled_here.graphs  # the rows' (scoring, prefill) and decode's
    assert [(kind, type(batch)) for kind, _, batch in compiled_here.graphs] == [("row", int), ("decode", int)]
    assert compiled_here.graphs[1][2] == 8
    with pytest.MonkeyPatch.context() as patch:  # the eager kernel: the reference
        patch.setattr(hf_flex, "COMPILE", hf_flex.CompileSettings(frozenset()))
        for contexts, tails, got_last, got in eager:
            want_last, want = score_tree(llama, contexts, tails, None, cuda)
            assert torch.allclose(got_last, want_last, atol=1e-5)
            assert (
                max(
                    abs(a - b)
                    for g, w in zip(got, want, strict=True)
                    for x, y in zip(g, w, strict=True)
                    for a, b in zip(x, y, strict=True)
                )
                < 1e-5
            )
