"""The benchmark's records: what the worker processes answer, and the sections of the report.

They are ``TypedDict``: each is a plain dict at run time, sent over a worker's pipe or
written to the JSON report as it is (the keys here are the report's keys, in its order).
"""

from __future__ import annotations

from typing import NotRequired, TypedDict, final

from bench.speed.gen_results import GenerationStrategyResult

#: lm-eval's own metrics of a task (``acc``, ``acc_norm`` ...), numbers only.
Metrics = dict[str, float]
#: A block's wall seconds: ``block`` and ``questions``, then ``<method>/<engine>`` (and
#: ``<method>/<engine>/model``) or ``<strategy>/<engine>`` in the order they ran.
BlockTimes = dict[str, float]


# -- worker constructor arguments (passed to the spawned process) --------------------------
@final
class OursArgs(TypedDict):
    """:class:`~.engines.OursEngine`'s arguments."""

    questions: str
    threads: int
    batch_size: int
    engine: str
    vllm_block_size: int | None
    prefix_cache: bool
    tree: bool


@final
class LmEvalArgs(TypedDict):
    """:class:`~.engines.LmEvalEngine`'s arguments."""

    model_dir: str
    threads: int
    batch_size: int | str
    engine: str
    vllm_block_size: int | None


# -- worker replies ------------------------------------------------------------------------
class OursInfo(TypedDict):
    """:meth:`~.engines.OursEngine.info`: the dataset and the model, once loaded."""

    n_questions: int
    filter_counts: dict[str, int]
    sources: list[dict[str, str]]
    model_dir: str
    #: Our :class:`~enade_bench.backends.base.ModelIdentity`, dumped as JSON (None fields left out).
    model_identity: dict[str, object]
    rss_mb_after_load: float


class LmEvalInfo(TypedDict):
    """:meth:`~.engines.LmEvalEngine.info`."""

    lm_eval_version: str
    model: str
    batch_size: int | str
    rss_mb_after_load: float


class LmEvalSection(LmEvalInfo):
    """The report's ``lm_eval``: its worker's info and the ``vllm`` alias version (vLLM arm)."""

    vllm_alias: str | None


class Peak(TypedDict):
    """A worker's memory (MiB): peak RSS (``ru_maxrss``; vLLM: of the worker only) and RSS now."""

    max_rss_mb: NotRequired[float]
    max_rss_mb_worker_only: NotRequired[float]
    rss_mb: float


class PhaseFigures(TypedDict):
    """One measured phase (:class:`~.measure.Phase`)."""

    seconds: float
    peak_rss_mb: float
    start_rss_mb: float
    tokens: int
    model_calls: int
    #: vLLM: prompt tokens served from its prefix cache (not fed).
    prefix_cached_tokens: NotRequired[int]


class ScoringDoc(TypedDict):
    """A question as an lm-eval document: the exact contexts our scoring methods score."""

    qid: str
    ctx_log_prob: str
    ctx_log_prob_one_shot: str
    ctx_first_token: str
    options: list[str]
    letters: list[str]
    gold: int | None


class LmEvalPredictions(TypedDict):
    """Per question, lm-eval's scores read under our rule (:meth:`.lmeval_tasks._Recording.predictions`)."""

    predictions: dict[str, str]
    scores: dict[str, list[float]]
    contexts_identical: int
    n_tokens: NotRequired[dict[str, list[int]]]


class ScoringRun(PhaseFigures):
    """A scoring method on some questions, by either engine (``run``)."""

    #: lm-eval: time inside ``loglikelihood``.
    model_seconds: NotRequired[float]
    lm_eval_metrics: NotRequired[Metrics]
    predictions: dict[str, str | None]
    correct: NotRequired[int]
    #: Per question, the option scores (``log_prob``: summed log-probabilities).
    scores: dict[str, list[float]]
    contexts_identical: NotRequired[int]
    n_tokens: NotRequired[dict[str, list[int]]]


class ItemsRun(PhaseFigures):
    """Our shuffles or generation phase (``shuffles``, ``generate``)."""

    items: int
    predictions: dict[str, str | None]


class GenDoc(TypedDict):
    """The prompt our runner sends for a generation strategy, as an lm-eval document."""

    qid: str
    ctx: str
    answer: str | None
    options: list[str]
    letters: str
    prompt_tokens: int
    prompt_digest: str


class LmEvalGeneration(TypedDict):
    """What lm-eval's ``generate_until`` made of our prompts (:func:`.lmeval_generate.evaluate_generation`)."""

    texts: dict[str, str]
    contexts_identical: int
    prompt_token_ids: dict[str, list[int]]
    #: As lm-eval passed them to ``generate_until`` (its own keys: third-party data).
    gen_kwargs: dict[str, object]
    lm_eval_metrics: Metrics


class GenRun(PhaseFigures):
    """A generation strategy on some questions, by either engine (``gen_run``)."""

    #: lm-eval: time inside ``generate_until``; ours: the executor calls (= ``seconds``).
    model_seconds: float
    texts: dict[str, str]
    contexts_identical: NotRequired[int]
    prompt_token_ids: NotRequired[dict[str, list[int]]]
    gen_kwargs: NotRequired[dict[str, object]]
    lm_eval_metrics: NotRequired[Metrics]


