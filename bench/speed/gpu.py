"""The GPU arm of ``python -m bench``: S1–S6 on a card, against lm-eval's HF backend on the same card.

``python -m bench --device cuda --shape llama-3-8b`` (or ``--model-dir DIR``) runs, in
one process on one card:

* the model: a named real shape with random weights drawn on the card
  (:mod:`.shapes`, no download), or a local transformers folder; ``--dtype`` (default
  ``bfloat16``) for both engines;
* the data: the ENEM booklets of 2019–2022 (four areas each) from the shared data
  folder, the first ``--limit`` (720) questions, in two orders: ``file`` (booklet
  order) and ``mixed`` (sorted by stem length, then shortest and longest alternating,
  so that every chunk mixes short and long stems: the worst case for padding);
* ours: the runner's :class:`~enade_bench.runner.execute.ChunkExecutor` on the HF
  backend, strategies S1–S6 (and ``first_token``), chunks of ``--batch-size``, with the
  prompts ``enade-bench run`` renders for ENEM (:func:`enem_prompts`): the path users run;
* the peer: lm-eval's ``HFLM`` wrapped around *the same model object* (same weights,
  dtype and card), ``--lmeval-batch-size`` (default: ours), on the same rendered
  prompts: S5, S6 and ``first_token`` as ``multiple_choice`` tasks, S1 and S3 as
  ``generate_until`` (:mod:`.lmeval_tasks`, :mod:`.lmeval_generate`); S2 and S4 are ours only.

Each phase ends with a CUDA synchronisation.  Before the first timed phase both engines
run one chunk untimed (kernel selection, allocator warm-up).  The JSON (``--out``)
holds the card, dtype, batch, per order and strategy our questions/s and lm-eval's
(its time inside ``loglikelihood``/``generate_until``), their ratio and the agreement of
the predictions (generation: of the generated texts, and of the extracted letters).
"""

from __future__ import annotations

import time
from dataclasses import asdict, replace
from functools import partial
from typing import Any

from bench.speed.engines import LmEvalEngine, OursEngine
from bench.speed.generation import ours_gen_docs, ours_gen_run, stop_strings
from bench.speed.gpu_checks import Float32Check, float32_check, profile_chunk, size_batch, toolchain
from bench.speed.gpu_report import (
    GpuReport,
    Phase,
    PhaseRecord,
    StrategyFigures,
    run_phases,
    write_report,
)
from bench.speed.measure import TokenCounter
from bench.speed.options import PEERS, GpuOptions
from enade_bench.backends.hf_batching import BatchingPolicy
from enade_bench.config import DatasetConfig, EvaluationConfig, ModelConfig
from enade_bench.dataset.loader import LoadedDataset, load_dataset
from enade_bench.scoring.extraction import extract_answer

#: The ENEM booklets of the GPU arm: four areas of each year, 2019–2022.
GPU_YEARS = (2019, 2020, 2021, 2022)
#: The strategies scored by a method of :data:`.engines.SCORING_METHODS` (the others generate).
SCORING_OF = {"S5": "log_prob", "S6": "log_prob_one_shot", "first_token": "first_token"}


def load_questions(enem_dir: str, limit: int) -> LoadedDataset:
    """The ENEM booklets of :data:`GPU_YEARS` (file order: year, then area), the first ``limit``."""
    parts = [
        load_dataset(DatasetConfig(path=f"{enem_dir}/ENEM_{year}_*.csv", benchmark="enem"), preset=_preset())
        for year in GPU_YEARS
    ]
    counts = {k: sum(part.counts.get(k, 0) for part in parts) for k in parts[0].counts}
    return LoadedDataset(
        questions=[q for part in parts for q in part.questions][:limit],
        counts=counts,
        sources=[s for part in parts for s in part.sources],
    )


def _preset() -> Any:
    from enade_bench.benchmarks.enem import PRESET  # noqa: PLC0415

    return PRESET


def mixed_order(lengths: list[int]) -> list[int]:
    """Indices sorted by length, then shortest and longest alternating (every chunk mixes both)."""
    by_length = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    out = []
    lo, hi = 0, len(by_length) - 1
    while lo <= hi:
        out.append(by_length[lo])
        if lo != hi:
            out.append(by_length[hi])
        lo, hi = lo + 1, hi - 1
    return out


