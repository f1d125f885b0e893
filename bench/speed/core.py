"""Orchestrate the benchmark: two worker processes, interleaved phases, one JSON file.

Order of work (each step's figures are written to the JSON as soon as it ends,
so an interrupted run still leaves the largest subset that completed):

1. the questions in blocks; per block S5 ``log_prob``, S6 ``log_prob_one_shot`` and
   ``first_token`` by us and by lm-eval, alternating who goes first, so drift of a
   shared machine hits both (under ``--competing-load``, a fixed load runs meanwhile);
2. ``first_token`` with ``n_shuffles`` orders per question, shared (one chunk per
   question) against ``n_shuffles`` independent runs, interleaved by groups;
3. generation (S1 prompts) at batch 1 and batch 8, interleaved;
4. with ``generation`` among the methods: the generation arm against lm-eval's
   ``generate_until`` (:mod:`bench.speed.generation`), S1 and S3 prompts, in blocks.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar, cast

from bench.speed.engines import SCORING_METHODS, worker_main
from bench.speed.generation import run_generation_arm
from bench.speed.load import CompetingLoad
from bench.speed.options import BenchOptions
from bench.speed.records import (
    BlockTimes,
    ItemsRun,
    LmEvalArgs,
    LmEvalInfo,
    OursArgs,
    OursInfo,
    QuestionPair,
    Report,
    ScoringDoc,
    ScoringMethod,
    ScoringRun,
    Totals,
)
from bench.speed.report import machine_info, summarise, write_json
from bench.speed.vllm_alias import alias_version, write_alias
from enade_bench.environ import environ_set
from enade_bench.errors import UserError

#: What a worker answers once its engine is loaded (:class:`OursInfo`, :class:`LmEvalInfo`).
InfoT = TypeVar("InfoT", OursInfo, LmEvalInfo)
#: Where progress lines go.
Log = Callable[[str], object]
Engine = Literal["ours", "lm_eval"]


class Worker(Generic[InfoT]):
    """One engine in its own (spawned) process, answering requests over a pipe.

    ``call(name, **kwargs)`` runs the engine's method ``name``; its answer (a record of
    :mod:`.records`) comes back as the method returns it.
    """

    def __init__(self, args: OursArgs | LmEvalArgs, alias: str | None = None) -> None:
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        # vLLM starts its engine in a child process, which a daemon process may not have.
        daemon = args["engine"] != "vllm"
        self.process = ctx.Process(target=worker_main, args=(child, args, alias), daemon=daemon)
        self.process.start()
        self.info: InfoT = self._answer()

    def _answer(self) -> Any:
        status, payload = self.conn.recv()
        if status == "user_error":  # a bad input the worker found (its data, its model): the user's line
            raise UserError(payload)
        if status != "ok":
            raise RuntimeError(f"benchmark worker failed:\n{payload}")
        return payload

    def call(self, name: str, **kwargs: Any) -> Any:
        self.conn.send((name, kwargs))
        return self._answer()

    def close(self) -> None:
        try:
            self.conn.send(None)
        except (BrokenPipeError, OSError):
            pass
        self.process.join(timeout=30)
        if self.process.is_alive():
            self.process.terminate()


def _groups(indices: list[int], size: int) -> list[list[int]]:
    return [indices[i : i + size] for i in range(0, len(indices), size)]


def run_bench(opts: BenchOptions, log: Log = print) -> Report:
    """Run the benchmark and return the report (also written to ``opts.out``).

    The engines' processes get ``OMP_NUM_THREADS`` = ``opts.threads``; the caller's environment is
    restored afterwards (an in-process caller, such as a test worker, keeps its own threads).
    """
    values = {"OMP_NUM_THREADS": str(opts.threads), "TOKENIZERS_PARALLELISM": "false"}
    if opts.engine == "vllm":  # GiB of KV cache per engine (CPU build), unless the caller set it
        values["VLLM_CPU_KVCACHE_SPACE"] = os.environ.get("VLLM_CPU_KVCACHE_SPACE", "2")
    with environ_set(values), tempfile.TemporaryDirectory(prefix="enade-bench-vllm-alias-") as alias_root:
        return _run_bench(opts, log, alias_root)


def _run_bench(opts: BenchOptions, log: Log, alias_root: str) -> Report:
    report = Report(
        machine=machine_info(opts.threads),
        options={k: str(v) if isinstance(v, Path) else v for k, v in vars(opts).items()},
        backend={"run_prefix_cache": opts.prefix_cache, "block_causal": opts.tree},
        started=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        status="running",
    )
    if opts.engine == "vllm":
        report["machine"]["vllm_cpu_kvcache_space_gb"] = os.environ.get("VLLM_CPU_KVCACHE_SPACE")
    # the engines read vllm_block_size on vLLM only
    ours = Worker[OursInfo](
        OursArgs(
            questions=opts.questions,
            threads=opts.threads,
            batch_size=opts.batch_size,
            engine=opts.engine,
            vllm_block_size=opts.vllm_block_size,
            prefix_cache=opts.prefix_cache,
            tree=opts.tree,
        )
    )
    lm: Worker[LmEvalInfo] | None = None
    try:
        info = ours.info
        report["dataset"] = {
            "n_questions": info["n_questions"],
            "filter_counts": info["filter_counts"],
            "sources": info["sources"],
        }
        report["model"] = {"dir": info["model_dir"], **info["model_identity"]}
        n = info["n_questions"] if opts.limit is None else min(opts.limit, info["n_questions"])
        indices = list(range(n))
        if opts.lmeval:
            alias = alias_version() if opts.engine == "vllm" else None
            alias_dir = str(write_alias(Path(alias_root), alias)) if alias is not None else None
            lm = Worker[LmEvalInfo](
                LmEvalArgs(
                    model_dir=info["model_dir"],
                    threads=opts.threads,
                    batch_size=lmeval_batch_size(opts),
                    engine=opts.engine,
                    vllm_block_size=opts.vllm_block_size,
                ),
                alias_dir,
            )
            report["lm_eval"] = {**lm.info, "vllm_alias": alias}
        with CompetingLoad(opts.competing_load) as load:
            _scoring(ours, lm, indices, opts, report, log)
        if load.summary:
            report["competing_load"] = load.summary
            summarise(report)
            write_json(opts.out, report)
        _shuffles(ours, indices[: opts.shuffle_questions], opts, report, log)
        _generation(ours, indices[: opts.gen_questions], opts, report, log)
        if "generation" in opts.methods:
            report["generation_vs_lm_eval"] = run_generation_arm(
                ours, lm, indices, list(opts.gen_strategies), opts, log
            )
            summarise(report)
            write_json(opts.out, report)
        report["status"] = "complete"
    finally:
        report["memory"] = {"ours": ours.call("peak")}
        if lm is not None:
            report["memory"]["lm_eval"] = lm.call("peak")
        report["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        report["machine"]["load_average_end"] = list(os.getloadavg())
        summarise(report)
        write_json(opts.out, report)
        ours.close()
        if lm is not None:
            lm.close()
    return report


def lmeval_batch_size(opts: BenchOptions) -> int | str:
    """lm-eval's batch size: the option, else 8 (HF) or ``"auto"`` (vLLM: every request at once)."""
    if opts.lmeval_batch_size is not None:
        return opts.lmeval_batch_size
    return "auto" if opts.engine == "vllm" else 8


