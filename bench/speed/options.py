"""What the benchmark runs, with its defaults: the options ``python -m bench --help`` prints.

Light on purpose (the standard library only): the command's parser is built from these
defaults and names, and ``--help`` imports no engine, data or model code. The names the
options accept are written here; tests/bench/test_bench_options.py keeps them equal to
the engines' own (:data:`.engines.SCORING_METHODS`, :data:`.generation.GENERATION_STRATEGIES`,
:data:`.shapes.SHAPES`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bench.speed.data_paths import shared_data

#: The scoring methods measured against lm-eval (keys of :data:`.engines.SCORING_METHODS`).
SCORING_METHOD_NAMES = ("log_prob", "log_prob_one_shot", "first_token")
#: The generation arm's strategies (keys of :data:`.generation.GENERATION_STRATEGIES`).
GENERATION_STRATEGY_NAMES = ("S1", "S2", "S3")
#: The GPU arm's random-weight shapes (keys of :data:`.shapes.SHAPES`).
SHAPE_NAMES = ("llama-3-8b", "mistral-7b", "qwen2.5-7b", "qwen2.5-1.5b", "smollm2-135m")

#: The first ENEM 2022 booklets in ``../shared/data`` beside the checkout (from any folder).
DEFAULT_QUESTIONS = shared_data("../shared/data/enem/questions/pt-br/ENEM_2022_*.csv")


@dataclass(frozen=True)
class BenchOptions:
    """What to run (see ``python -m bench --help``)."""

    questions: str = DEFAULT_QUESTIONS
    limit: int | None = None
    out: Path = Path("bench/results/bench.json")
    threads: int = 2
    block: int = 8
    batch_size: int = 8
    #: lm-eval's ``batch_size``; None: 8 on HF, ``"auto"`` on vLLM (all requests at once).
    lmeval_batch_size: int | str | None = None
    lmeval: bool = True
    #: ``hf``: ours (HF) against lm-eval ``HFLM``; ``vllm``: ours (vLLM) against lm-eval ``VLLM``.
    engine: str = "hf"
    #: vLLM arm: the KV-cache block size of both engines (None: vLLM's default, 128 on CPU).
    vllm_block_size: int | None = 32
    n_shuffles: int = 30
    shuffle_questions: int = 8
    gen_questions: int = 8
    gen_batch: int = 8
    max_new_tokens: int = 10
    #: Methods measured against lm-eval: :data:`SCORING_METHOD_NAMES` and ``generation``
    #: (the generation arm, :mod:`bench.speed.generation`).
    methods: tuple[str, ...] = SCORING_METHOD_NAMES
    #: The generation arm's strategies (S1 zero-shot, S2 one-shot, S3 few-shot).
    gen_strategies: tuple[str, ...] = ("S1", "S3")
    #: Busy processes running during the scoring phase (:mod:`bench.speed.load`).
    competing_load: int = 0
    #: Our HF backend's run-wide prefix cache and tree scoring (off: today's batched path).
    prefix_cache: bool = True
    tree: bool = True


#: The GPU arm's ENEM booklets (``ENEM_<year>_*.csv``).
ENEM_DIR = shared_data("../shared/data/enem/questions/pt-br")
#: The GPU arm's strategies, and the lm-eval peer of those it compares (a strategy or a scoring method).
GPU_STRATEGIES = ("S1", "S2", "S3", "S4", "S5", "S6", "first_token")
PEERS = {"S1": "S1", "S3": "S3", "S5": "log_prob", "S6": "log_prob_one_shot", "first_token": "first_token"}


@dataclass(frozen=True)
class GpuOptions:
    """What the GPU arm runs (``python -m bench --device cuda --help``)."""

    shape: str | None = "llama-3-8b"
    model_dir: str | None = None
    tokenizer: str | None = None
    device: str = "cuda"
    dtype: str = "bfloat16"
    batch_size: int = 32
    #: Ours: the chunk sized from the card's memory (``evaluation.batch_size: auto``,
    #: :func:`.gpu_checks.size_batch`); the size found replaces ``batch_size`` and is recorded.
    batch_auto: bool = False
    lmeval_batch_size: int | None = None
    limit: int = 720
    orders: tuple[str, ...] = ("file", "mixed")
    #: Orders in which lm-eval runs too: it sorts its requests by length itself, so the
    #: order of the documents does not change its batches (one order saves GPU time).
    lmeval_orders: tuple[str, ...] = ("file",)
    #: Strategies lm-eval runs too (those of issue 35's ratios: a whole peer run costs the card
    #: as much as ours, and the arm has one device call).
    lmeval_strategies: tuple[str, ...] = ("S5", "S1", "S3")
    #: Questions of the float32 check (:mod:`.gpu_checks`), after the first order; 0: none.
    f32_check: int = 0
    #: Profile one chunk of S5 and of S1 (:func:`.gpu_checks.profile_chunk`) after the warm-up,
    #: with FlexAttention (the CUDA policy) and with the SDPA paths (:data:`.gpu.SDPA_POLICY`).
    profile: bool = False
    strategies: tuple[str, ...] = GPU_STRATEGIES
    max_new_tokens: int = 10
    lmeval: bool = True
    enem_dir: str = ENEM_DIR
    #: ``--shape`` with fewer layers (a quick run or a test); None: the shape's own.
    layers: int | None = None
    #: Ours: the decode step through ``torch.compile`` (``BatchingPolicy.compile_decode``).
    compile_decode: bool = False
    #: ``--device cpu`` only: ours under the CUDA policy with FlexAttention compiled on the CPU by
    #: this backend (``aot_eager``, or ``inductor`` with static shapes): the card's path, dry.
    card_path: str | None = None
    out: Path = Path("bench/results/bench_gpu.json")