def enem_prompts() -> Any:
    """What ``enade-bench run`` prompts ENEM questions with: the ENEM benchmark's default template
    (pt-BR), and, for one/few-shot strategies (ENEM ships no worked examples), the team's examples."""
    from bench.speed.engines import TEAM_EXAMPLES  # noqa: PLC0415
    from enade_bench.benchmarks.enem import BENCHMARK  # noqa: PLC0415
    from enade_bench.prompts.templates import load_prompt_set  # noqa: PLC0415

    prompts = BENCHMARK.prompts
    return load_prompt_set(prompts.templates[prompts.default["pt-BR"]], TEAM_EXAMPLES)


class GpuOurs(OursEngine):
    """:class:`OursEngine` on a model already on the card: the runner's executor on the ENEM prompts.

    The arm measures the path of ``enade-bench run`` on the ENEM benchmark: the same plan
    (:func:`~enade_bench.runner.plan.make_plan`), chunk executor and backend, with the prompts
    that run renders (:func:`enem_prompts`; tested equal).
    """

    def __init__(self, dataset: LoadedDataset, backend: Any, counter: TokenCounter, batch_size: int) -> None:
        self.dataset = dataset
        self.engine = "hf"
        self.backend = backend
        self.counter = counter
        self.model_dir = ""
        self.prompts = enem_prompts()
        self.set_batch(batch_size)

    def set_batch(self, batch_size: int) -> None:
        """Chunks of ``batch_size`` questions from now on."""
        self.evaluation = EvaluationConfig(batch_size=batch_size, seed=42, letter_variants="space")
        self.batch_size = batch_size


def load_engines(
    opts: GpuOptions, dataset: LoadedDataset
) -> tuple[GpuOurs, LmEvalEngine | None, dict[str, object]]:
    """Our backend and lm-eval's ``HFLM`` around one model on the card."""
    from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415

    from bench.speed.lmeval_tasks import make_lm_from  # noqa: PLC0415
    from bench.speed.shapes import build_model, default_tokenizer_dir  # noqa: PLC0415
    from enade_bench.backends.hf_load import ModelSource  # noqa: PLC0415
    from enade_bench.backends.hf_local import HFLocalBackend  # noqa: PLC0415
    from enade_bench.results.identity import WeightsIdentity  # noqa: PLC0415

    tokenizer_dir = opts.tokenizer or opts.model_dir or default_tokenizer_dir()
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    if opts.model_dir:
        import torch  # noqa: PLC0415

        model: Any = AutoModelForCausalLM.from_pretrained(
            opts.model_dir, dtype=getattr(torch, opts.dtype), attn_implementation="sdpa"
        )
        model = model.to(opts.device).eval()
        name = opts.model_dir
    else:
        assert opts.shape is not None
        overrides = {"num_hidden_layers": opts.layers} if opts.layers else {}
        model = build_model(opts.shape, opts.dtype, opts.device, **overrides)
        name = f"random:{opts.shape}"
    cfg = ModelConfig(name=name, dtype=opts.dtype, device=opts.device)  # type: ignore[arg-type]
    source = ModelSource("folder", name, None, name, WeightsIdentity(source="folder"))
    backend = HFLocalBackend(cfg, model, tokenizer, source)
    if opts.card_path:  # the card's path on the CPU (:class:`.hf_flex.CompileSettings`)
        from enade_bench.backends import hf_flex  # noqa: PLC0415

        hf_flex.COMPILE = hf_flex.CompileSettings(
            frozenset({"cpu", "cuda"}), opts.card_path, dynamic=opts.card_path != "inductor"
        )
        backend.batching = BatchingPolicy.for_device("cuda")
    if opts.compile_decode:
        backend.batching = replace(backend.batching, compile_decode=True)
    counter = TokenCounter(model)
    ours = GpuOurs(dataset, backend, counter, opts.batch_size)
    lm = None
    if opts.lmeval:
        lm = LmEvalEngine.__new__(LmEvalEngine)
        lm.engine, lm.batch_size, lm.counter = "hf", opts.lmeval_batch_size or opts.batch_size, counter
        lm.lm = make_lm_from(model, tokenizer, int(lm.batch_size))
    info: dict[str, object] = {
        "name": name,
        "tokenizer": tokenizer_dir,
        "parameters": sum(p.numel() for p in model.parameters()),
        "config": {
            k: v
            for k, v in model.config.to_dict().items()
            if isinstance(v, (int, float, str, bool)) and k != "transformers_version"
        },
    }
    return ours, lm, info