def _shuffles(
    ours: Worker[OursInfo], indices: list[int], opts: BenchOptions, report: Report, log: Log
) -> None:
    if not indices or opts.n_shuffles < 2:
        return
    totals: dict[str, Totals] = {"shared": {}, "independent": {}}
    preds: dict[str, dict[str, str | None]] = {"shared": {}, "independent": {}}
    for g, group in enumerate(_groups(indices, opts.batch_size)):
        modes = ["shared", "independent"] if g % 2 == 0 else ["independent", "shared"]
        for mode in modes:
            res: ItemsRun = ours.call("shuffles", indices=group, n_shuffles=opts.n_shuffles, mode=mode)
            preds[mode].update(res["predictions"])
            _add(totals[mode], res, skip=("predictions",))
            log(f"shuffles {mode:11s} group {g}: {res['seconds']:.1f}s, {res['tokens']} tokens")
    agree = sum(preds["shared"][k] == preds["independent"].get(k) for k in preds["shared"])
    shared, independent = totals["shared"], totals["independent"]
    report["shuffles"] = {
        "n_questions": len(indices),
        "n_shuffles": opts.n_shuffles,
        "shared": shared,
        "independent": independent,
        "time_ratio_shared_over_independent": shared["seconds"] / independent["seconds"],
        "token_ratio_shared_over_independent": shared["tokens"] / independent["tokens"],
        "prediction_agreement": agree / max(1, len(preds["shared"])),
    }
    write_json(opts.out, report)


