"""Local Hugging Face models: batched generation and prefix-shared scoring.

Scoring never recomputes what prompts share.  For a group of token sequences
the longest common prefix is run once (its key/value cache is then repeated
across the batch), and only the differing suffixes are run, as one padded
batch.  The output layer is applied only at the positions where a score is
needed (``logits_to_keep``), not to the whole batch × length × vocabulary.

* ``log_prob``: the context is shared by every option, so each question costs
  one pass over the stem plus one short batch over the options.
* ``first_token``: prompts that differ only after the stem (option shuffles of
  one question) share the stem; unrelated prompts still share the instruction.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import torch

from enade_bench.backends.base import ContinuationScore, Generation, GenerationParams
from enade_bench.backends.chat_render import continuation_tokens
from enade_bench.backends.hf_ahead import TokenizeAhead
from enade_bench.backends.hf_batch_size import MOST, auto_batch_size
from enade_bench.backends.hf_batching import BatchingPolicy
from enade_bench.backends.hf_flex import attend_or_fall_back
from enade_bench.backends.hf_generate import generate_shared, prefill
from enade_bench.backends.hf_load import ModelSource
from enade_bench.backends.hf_prefix import PrefixStore, common_prefix_length, plain_cache
from enade_bench.backends.hf_tree import score_tree, supports_tree
from enade_bench.backends.model_info import LocalModel
from enade_bench.config import ModelConfig
from enade_bench.prompts.builder import PromptParts
from enade_bench.results.records import Usage

_T = TypeVar("_T")


def _per_prompt(
    texts: Sequence[str], prompts: Sequence[Sequence[int]], generated: Sequence[int]
) -> list[Generation]:
    """Group decoded texts (``n_samples`` consecutive rows per prompt) by prompt, with the tokens
    each prompt's model read and those its rows ``generated`` (added over its samples)."""
    per = len(texts) // len(prompts)
    return [
        Generation(
            texts=list(texts[i * per : (i + 1) * per]),
            usage=Usage(input_tokens=len(ids), output_tokens=sum(generated[i * per : (i + 1) * per])),
        )
        for i, ids in enumerate(prompts)
    ]


