"""Command-line options of the benchmark (``python -m bench``, :mod:`bench.__main__`).

The parser is built from :mod:`.options` alone, so ``--help`` imports no engine, data or
model code (no torch, transformers or pandas); :func:`run` imports them.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bench.speed.options import (
    DEFAULT_QUESTIONS,
    ENEM_DIR,
    GENERATION_STRATEGY_NAMES,
    GPU_STRATEGIES,
    PEERS,
    SCORING_METHOD_NAMES,
    SHAPE_NAMES,
    BenchOptions,
    GpuOptions,
)

if TYPE_CHECKING:
    from bench.speed.shapes import ShapeSizes

#: What ``--methods`` accepts: the scoring methods and the generation arm.
METHODS = (*SCORING_METHOD_NAMES, "generation")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the benchmark's options to ``parser``."""
    d = BenchOptions()
    parser.add_argument("--questions", default=DEFAULT_QUESTIONS, help="CSV glob (ENEM preset)")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--out", type=Path, default=d.out, help="JSON output file")
    parser.add_argument("--threads", type=int, default=d.threads, help="torch threads, both engines")
    parser.add_argument("--block", type=int, default=d.block, help="questions per interleaved block")
    parser.add_argument("--batch-size", type=int, default=d.batch_size, help="our first_token batch")
    parser.add_argument(
        "--lmeval-batch-size",
        help="lm-eval's batch_size: an integer or 'auto' "
        "(default: 8 with --engine hf, auto with --engine vllm)",
    )
    parser.add_argument(
        "--engine",
        choices=["hf", "vllm"],
        default=d.engine,
        help="hf: ours (transformers) vs lm-eval HFLM; vllm: ours (model.type vllm) "
        "vs lm-eval --model vllm (needs vLLM; docs/performance.md)",
    )
    parser.add_argument(
        "--vllm-block-size",
        type=int,
        default=d.vllm_block_size,
        help="--engine vllm: KV-cache block size of both engines (0: vLLM's default, 128 on CPU)",
    )
    parser.add_argument("--no-lmeval", action="store_true", help="skip the lm-eval side")
    parser.add_argument("--n-shuffles", type=int, default=d.n_shuffles)
    parser.add_argument(
        "--shuffle-questions",
        type=int,
        default=d.shuffle_questions,
        help="questions in the shuffle measurement (0: skip)",
    )
    parser.add_argument(
        "--gen-questions",
        type=int,
        default=d.gen_questions,
        help="questions in the generation measurement (0: skip)",
    )
    parser.add_argument("--gen-batch", type=int, default=d.gen_batch)
    parser.add_argument("--max-new-tokens", type=int, default=d.max_new_tokens)
    parser.add_argument(
        "--methods",
        default=",".join(d.methods),
        help=f"methods against lm-eval, comma-separated ({', '.join(METHODS)}; "
        "generation: our generation against lm-eval's generate_until)",
    )
    parser.add_argument(
        "--gen-strategies",
        default=",".join(d.gen_strategies),
        help=f"--methods generation: strategies, comma-separated ({', '.join(GENERATION_STRATEGY_NAMES)})",
    )
    parser.add_argument(
        "--competing-load",
        type=int,
        default=d.competing_load,
        metavar="N",
        help="N busy processes during the scoring phase (docs/performance.md)",
    )
    parser.add_argument(
        "--no-prefix-cache", action="store_true", help="ours without the run-wide prefix cache"
    )
    parser.add_argument("--no-tree", action="store_true", help="ours without tree scoring")
    gpu = parser.add_argument_group("GPU arm (--device cuda; docs/performance.md#gpu)")
    gpu.add_argument("--device", choices=["cpu", "cuda"], help="cuda: the GPU arm (bench/gpu/run_gpu.sh)")
    gpu.add_argument(
        "--shape", help=f"random weights of a real shape, built in place ({', '.join(SHAPE_NAMES)})"
    )
    gpu.add_argument("--layers", type=int, help="--shape with fewer layers (a quick run)")
    gpu.add_argument("--model-dir", help="a local transformers folder instead of --shape")
    gpu.add_argument("--tokenizer", help="tokenizer folder (default: the packaged SmolLM2's)")
    gpu.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    gpu.add_argument(
        "--orders", default="file,mixed", help="file: booklet order; mixed: short and long stems"
    )
    gpu.add_argument("--lmeval-orders", default="file", help="orders in which lm-eval runs too")
    gpu.add_argument("--lmeval-strategies", default="S5,S1,S3", help="strategies lm-eval runs too")
    gpu.add_argument(
        "--f32-check",
        type=int,
        default=0,
        metavar="N",
        help="S5 on the first N questions in float32, ours against lm-eval (0: none)",
    )
    gpu.add_argument(
        "--profile",
        action="store_true",
        help="profile one chunk of S5 and S1 (torch.profiler), FlexAttention and SDPA",
    )
    gpu.add_argument(
        "--batch-auto",
        action="store_true",
        help="ours: chunks sized from the card's memory (batch_size auto), recorded",
    )
    gpu.add_argument("--enem-dir", default=ENEM_DIR, help="folder of the ENEM booklets (ENEM_<year>_*.csv)")
    gpu.add_argument("--strategies", default=",".join(GPU_STRATEGIES), help="GPU arm strategies")
    gpu.add_argument(
        "--compile-decode",
        action="store_true",
        help="ours: the decode step through torch.compile / CUDA graphs (off by default)",
    )
    gpu.add_argument(
        "--card-path",
        choices=["aot_eager", "inductor"],
        help="--device cpu: ours under the CUDA policy, FlexAttention compiled on the CPU by this "
        "backend (inductor: static shapes), as on a card (the dry run of bench/gpu/run_gpu.sh)",
    )