def _generation(
    ours: Worker[OursInfo], indices: list[int], opts: BenchOptions, report: Report, log: Log
) -> None:
    if not indices:
        return
    totals: dict[str, Totals] = {}
    preds: dict[int, dict[str, str | None]] = {1: {}, opts.gen_batch: {}}
    for g, group in enumerate(_groups(indices, opts.gen_batch)):
        sizes = [1, opts.gen_batch] if g % 2 == 0 else [opts.gen_batch, 1]
        for size in sizes:
            res: ItemsRun = ours.call(
                "generate", indices=group, batch_size=size, max_new_tokens=opts.max_new_tokens
            )
            preds[size].update(res["predictions"])
            _add(totals.setdefault(f"batch_{size}", {}), res, skip=("predictions",))
            log(f"generation batch {size}: {res['seconds']:.1f}s for {res['items']} items")
    for entry in totals.values():
        entry["items_per_second"] = entry["items"] / entry["seconds"]
    same = sum(preds[1][k] == preds[opts.gen_batch].get(k) for k in preds[1])
    report["generation"] = {
        "n_questions": len(indices),
        "max_new_tokens": opts.max_new_tokens,
        **totals,
        "same_answer_batch_1_vs_batched": same / max(1, len(preds[1])),
    }
    write_json(opts.out, report)


#: A scoring reply's per-question parts (kept in ``per_question``, not summed).
_PER_QUESTION = ("predictions", "scores", "n_tokens")


def _scoring(
    ours: Worker[OursInfo],
    lm: Worker[LmEvalInfo] | None,
    indices: list[int],
    opts: BenchOptions,
    report: Report,
    log: Log,
) -> None:
    methods = [m for m in opts.methods if m in SCORING_METHODS]
    if not methods:
        return
    scoring: dict[str, ScoringMethod] = {m: {"ours": {}, "lm_eval": {}} for m in methods}
    per_question: dict[str, dict[str, QuestionPair]] = {m: {} for m in scoring}
    blocks: list[BlockTimes] = []
    report["scoring"] = scoring
    report["per_question"] = per_question
    report["blocks"] = blocks
    if opts.engine == "vllm" and indices:  # untimed: vLLM's first calls set up its kernels
        _warm_up(ours, lm, indices[:1])
    for b, block in enumerate(_groups(indices, opts.block)):
        docs: list[ScoringDoc] = ours.call("docs", indices=block)
        block_times: BlockTimes = {"block": b, "questions": len(block)}
        for method in methods:
            order: tuple[Engine, Engine] = ("ours", "lm_eval") if b % 2 == 0 else ("lm_eval", "ours")
            for engine in order:
                res: ScoringRun
                if engine == "ours":
                    res = ours.call("run", method=method, indices=block)
                elif lm is not None:
                    res = lm.call("run", method=method, docs=docs)
                else:
                    continue
                for qid, pred in res["predictions"].items():
                    entry = per_question[method].setdefault(qid, {})
                    answer = entry[engine] = {"prediction": pred, "scores": res["scores"].get(qid)}
                    if "n_tokens" in res:
                        answer["n_tokens"] = res["n_tokens"].get(qid)
                side = scoring[method][engine]
                _add(side, res, skip=_PER_QUESTION)
                side["questions"] = side.get("questions", 0) + len(block)
                block_times[f"{method}/{engine}"] = res["seconds"]
                if "model_seconds" in res:
                    block_times[f"{method}/{engine}/model"] = res["model_seconds"]
        blocks.append(block_times)
        summarise(report)
        write_json(opts.out, report)
        log(_block_line(block_times))


def _warm_up(ours: Worker[OursInfo], lm: Worker[LmEvalInfo] | None, indices: list[int]) -> None:
    """Run both methods once on ``indices`` through both engines, results discarded."""
    docs = ours.call("docs", indices=indices)
    for method in ("log_prob", "first_token"):
        ours.call("run", method=method, indices=indices)
        if lm is not None:
            lm.call("run", method=method, docs=docs)


def _block_line(times: BlockTimes) -> str:
    parts = [f"block {times['block']} ({times['questions']} q)"]
    parts += [f"{k} {v:.1f}s" for k, v in times.items() if k not in {"block", "questions"}]
    return ", ".join(parts)


def _add(totals: Totals, res: Mapping[str, object], skip: tuple[str, ...] = ()) -> None:
    """Accumulate the figures of ``res`` but ``skip`` into ``totals`` (sums; peaks as maxima);
    keep the last of the rest (lm-eval's metrics)."""
    total = cast("dict[str, object]", totals)  # the keys of Totals, in the order replies have them
    for key, value in res.items():
        if key in skip:
            continue
        peak = "peak" in key or "rss" in key
        before = total.get(key, 0.0 if peak else 0)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not isinstance(before, (int, float))
        ):
            total[key] = value
        else:
            total[key] = max(before, value) if peak else before + value