class HFLocalBackend(LocalModel):
    """A causal (decoder-only) or seq2seq model from ``transformers``, run locally."""

    def __init__(self, cfg: ModelConfig, model: Any, tokenizer: Any, source: ModelSource) -> None:
        dtype = str(next(model.parameters()).dtype).removeprefix("torch.")
        super().__init__(cfg, tokenizer, source, "transformers", dtype)
        self.model = model
        self.seq2seq = cfg.type == "seq2seq"
        device = cfg.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if not getattr(model, "hf_device_map", None):
            self.model.to(device)
        self.device = next(model.parameters()).device
        #: How to batch on this device (:mod:`.hf_batching`); a test may set another device's.
        self.batching = BatchingPolicy.for_device(self.device.type)
        #: The compiled graphs that fell back, each with its error (:attr:`attention`).
        self.attention_fallbacks: list[str] = []
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.pad_id = int(pad if pad is not None else 0)
        #: The run-wide prefix cache (:mod:`.hf_prefix`), shared by every method and strategy.
        #: None where the cache keeps only a window of the past (sliding-window layers).
        self.prefix_store: PrefixStore | None = PrefixStore() if plain_cache(model) else None
        #: Score a chunk in one pass, attention per question tree (:mod:`.hf_tree`), where the model allows.
        self.tree = not self.seq2seq and supports_tree(model)
        #: The longest prompt read, its end kept (``evaluation.truncate: left``; None: all).
        self.prompt_limit: int | None = None
        #: The next chunk's token ids, computed on a worker thread (:mod:`.hf_ahead`).
        self.ahead = TokenizeAhead()

    @property
    def attention(self) -> str:
        """The attention path chunks run on: ``flex`` (one FlexAttention call per layer) or ``sdpa``
        (per question tree), with each compiled graph that fell back to ``sdpa`` and its error."""
        path = "flex" if self.batching.flex_attention else "sdpa"
        failed = "; ".join(self.attention_fallbacks)
        return f"{path} (sdpa where flex failed: {failed})" if failed else path

    def _attend(self, kinds: tuple[str, ...], run: Callable[[BatchingPolicy], _T]) -> _T:
        """``run(self.batching)``, a call needing the compiled graphs ``kinds``, on the SDPA path
        where one of them failed (:func:`.hf_flex.attend_or_fall_back`)."""
        dtype = next(self.model.parameters()).dtype
        out, error = attend_or_fall_back(self.batching, self.device, dtype, kinds, run)
        if error is not None:
            self.attention_fallbacks.append(error)
        return out

    def prefetch(
        self, prompts: Sequence[PromptParts], continuations: Sequence[Sequence[str]] | None = None
    ) -> None:
        """Tokenise ``prompts`` (the next chunk's; with their ``continuations`` when they are scored
        by ``log_prob``) on a worker thread, under a policy with ``tokenize_ahead``."""
        if not self.batching.tokenize_ahead:
            return
        if continuations is None:
            self.ahead.submit(prompts, self._rendered_ids)  # type: ignore[arg-type]
        else:
            pairs = [(p, tuple(c)) for p, c in zip(prompts, continuations, strict=True)]
            self.ahead.submit(pairs, self._split_ids)  # type: ignore[arg-type]

    def _rendered_ids(self, prompt: PromptParts) -> list[int]:
        return self.encode(self.render(prompt))

    def _split_ids(self, pair: tuple[PromptParts, tuple[str, ...]]) -> tuple[list[int], list[list[int]]]:
        return continuation_tokens(self.tokenizer, self.render(pair[0]), list(pair[1]), self.instruct)

    def _prompt_ids(self, prompts: Sequence[PromptParts]) -> list[list[int]]:
        """Each prompt's token ids as the model reads it (from :meth:`prefetch` where it ran)."""
        return [self._fit(self.ahead.take(p, self._rendered_ids)) for p in prompts]  # type: ignore[arg-type]

    def auto_batch_size(self, workload: Callable[[int], object] | None = None, most: int = MOST) -> int:
        """``evaluation.batch_size: auto``: the largest batch that fits the device (:mod:`.hf_batch_size`).

        ``workload(rows)``: the run's heaviest chunk of ``rows`` items (the probe); ``most``: the cap.
        """
        return auto_batch_size(self.model, self.context_length, workload=workload, most=most)

    # -- context window (ContextBackend) ------------------------------------------------
    @property
    def context_length(self) -> int | None:
        """``max_position_embeddings`` of the model (else the tokenizer's limit); seq2seq: None."""
        if self.seq2seq:
            return None
        config = getattr(self.model, "config", None)
        for name in ("max_position_embeddings", "n_positions", "max_sequence_length"):
            value = getattr(config, name, None)
            if isinstance(value, int) and value > 0:
                return value
        limit = getattr(self.tokenizer, "model_max_length", None)
        return limit if isinstance(limit, int) and 0 < limit < 10**7 else None

    #: Tokens of a prompt as the model reads it, and of a text continuing it (an option).
    prompt_tokens = LocalModel.count
    text_tokens = LocalModel.count_continuation

    def set_prompt_limit(self, limit: int | None) -> None:
        self.prompt_limit = limit

    def _fit(self, ids: list[int]) -> list[int]:
        """``ids`` cut to :attr:`prompt_limit` from the left (a leading BOS token is kept)."""
        limit = self.prompt_limit
        if limit is None or len(ids) <= limit:
            return ids
        bos = self.tokenizer.bos_token_id
        if bos is not None and ids[0] == bos and limit > 1:
            return [ids[0], *ids[len(ids) - limit + 1 :]]
        return ids[len(ids) - limit :]

    # -- generation ---------------------------------------------------------------------
    @torch.inference_mode()
    def generate(self, prompts: Sequence[PromptParts], params: GenerationParams) -> list[Generation]:
        from transformers import GenerationConfig  # noqa: PLC0415 (optional or heavy dependency, imported at use)

        encoded = self._prompt_ids(prompts)
        if not self.seq2seq:
            eos = self.model.generation_config.eos_token_id
            eos_ids = {int(e) for e in (eos if isinstance(eos, list) else [eos]) if e is not None}
            if self.tokenizer.eos_token_id is not None:
                eos_ids.add(int(self.tokenizer.eos_token_id))
            tokens = self._attend(
                ("prefill", "decode"),
                lambda policy: generate_shared(
                    self.model, encoded, params, self.pad_id, eos_ids, self.prefix_store, policy
                ),
            )
            # generated: the row's tokens and its end-of-sequence token (absent where the budget ran out)
            generated = [min(len(t) + 1, params.max_new_tokens) for t in tokens]
            return _per_prompt(
                self.tokenizer.batch_decode(tokens, skip_special_tokens=True), encoded, generated
            )
        # seq2seq: the encoder reads right-padded prompts; transformers decodes.
        width = max(len(e) for e in encoded)
        ids = [e + [self.pad_id] * (width - len(e)) for e in encoded]
        mask = [[1] * len(e) + [0] * (width - len(e)) for e in encoded]
        sampling = params.temperature is not None and params.temperature > 0
        config = GenerationConfig(
            max_new_tokens=params.max_new_tokens,
            do_sample=sampling,
            temperature=params.temperature if sampling else None,
            top_p=None,
            top_k=None,
            num_return_sequences=params.n_samples if sampling else 1,
            pad_token_id=self.pad_id,
            eos_token_id=self.model.generation_config.eos_token_id,
            bos_token_id=self.model.generation_config.bos_token_id,
            decoder_start_token_id=getattr(self.model.generation_config, "decoder_start_token_id", None),
        )
        torch.manual_seed(params.seed)
        out = self.model.generate(
            input_ids=torch.tensor(ids, device=self.device),
            attention_mask=torch.tensor(mask, device=self.device),
            generation_config=config,
        )
        generated = [sum(t != self.pad_id for t in row[1:]) for row in out.tolist()]  # after the start token
        return _per_prompt(self.tokenizer.batch_decode(out, skip_special_tokens=True), encoded, generated)

    # -- scoring ------------------------------------------------------------------------
    @torch.inference_mode()
    def _logprobs_at(self, seqs: list[list[int]], queries: list[list[int]]) -> list[torch.Tensor]:
        """Log-softmax over the vocabulary at the given positions of each sequence.

        ``queries[i]`` lists positions ``q`` of ``seqs[i]``; the result for ``q`` is the
        distribution of the token at ``q + 1``.  The common prefix is run once.
        """
        min_query = min(min(q) for q in queries)
        shared = min(common_prefix_length(seqs), min(len(s) for s in seqs) - 1, min_query + 1)
        keep = sorted({q - shared for qs in queries for q in qs if q >= shared})
        _, prefix_logits, logits, _ = prefill(self.model, seqs, shared, self.pad_id, keep, self.prefix_store)
        results: list[torch.Tensor] = []
        index = {k: j for j, k in enumerate(keep)}
        for i, qs in enumerate(queries):
            rows: list[torch.Tensor] = [
                prefix_logits if q == shared - 1 else logits[i, index[q - shared]]  # type: ignore[index,misc]
                for q in qs
            ]
            results.append(torch.log_softmax(torch.stack(rows), dim=-1))
        return results

    def continuation_logprobs(
        self, prompt: PromptParts, continuations: Sequence[str]
    ) -> list[ContinuationScore]:
        context = self.render(prompt)
        if self.seq2seq:
            return self._seq2seq_continuations(context, continuations)
        if self.tree:
            return self.continuation_logprobs_batch([(prompt, continuations)])[0]
        ctx, tails = continuation_tokens(self.tokenizer, context, list(continuations), self.instruct)
        ctx = self._fit(ctx)
        seqs = [ctx + tail for tail in tails]
        starts = [len(ctx)] * len(seqs)
        queries = [list(range(start - 1, len(seq) - 1)) for seq, start in zip(seqs, starts, strict=True)]
        scores = []
        for seq, start, lp in zip(seqs, starts, self._logprobs_at(seqs, queries), strict=True):
            target = torch.tensor(seq[start:], device=lp.device)
            token_lp = lp.gather(1, target[:, None])[:, 0].tolist()
            scores.append(ContinuationScore(float(sum(token_lp)), len(token_lp), token_lp))
        return scores

    @torch.inference_mode()
    def continuation_logprobs_batch(
        self, items: Sequence[tuple[PromptParts, Sequence[str]]]
    ) -> list[list[ContinuationScore]]:
        """:meth:`continuation_logprobs` for several questions in two model calls.

        The contexts run as one batch (their common prefix once); then every option of
        every question runs as one batch on a copy of its own question's cache.  Fewer,
        larger calls: on a CPU the fixed cost of a call matters as much as its tokens.
        """
        if self.seq2seq or (len(items) == 1 and not self.tree):
            return [self.continuation_logprobs(p, c) for p, c in items]
        split = [self.ahead.take((p, tuple(c)), self._split_ids) for p, c in items]  # type: ignore[arg-type]
        split = [(self._fit(ctx), tails) for ctx, tails in split]
        if self.tree:
            _, token_lps = self._attend(
                ("scoring",),
                lambda policy: score_tree(
                    self.model, [ctx for ctx, _ in split], [t for _, t in split], self.prefix_store, policy
                ),
            )
            return [[ContinuationScore(float(sum(t)), len(t), t) for t in per_q] for per_q in token_lps]
        contexts = [ctx for ctx, _ in split]
        lengths = [len(c) for c in contexts]
        shared = min(common_prefix_length(contexts), min(lengths) - 1)
        last = sorted({n - 1 - shared for n in lengths})
        cache, _, ctx_logits, mask = prefill(
            self.model, contexts, shared, self.pad_id, last, self.prefix_store
        )
        assert ctx_logits is not None
        index = {k: j for j, k in enumerate(last)}
        first = torch.log_softmax(
            torch.stack([ctx_logits[i, index[n - 1 - shared]] for i, n in enumerate(lengths)]), dim=-1
        )
        rows = [(q, tail) for q, (_, tails) in enumerate(split) for tail in tails]
        width = max(len(t) for _, t in rows)
        rest = None
        if width > 1:
            owner = torch.tensor([q for q, _ in rows], device=self.device)
            cache.batch_select_indices(owner)
            ids = torch.tensor([t + [self.pad_id] * (width - len(t)) for _, t in rows], device=self.device)
            tail_mask = torch.tensor(
                [[1] * len(t) + [0] * (width - len(t)) for _, t in rows], device=self.device
            )
            positions = torch.tensor(
                [[lengths[q] + j for j in range(width)] for q, _ in rows], device=self.device
            )
            out = self.model(
                input_ids=ids,
                attention_mask=torch.cat([mask[owner], tail_mask], dim=1),
                position_ids=positions,
                past_key_values=cache,
                use_cache=True,
                logits_to_keep=torch.arange(width - 1, device=self.device),
            )
            rest = torch.log_softmax(out.logits.float(), dim=-1)
        results: list[list[ContinuationScore]] = [[] for _ in items]
        for r, (q, tail) in enumerate(rows):
            token_lp = [float(first[q, tail[0]])]
            if rest is not None:
                token_lp += [float(rest[r, j - 1, tail[j]]) for j in range(1, len(tail))]
            results[q].append(ContinuationScore(float(sum(token_lp)), len(token_lp), token_lp))
        return results

    @torch.inference_mode()
    def letter_logprobs(
        self, prompts: Sequence[PromptParts], letters: str, variants: str
    ) -> list[list[float]]:
        candidates = self.letter_token_ids(letters, variants)
        if self.seq2seq:
            dists = self._seq2seq_first_token([self.render(p) for p in prompts])
        elif self.tree:
            seqs = self._prompt_ids(prompts)
            dists = list(
                self._attend(
                    ("scoring",),
                    lambda policy: score_tree(
                        self.model, seqs, [[] for _ in prompts], self.prefix_store, policy
                    ),
                )[0]
            )
        else:
            seqs = self._prompt_ids(prompts)
            dists = [d[0] for d in self._logprobs_at(seqs, [[len(s) - 1] for s in seqs])]
        stacked = torch.stack(list(dists))  # prompts × vocab; one transfer to the host below
        per_letter = [torch.logsumexp(stacked[:, ids], dim=1) for ids in candidates]
        return torch.stack(per_letter, dim=1).tolist()  # type: ignore[no-any-return]

    # -- seq2seq (encoder-decoder) --------------------------------------------------------
    @torch.inference_mode()
    def _seq2seq_first_token(self, contexts: list[str]) -> list[torch.Tensor]:
        enc = self.tokenizer(contexts, return_tensors="pt", padding=True).to(self.device)
        start = self.model.generation_config.decoder_start_token_id
        start = self.pad_id if start is None else start
        dec = torch.full((len(contexts), 1), start, device=self.device)
        logits = self.model(**enc, decoder_input_ids=dec).logits[:, -1].float()
        return list(torch.log_softmax(logits, dim=-1))

    @torch.inference_mode()
    def _seq2seq_continuations(self, context: str, continuations: Sequence[str]) -> list[ContinuationScore]:
        enc = self.tokenizer([context], return_tensors="pt").to(self.device)
        encoder_out = self.model.get_encoder()(**enc)
        targets = [self.tokenizer(c, add_special_tokens=False)["input_ids"] for c in continuations]
        start = self.model.generation_config.decoder_start_token_id
        start = self.pad_id if start is None else start
        width = max(len(t) for t in targets)
        dec = torch.tensor(
            [[start] + t + [self.pad_id] * (width - len(t)) for t in targets], device=self.device
        )
        hidden = encoder_out.last_hidden_state.expand(len(targets), -1, -1)
        logits = self.model(
            encoder_outputs=(hidden,),
            attention_mask=enc["attention_mask"].expand(len(targets), -1),
            decoder_input_ids=dec[:, :-1],
        ).logits.float()
        lp = torch.log_softmax(logits, dim=-1)
        scores = []
        for i, t in enumerate(targets):
            token_lp = [float(lp[i, j, tok]) for j, tok in enumerate(t)]
            total = math.fsum(token_lp)
            scores.append(ContinuationScore(total, len(token_lp), token_lp))
        return scores