def _sync() -> None:
    import torch  # noqa: PLC0415

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def run_strategy(
    ours: GpuOurs, lm: LmEvalEngine | None, strategy: str, order: list[int], opts: GpuOptions
) -> StrategyFigures:
    """One strategy on the questions in ``order``: ours, then lm-eval where it has a peer."""
    fig, mine = ours_strategy(ours, strategy, order, opts)
    if lm is not None:
        peer_strategy(ours, lm, fig, mine, order, opts)
    return fig


def ours_strategy(
    ours: GpuOurs, strategy: str, order: list[int], opts: GpuOptions
) -> tuple[StrategyFigures, Any]:
    """Ours on one strategy: its figures, and what lm-eval's run is compared with (:func:`peer_strategy`)."""
    n = len(order)
    _sync()
    if strategy in SCORING_OF:
        mine: Any = ours.run(SCORING_OF[strategy], order)
    else:
        mine = (
            ours_gen_run(ours, strategy, order, opts.max_new_tokens, opts.batch_size)
            if strategy != "S4"
            else _s4(ours, order, opts)
        )
    _sync()
    fig = StrategyFigures(
        strategy,
        n,
        mine["seconds"],
        n / mine["seconds"],
        mine["tokens"],
        mine["model_calls"],
        attention=getattr(ours.backend, "attention", None),
    )
    return fig, mine


def peer_strategy(
    ours: GpuOurs, lm: LmEvalEngine, fig: StrategyFigures, mine: Any, order: list[int], opts: GpuOptions
) -> None:
    """lm-eval on ``fig``'s strategy and questions, where it has a peer: its figures into ``fig``."""
    n, strategy = len(order), fig.strategy
    if strategy in SCORING_OF:
        theirs = lm.run(SCORING_OF[strategy], ours.docs(order))
        _sync()
        _compare_scores(fig, mine, theirs)
        return
    if strategy not in PEERS:
        return
    docs = ours_gen_docs(ours, strategy, order)
    peer_run = lm.gen_run(docs, opts.max_new_tokens, stop_strings(ours))
    _sync()
    fig.lm_eval_seconds, fig.lm_eval_tokens = peer_run["model_seconds"], peer_run["tokens"]
    fig.lm_eval_qps = n / peer_run["model_seconds"] if peer_run["model_seconds"] else None
    fig.ratio = fig.ours_qps / fig.lm_eval_qps if fig.lm_eval_qps else None
    same_text = same_letter = 0
    for d in docs:
        texts = mine["texts"].get(d["qid"], ""), peer_run["texts"].get(d["qid"], "")
        same_text += texts[0].strip() == texts[1].strip()
        letters = [extract_answer(t, d["letters"], d["options"]).letter for t in texts]
        same_letter += letters[0] == letters[1]
    fig.text_agreement, fig.agreement = same_text / n, same_letter / n


def _s4(ours: GpuOurs, order: list[int], opts: GpuOptions) -> Any:
    """S4 (zero-shot generation, options shuffled) through our executor, chunks of ``batch_size``."""
    from bench.speed.measure import measured  # noqa: PLC0415
    from enade_bench.strategies.registry import STRATEGIES  # noqa: PLC0415

    evaluation = EvaluationConfig(max_new_tokens=opts.max_new_tokens, batch_size=opts.batch_size, seed=42)
    executor = ours.executor_for(STRATEGIES["S4"], order, evaluation)
    with measured(ours.counter) as phase:
        for chunk in executor.ahead(executor.plan.chunks):
            executor.run(list(chunk))
    return {**phase.as_dict(), "texts": {}}


def _compare_scores(fig: StrategyFigures, mine: Any, theirs: Any) -> None:
    fig.lm_eval_seconds, fig.lm_eval_tokens = theirs["model_seconds"], theirs["tokens"]
    fig.lm_eval_qps = fig.questions / theirs["model_seconds"] if theirs["model_seconds"] else None
    fig.ratio = fig.ours_qps / fig.lm_eval_qps if fig.lm_eval_qps else None
    same = sum(mine["predictions"].get(q) == p for q, p in theirs["predictions"].items())
    fig.agreement = same / fig.questions
    diffs = [
        abs(a - b)
        for q, s in mine["scores"].items()
        for a, b in zip(s, theirs["scores"].get(q, []), strict=False)
    ]
    fig.max_abs_score_diff = max(diffs) if diffs else None