# -- report sections -----------------------------------------------------------------------
class Totals(TypedDict, total=False):
    """Figures summed over phases (peaks: maxima; :func:`.core._add`): a reply's keys less its
    per-question parts, then the throughput :func:`.report.summarise` derives."""

    seconds: float
    peak_rss_mb: float
    start_rss_mb: float
    tokens: int
    model_calls: int
    prefix_cached_tokens: int
    model_seconds: float
    #: The last block's (kept as it came, not summed).
    lm_eval_metrics: Metrics
    correct: int
    contexts_identical: int
    items: int
    questions: int
    items_per_second: float
    questions_per_second: float
    tokens_per_second: float
    tokens_per_question: float
    questions_per_second_model_only: float


class MachineInfo(TypedDict):
    """The machine and library versions the figures come from."""

    cpu: str
    logical_cpus: int | None
    memory_gb: float
    platform: str
    python: str
    torch: str
    transformers: str
    lm_eval: str | None
    threads: int
    load_average_start: list[float]
    vllm_cpu_kvcache_space_gb: NotRequired[str | None]
    load_average_end: NotRequired[list[float]]


class BackendSection(TypedDict):
    run_prefix_cache: bool
    block_causal: bool


class DatasetSection(TypedDict):
    n_questions: int
    filter_counts: dict[str, int]
    sources: list[dict[str, str]]


class LoadSummary(TypedDict):
    """The competing load (:class:`~.load.CompetingLoad`) that ran."""

    processes: int
    workload: str
    seconds: float
    products_per_second_per_process: float


class Target(TypedDict):
    """A target as measured: ``target`` reads e.g. ``">= 2.0"``."""

    target: str
    value: float
    met: bool


class Difference(TypedDict):
    """A question whose predictions differ between the engines."""

    id: str
    ours: str | None
    lm_eval: str | None
    ours_scores: list[float]
    lm_eval_scores: list[float]
    ours_top2_gap: float | None


class Agreement(TypedDict):
    """Both engines' predictions and scores on the questions both answered."""

    n: int
    agree: int
    agreement: float | None
    max_abs_score_diff: float
    token_count_mismatches: int
    differences: list[Difference]


class EngineAnswer(TypedDict):
    """One engine's answer to a question: prediction, option scores, tokens per option."""

    prediction: str | None
    scores: list[float] | None
    n_tokens: NotRequired[list[int] | None]


class QuestionPair(TypedDict, total=False):
    ours: EngineAnswer
    lm_eval: EngineAnswer


class ScoringMethod(TypedDict):
    """A scoring method: both engines' summed figures, their ratios, their agreement."""

    ours: Totals
    lm_eval: Totals
    speedup_vs_lm_eval_model_time: NotRequired[float]
    speedup_vs_lm_eval_end_to_end: NotRequired[float]
    token_ratio_lm_eval_over_ours: NotRequired[float]
    agreement: NotRequired[Agreement]


class ShufflesSection(TypedDict):
    """``first_token`` with ``n_shuffles`` orders: shared (one chunk per question) and independent."""

    n_questions: int
    n_shuffles: int
    shared: Totals
    independent: Totals
    time_ratio_shared_over_independent: float
    token_ratio_shared_over_independent: float
    prediction_agreement: float


class Memory(TypedDict):
    ours: Peak
    lm_eval: NotRequired[Peak]


class GenQuestion(TypedDict):
    """A question of the generation arm: its options, both engines' texts and letters."""

    letters: str
    options: list[str]
    ours: NotRequired[str]
    lm_eval: NotRequired[str]
    ours_letter: NotRequired[str | None]
    lm_eval_letter: NotRequired[str | None]


class Report(TypedDict, total=False):
    """The JSON report, its sections in the order they are written."""

    machine: MachineInfo
    #: :class:`~.options.BenchOptions`, paths as strings.
    options: dict[str, object]
    backend: BackendSection
    started: str
    status: str
    dataset: DatasetSection
    #: ``dir`` and our model identity (as :attr:`OursInfo.model_identity`).
    model: dict[str, object]
    lm_eval: LmEvalSection
    scoring: dict[str, ScoringMethod]
    per_question: dict[str, dict[str, QuestionPair]]
    blocks: list[BlockTimes]
    competing_load: LoadSummary
    shuffles: ShufflesSection
    #: ``n_questions``, ``max_new_tokens``, ``batch_<size>`` (:data:`Totals`, one per batch
    #: size) and ``same_answer_batch_1_vs_batched``.
    generation: dict[str, int | float | Totals]
    #: :class:`~.generation.GenerationArm`.
    generation_vs_lm_eval: GenerationArmSection
    memory: Memory
    finished: str
    targets: dict[str, Target]


class GenerationArmSection(TypedDict):
    """The generation arm (:func:`~.generation.run_generation_arm`); ``results`` holds
    :class:`~.gen_results.GenerationStrategyResult` (written as their fields)."""

    strategies: list[str]
    max_new_tokens: int
    until: list[str]
    lm_eval_gen_kwargs: dict[str, object] | None
    results: dict[str, GenerationStrategyResult]
    ours_s3_over_s1: float | None
    targets: dict[str, Target]
    per_question: dict[str, dict[str, GenQuestion]]
    blocks: list[BlockTimes]