#: Largest value accepted for each count (a larger one is a typo, or a run that never ends):
#: questions, a batch of prompts, layers of a model built from a --shape without one.
UPPER = {"limit": 100_000, "batch_size": 1024, "gen_batch": 1024, "layers": 256, "max_new_tokens": 8192}


def _bounded(args: argparse.Namespace, names: tuple[str, ...]) -> None:
    """Each count in ``names`` is a positive integer no larger than :data:`UPPER` (``--layers``:
    no more than the ``--shape`` has)."""
    for name in names:
        value = getattr(args, name, None)
        if value is None:
            continue
        option = f"--{name.replace('_', '-')}"
        if value < 1:
            raise ValueError(f"{option}: expected a positive integer, got {value}")
        shape = _shape(getattr(args, "shape", None))
        most = int(shape["num_hidden_layers"]) if name == "layers" and shape else UPPER.get(name)
        if most is not None and value > most:
            whose = f" (--shape {args.shape} has {most} layers)" if name == "layers" and shape else ""
            raise ValueError(f"{option}: expected at most {most}{whose}, got {value}")


def _shape(name: str | None) -> ShapeSizes | None:
    """The ``--shape``'s layer sizes (None: no shape, or an unknown one)."""
    if not name:
        return None
    from bench.speed.shapes import SHAPES  # noqa: PLC0415 (not at --help)

    return SHAPES.get(name)


def options_from(args: argparse.Namespace) -> BenchOptions:
    """:class:`BenchOptions` from parsed arguments (checks lm-eval is importable when needed)."""
    _bounded(args, ("limit", "threads", "block", "batch_size", "gen_batch"))
    lmeval_batch = parse_lmeval_batch_size(args.lmeval_batch_size)
    engine = getattr(args, "engine", "hf")
    if engine == "vllm" and importlib.util.find_spec("vllm") is None:
        raise ValueError("--engine vllm: vLLM is not installed: pip install -e '.[vllm]' (docs/vllm.md)")
    if args.competing_load < 0:
        raise ValueError(f"--competing-load: expected 0 or more processes, got {args.competing_load}")
    methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        raise ValueError(f"--methods: expected some of {', '.join(METHODS)}, got {args.methods!r}")
    from bench.speed.generation import parse_strategies  # noqa: PLC0415 (not at --help)

    gen_strategies = tuple(parse_strategies(getattr(args, "gen_strategies", "S1,S3")))
    lmeval = not args.no_lmeval
    if lmeval:
        try:
            import lm_eval  # noqa: F401, PLC0415
        except ImportError:
            raise ValueError(
                "lm-eval is not installed: pip install -e '.[bench]' (or pass --no-lmeval)"
            ) from None
    return BenchOptions(
        questions=args.questions,
        limit=args.limit,
        out=args.out,
        threads=args.threads,
        block=args.block,
        batch_size=args.batch_size,
        lmeval_batch_size=lmeval_batch,
        lmeval=lmeval,
        engine=engine,
        n_shuffles=args.n_shuffles,
        shuffle_questions=args.shuffle_questions,
        gen_questions=args.gen_questions,
        gen_batch=args.gen_batch,
        max_new_tokens=args.max_new_tokens,
        methods=methods,
        gen_strategies=gen_strategies,
        competing_load=args.competing_load,
        prefix_cache=not args.no_prefix_cache,
        tree=not args.no_tree,
    )


def parse_lmeval_batch_size(value: str | int | None) -> int | str | None:
    """``--lmeval-batch-size``: a positive integer, ``auto``, or None (the engine's default)."""
    if value is None or (isinstance(value, int) and value >= 1):
        return value
    text = str(value).strip()
    if text == "auto":
        return text
    if text.isdigit() and int(text) >= 1:
        return int(text)
    raise ValueError(f"--lmeval-batch-size: expected a positive integer or 'auto', got {value!r}")


def vllm_block_size(value: int | None) -> int | None:
    """``--vllm-block-size``: a positive integer, or 0 / None for vLLM's default."""
    if value is None or value == 0:
        return None
    if value < 0:
        raise ValueError(f"--vllm-block-size: expected a positive integer (or 0), got {value}")
    return value