def _probe_chunk(ours: GpuOurs, opts: GpuOptions, strategy: str, indices: list[int]) -> None:
    """One chunk of ``indices`` for ``strategy``, ours only (the probe of :func:`.gpu_checks.size_batch`)."""
    ours.set_batch(len(indices))
    run_strategy(ours, None, strategy, indices, replace(opts, batch_size=len(indices)))


#: The warm-up's and the profile's chunk (questions), whatever the batch.
WARM_CHUNK = 32
#: The profile's other attention: the SDPA paths (scoring one SDPA call per question tree and
#: layer, generation prefilled per prefix group), against the CUDA policy's FlexAttention.
SDPA_POLICY = {"flex_attention": False, "packed_prefill": False}


def arm_phases(arm: GpuArm) -> list[Phase]:
    """The arm's phases in the order they run (names as in the JSON's ``phases``).

    The warm-up; the profile (``--profile``); the batch-size probe (``--batch-auto``); then in
    each order, for each strategy, ours and at once lm-eval on the same questions (where it
    runs that strategy in that order), so that a ratio is whole the moment its phase ends;
    after the first order, the float32 check (``--f32-check``).
    """
    opts, lm = arm.opts, arm.lm
    phases: list[Phase] = [("warm-up", arm.warm_up)]
    if opts.profile:
        phases.append(("profile", arm.profile))
    if opts.batch_auto:
        phases.append(("batch-size probe", arm.probe))
    for order_name in opts.orders:
        for strategy in opts.strategies:
            phases.append((f"ours {order_name} {strategy}", partial(arm.run_ours, order_name, strategy)))
            if lm is not None and strategy in opts.lmeval_strategies and order_name in opts.lmeval_orders:
                phases.append(
                    (f"lm-eval {order_name} {strategy}", partial(arm.run_peer, order_name, strategy))
                )
        if order_name == opts.orders[0] and opts.f32_check and lm is not None:
            phases.append((f"float32 check {opts.f32_check}", arm.float32))
    return phases


