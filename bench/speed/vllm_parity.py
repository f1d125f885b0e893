"""One measurement, every engine: HF in-process, vLLM in-process, a vLLM server (openai_compatible).

Runs S1 (generation), S5 (log_prob) and first_token on the same questions with the
packaged SmolLM2-135M-Instruct (float32, CPU) through each engine, and prints wall
times, prediction agreement with the HF run and the largest score difference::

    VLLM_CPU_KVCACHE_SPACE=2 .venv/bin/python bench/vllm_parity.py --questions demo
    VLLM_CPU_KVCACHE_SPACE=2 .venv/bin/python bench/vllm_parity.py --questions enem --limit 40

The ``if __name__ == "__main__"`` guard is required: vLLM starts its engine in a
child process that may re-import this module.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from bench.speed.engines import MODEL_NAME, TEAM_EXAMPLES, TEAM_PROMPT, VLLM_CPU
from bench.speed.options import DEFAULT_QUESTIONS
from bench.speed.vllm_server import VllmServer
from enade_bench.backends.api.backend import ApiBackend
from enade_bench.backends.api.keys import resolve_api_key
from enade_bench.backends.base import Backend
from enade_bench.backends.factory import create_backend
from enade_bench.backends.hf_load import local_folder, resolve_source
from enade_bench.benchmarks.enem import PRESET as ENEM_PRESET
from enade_bench.config import ApiConfig, DatasetConfig, EvaluationConfig, ModelConfig
from enade_bench.dataset.loader import load_dataset
from enade_bench.prompts.templates import load_prompt_set
from enade_bench.results.records import QuestionRecord
from enade_bench.results.store import RunPaths, atomic_write_text
from enade_bench.runner.execute import ChunkExecutor
from enade_bench.runner.plan import make_plan, template_prompt_fn
from enade_bench.scoring.extraction import extract_answer
from enade_bench.strategies.registry import Strategy, get_strategy

#: The model, the ENEM questions and the prompt files of the scoring benchmark; paths are
#: relative to the checkout root (run from there, like the other benchmarks).
MODEL = MODEL_NAME
DEMO = "data/enade_demo.csv"
METHODS = ("S1", "S5", "first_token")

#: An engine's figures: ``startup_s``, ``identity`` (our model identity, as JSON), ``<method>_s``
#: (wall seconds) and ``<method>_vs_<reference>`` (agreement with the first engine).
EngineFigures = dict[str, object]


class ParityReport(TypedDict):
    n_questions: int
    engines: dict[str, EngineFigures]


def questions(which: str, limit: int | None) -> list[Any]:
    """The demo's questions, or ENEM 2022's (first ``limit``)."""

    if which == "demo":
        loaded = load_dataset(DatasetConfig(path=DEMO, benchmark="enade")).questions
    else:
        loaded = load_dataset(
            DatasetConfig(path=DEFAULT_QUESTIONS, benchmark="enem"), preset=ENEM_PRESET
        ).questions
    return loaded[:limit] if limit else loaded


def strategy_for(name: str) -> Any:

    if name == "first_token":
        return Strategy("first_token", "first_token", "zero", False)
    return get_strategy(name, EvaluationConfig())


def run_method(backend: Backend, name: str, qs: Sequence[Any], batch_size: int = 8) -> list[QuestionRecord]:
    """Every question through one method, in the runner's chunks (same seeds as a run)."""

    evaluation = EvaluationConfig(batch_size=batch_size)
    strategy = strategy_for(name)
    prompts = load_prompt_set(TEAM_PROMPT, TEAM_EXAMPLES)
    plan = make_plan(
        qs,
        strategy,
        evaluation.seed,
        batch_size,
        template_prompt_fn(strategy, prompts),
        RunPaths.of(Path("."), "parity", name),
    )
    executor = ChunkExecutor(backend, plan, evaluation, extract_answer)
    records: list[QuestionRecord] = []
    for chunk in plan.chunks:
        records += executor.run(chunk)
    return records


@dataclass
class Comparison:
    """Agreement of one engine's predictions with the reference's, and the largest score gap."""

    n: int
    agree: int
    max_score_diff: float | None
    differing: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.agree / self.n if self.n else 1.0