def gpu_options_from(args: argparse.Namespace) -> GpuOptions | None:
    """:class:`GpuOptions` when the GPU arm is asked for (``--device``, ``--shape`` or ``--model-dir``)."""
    if not (
        getattr(args, "device", None) or getattr(args, "shape", None) or getattr(args, "model_dir", None)
    ):
        return None
    if args.shape and args.model_dir:
        raise ValueError("--shape and --model-dir: give one")
    if args.shape and args.shape not in SHAPE_NAMES:
        raise ValueError(f"--shape: expected one of {', '.join(SHAPE_NAMES)}, got {args.shape!r}")
    strategies = tuple(s.strip() for s in args.strategies.split(",") if s.strip())
    unknown = [s for s in strategies if s not in GPU_STRATEGIES]
    if unknown or not strategies:
        raise ValueError(
            f"--strategies: expected some of {', '.join(GPU_STRATEGIES)}, got {args.strategies!r}"
        )
    orders = tuple(o.strip() for o in args.orders.split(",") if o.strip())
    if not orders or any(o not in ("file", "mixed") for o in orders):
        raise ValueError(f"--orders: expected file and/or mixed, got {args.orders!r}")
    _check_gpu_arm(args)
    batch = args.batch_size if args.batch_size != BenchOptions().batch_size else GpuOptions().batch_size
    lmeval_batch = parse_lmeval_batch_size(args.lmeval_batch_size)
    out = args.out if args.out != BenchOptions().out else GpuOptions().out
    return GpuOptions(
        shape=None if args.model_dir else (args.shape or GpuOptions().shape),
        model_dir=args.model_dir,
        tokenizer=args.tokenizer,
        device=args.device or "cuda",
        dtype=args.dtype,
        batch_size=batch,
        lmeval_batch_size=lmeval_batch if isinstance(lmeval_batch, int) else None,
        limit=args.limit or GpuOptions().limit,
        orders=orders,
        strategies=strategies,
        lmeval_orders=tuple(o.strip() for o in args.lmeval_orders.split(",") if o.strip()),
        lmeval_strategies=_lmeval_strategies(args.lmeval_strategies),
        f32_check=args.f32_check,
        profile=args.profile,
        batch_auto=args.batch_auto,
        enem_dir=args.enem_dir,
        layers=args.layers,
        compile_decode=args.compile_decode,
        card_path=args.card_path,
        max_new_tokens=args.max_new_tokens,
        lmeval=not args.no_lmeval,
        out=out,
    )


def _lmeval_strategies(value: str) -> tuple[str, ...]:
    """``--lmeval-strategies``: some of the strategies lm-eval has a peer for, or none (empty)."""
    names = tuple(s.strip() for s in value.split(",") if s.strip())
    unknown = [s for s in names if s not in PEERS]
    if unknown:
        raise ValueError(f"--lmeval-strategies: expected some of {', '.join(PEERS)}, got {value!r}")
    return names


def _check_gpu_arm(args: argparse.Namespace) -> None:
    """What the GPU arm needs, checked before any model or data is loaded."""
    _bounded(args, ("layers", "limit", "batch_size", "max_new_tokens"))
    if getattr(args, "f32_check", 0) < 0:
        raise ValueError(f"--f32-check: expected a number of questions (0: none), got {args.f32_check}")
    for name in ("model_dir", "tokenizer", "enem_dir"):
        folder = getattr(args, name, None)
        if folder and not Path(folder).is_dir():
            raise ValueError(f"--{name.replace('_', '-')}: no folder {folder!r}")
    if getattr(args, "card_path", None) and args.device != "cpu":
        raise ValueError(f"--card-path {args.card_path}: expected --device cpu (a card runs its own path)")
    if (args.device or "cuda") == "cuda":
        import torch  # noqa: PLC0415 (the GPU arm only; before any model is loaded)

        if not torch.cuda.is_available():
            build = f"CUDA {torch.version.cuda}" if torch.version.cuda else "a build without CUDA"
            raise ValueError(
                f"--device cuda: no CUDA device here (torch {torch.__version__}, {build}); run the GPU "
                "arm on a GPU machine (bench/gpu/run_gpu.sh), or --device cpu for a slow check"
            )


def run(args: argparse.Namespace) -> int:
    """Run the benchmark, print the table and the JSON path."""
    gpu = gpu_options_from(args)
    if gpu is not None:
        from bench.speed.gpu import run_gpu_bench  # noqa: PLC0415 (torch, transformers: not at --help)

        gpu_report = run_gpu_bench(gpu, log=lambda line: print(line, file=sys.stderr, flush=True))
        print(f"wrote {gpu.out}")
        return 1 if gpu_report.errors else 0  # each failed phase is in the JSON, the others ran
    opts = options_from(args)
    from bench.speed.core import run_bench  # noqa: PLC0415 (torch, transformers: not at --help)
    from bench.speed.report import table  # noqa: PLC0415

    report = run_bench(opts, log=lambda line: print(line, file=sys.stderr, flush=True))
    print(table(report))
    print(f"wrote {opts.out}")
    return 0