class GpuArm:
    """The arm's engines, options and report, and one method per kind of phase (:func:`arm_phases`)."""

    def __init__(
        self, opts: GpuOptions, ours: GpuOurs, lm: LmEvalEngine | None, report: GpuReport, log: Any
    ) -> None:
        self.opts, self.ours, self.lm, self.report, self.log = opts, ours, lm, report, log
        self.stems = [len(q.stem) for q in ours.dataset.questions]
        self.mine: dict[tuple[str, str], Any] = {}  # ours' run of (order, strategy), until its peer's

    def order(self, name: str) -> list[int]:
        return list(range(len(self.stems))) if name == "file" else mixed_order(self.stems)

    def warm_up(self) -> None:
        """One chunk of S1 and of S5, both engines, untimed (kernels, compilation, allocator); then
        ours' S1 on a chunk of the last chunk's size, whose padded decode batch is a graph of its own
        (:func:`.hf_slots.decode_rows`: 720 questions at batch 32 end with 16)."""
        opts = replace(self.opts, max_new_tokens=2)
        warm = list(range(min(opts.batch_size, WARM_CHUNK, len(self.stems))))
        peer = self.lm if opts.device.startswith("cuda") else None  # the CPU has no kernels to choose
        for strategy in ("S1", "S5"):
            run_strategy(self.ours, peer, strategy, warm, opts)
        if last := len(self.stems) % opts.batch_size:
            run_strategy(self.ours, None, "S1", list(range(last)), opts)

    def profile(self) -> None:
        """One S5 and one S1 chunk under the profiler, FlexAttention and the SDPA paths."""
        ours, opts = self.ours, self.opts
        warm = list(range(min(opts.batch_size, WARM_CHUNK, len(self.stems))))
        policy = ours.backend.batching
        runs = (
            [("flex", policy), ("sdpa", replace(policy, **SDPA_POLICY))]
            if policy.flex_attention
            else [("sdpa", policy)]
        )
        try:
            for attention, batching in runs:
                ours.backend.batching = batching
                for strategy in ("S5", "S1"):
                    ours.reset_prefix_store()
                    run_strategy(ours, None, strategy, warm, replace(opts, max_new_tokens=2))  # its kernels
                    ours.reset_prefix_store()
                    self.report.profile.append(
                        profile_chunk(
                            strategy,
                            len(warm),
                            partial(run_strategy, ours, None, strategy, warm, opts),
                            attention=attention,
                        )
                    )
        finally:
            ours.backend.batching = policy

    def probe(self) -> None:
        """``--batch-auto``: the chunk sized from the card's memory (:func:`.gpu_checks.size_batch`)."""
        size = size_batch(
            self.ours,
            self.opts.strategies,
            self.ours.dataset.questions,
            partial(_probe_chunk, self.ours, self.opts),
        )
        self.opts = replace(self.opts, batch_size=size)
        self.ours.set_batch(size)
        self.report.batch_size = size
        self.log(f"batch_size auto: {size} questions a chunk")

    def run_ours(self, order_name: str, strategy: str) -> None:
        self.ours.reset_prefix_store()
        fig, self.mine[order_name, strategy] = ours_strategy(
            self.ours, strategy, self.order(order_name), self.opts
        )
        rows = self.report.orders.setdefault(order_name, [])
        rows.append(fig)
        self.report.table1_seconds[order_name] = sum(
            r.ours_seconds for r in rows if r.strategy.startswith("S")
        )
        self.log(f"{order_name:5} {strategy:11} ours {fig.ours_qps:7.1f} q/s")

    def run_peer(self, order_name: str, strategy: str) -> None:
        assert self.lm is not None
        if (order_name, strategy) not in self.mine:
            raise RuntimeError(f"ours {order_name} {strategy} did not finish: nothing to compare with")
        fig = next(f for f in self.report.orders[order_name] if f.strategy == strategy)
        peer_strategy(
            self.ours, self.lm, fig, self.mine.pop((order_name, strategy)), self.order(order_name), self.opts
        )
        self.log(
            f"{order_name:5} {strategy:11} lm-eval {fig.lm_eval_qps or 0:7.1f} q/s  "
            f"ratio {fig.ratio or 0:5.2f}  agreement {fig.agreement}"
        )

    def float32(self) -> None:
        """S5 on the first ``f32_check`` questions in float32, both engines (:mod:`.gpu_checks`)."""
        assert self.lm is not None
        first = list(range(min(self.opts.f32_check, len(self.stems))))
        fig = float32_check(
            self.ours.backend.model,
            partial(run_strategy, self.ours, self.lm, "S5", first, self.opts),
            self.ours.reset_prefix_store,
        )
        self.report.float32_check = Float32Check(
            fig.questions, fig.agreement, fig.max_abs_score_diff, fig.ours_qps, fig.lm_eval_qps
        )
        self.log(
            f"float32 S5 on {fig.questions}: agreement {fig.agreement}, max |diff| {fig.max_abs_score_diff}"
        )


def _interrupt(signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def run_gpu_bench(opts: GpuOptions, log: Any = print) -> GpuReport:
    """Run the GPU arm's phases (:func:`arm_phases`), writing its JSON the moment each ends.

    ``SIGTERM`` (what ``timeout`` sends at a call's budget) is raised as ``KeyboardInterrupt``
    while it runs, so a cut run records where it stopped (:func:`.gpu_report.run_phases`).
    """
    import signal  # noqa: PLC0415
    import threading  # noqa: PLC0415

    import torch  # noqa: PLC0415

    start = time.perf_counter()
    dataset = load_questions(opts.enem_dir, opts.limit)
    ours, lm, info = load_engines(opts, dataset)
    card = torch.cuda.get_device_name(0) if opts.device.startswith("cuda") else "cpu"
    report = GpuReport(
        card=card,
        dtype=opts.dtype,
        batch_size=opts.batch_size,
        lmeval_batch_size=lm.batch_size if lm is not None else None,  # type: ignore[arg-type]
        model=info,
        options={k: str(v) for k, v in asdict(opts).items()},
        n_questions=len(dataset.questions),
        started=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    )
    report.phases.append(PhaseRecord("load", time.perf_counter() - start))
    report.toolchain = toolchain()
    log(f"toolchain: {report.toolchain}")
    write_report(opts.out, report)
    log(f"phase 1 load: {report.phases[0].seconds:.1f} s")
    arm = GpuArm(opts, ours, lm, report, log)
    main = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGTERM, _interrupt) if main else None
    try:
        run_phases(arm_phases(arm), report, opts.out, log)
    finally:
        if main:
            signal.signal(signal.SIGTERM, before)
    return report