def compare(reference: Sequence[QuestionRecord], other: Sequence[QuestionRecord]) -> Comparison:
    """Same prediction per question; largest |score difference| over every option (scoring methods)."""
    agree, diffs, differing = 0, [], []
    for a, b in zip(reference, other, strict=True):
        assert a.key == b.key
        if a.prediction == b.prediction:
            agree += 1
        else:
            differing.append(a.id)
        if a.option_scores and b.option_scores:
            diffs += [abs(a.option_scores[k] - b.option_scores[k]) for k in a.option_scores]
    return Comparison(len(reference), agree, max(diffs) if diffs else None, differing)


@contextmanager
def engine(name: str) -> Iterator[tuple[Backend, float]]:
    """``(backend, startup seconds)`` for ``hf``, ``vllm``, ``vllm-nocache`` or ``server``."""

    started = time.perf_counter()
    if name == "hf":
        yield create_backend(ModelConfig(name=MODEL)), time.perf_counter() - started
    elif name in ("vllm", "vllm-nocache"):  # nocache: prefix cache off (log_prob: a full pass per option)
        settings = VLLM_CPU.model_copy(update={"enable_prefix_caching": name == "vllm"})
        backend = create_backend(ModelConfig(name=MODEL, type="vllm", vllm=settings))
        try:
            yield backend, time.perf_counter() - started
        finally:
            backend.close()  # type: ignore[attr-defined]
    else:
        with serve_smollm2() as server:
            yield server_backend(server), time.perf_counter() - started


def smollm2_folder() -> str:
    """The converted folder of the packaged SmolLM2 (made once, cached)."""

    cfg = ModelConfig(name=MODEL)
    return local_folder(cfg, resolve_source(cfg))[0]


def serve_smollm2() -> Any:
    """A :class:`VllmServer` for the packaged SmolLM2 (float32, eager, 4096 tokens)."""
    import os  # noqa: PLC0415 (heavy or optional dependency, imported at use)

    args = ["--dtype", "float32", "--max-model-len", "4096", "--enforce-eager", "--seed", "0"]
    env = {"VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "2")}
    return VllmServer(smollm2_folder(), served_name="smollm2", args=args, env=env)


def server_backend(server: Any, **overrides: Any) -> Backend:
    """``openai_compatible`` on the server, prompts rendered with the model's own tokenizer.

    ``max_tokens: 1``: the generation budget is then the evaluation's ``max_new_tokens``, as
    in-process (API backends use the larger of the two).
    """

    cfg = {
        "provider": "openai_compatible",
        "model": "smollm2",
        "base_url": server.base_url,
        "api_key": "local",
        "completions_endpoint": True,
        "tokenizer": MODEL,
        "timeout_s": 600,
        "max_retries": 0,
        "max_concurrency": 8,
        "max_tokens": 1,
        **overrides,
    }
    api = ApiConfig(**cfg)
    return ApiBackend(api, resolve_api_key(api))


def measure(engines: Sequence[str], qs: Sequence[Any], methods: Sequence[str] = METHODS) -> ParityReport:
    """Records and wall times of every (engine, method); comparisons against the first engine."""
    out = ParityReport(n_questions=len(qs), engines={})
    records: dict[str, dict[str, list[QuestionRecord]]] = {}
    for name in engines:
        with engine(name) as (backend, startup):
            info: EngineFigures = {
                "startup_s": round(startup, 1),
                "identity": backend.identity.model_dump(mode="json", exclude_none=True),
            }
            records[name] = {}
            for method in methods:
                started = time.perf_counter()
                records[name][method] = run_method(backend, method, qs)
                info[f"{method}_s"] = round(time.perf_counter() - started, 1)
            out["engines"][name] = info
    reference = engines[0]
    for name in engines[1:]:
        for method in methods:
            c = compare(records[reference][method], records[name][method])
            out["engines"][name][f"{method}_vs_{reference}"] = {
                "agree": c.agree,
                "n": c.n,
                "max_score_diff": c.max_score_diff,
                "differing": c.differing,
            }
    return out


def main(argv: Sequence[str] | None = None, printer: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", choices=["demo", "enem"], default="demo")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--engines", default="hf,vllm,server")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    result = measure(args.engines.split(","), questions(args.questions, args.limit), args.methods.split(","))
    text = json.dumps(result, indent=2, default=str)
    if args.out:
        atomic_write_text(args.out, text)  # the one safe writer: never through a link
    printer(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
