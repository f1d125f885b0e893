"""Our HF scoring paths against each other: what the prefix store and tree scoring buy.

``python -m bench.speed.scoring_paths [--questions GLOB] [--limit 40] [--threads 2]
[--methods log_prob,log_prob_one_shot,first_token] [--out FILE]``

runs each scoring method three ways on the same questions, in one process and in
rotating order (so drift of a shared machine hits every path alike):

* ``batched``: no store, no tree — each chunk's common prefix once, then the stems as
  one padded batch and the options as a second batch on copies of each stem's cache;
* ``store``: the same plus the run-wide prefix store (``backends/hf_prefix.py``);
* ``store+tree``: the store plus one call per chunk, attention per question tree (``backends/hf_tree.py``),
  the backend's default.

For each: wall seconds, process CPU seconds, positions fed to the model, model calls,
and whether predictions are identical to ``batched`` (largest score difference).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, TypedDict

from bench.speed.engines import SCORING_METHODS, OursEngine
from bench.speed.options import DEFAULT_QUESTIONS
from bench.speed.records import ScoringRun
from enade_bench.results.store import atomic_write_text

#: name -> (run-wide prefix store, tree scoring)
PATHS = {"batched": (False, False), "store": (True, False), "store+tree": (True, True)}


class PathFigures(TypedDict, total=False):
    """One scoring path's figures, summed over the rounds, and its agreement with ``batched``."""

    seconds: float
    cpu_seconds: float
    tokens: int
    calls: int
    identical_predictions: int
    max_abs_score_diff: float
    cpu_ratio_to_batched: float


#: A method: ``questions``, ``rounds``, then :class:`PathFigures` per path (keys of :data:`PATHS`).
MethodPaths = TypedDict(
    "MethodPaths",
    {
        "questions": int,
        "rounds": int,
        "batched": PathFigures,
        "store": PathFigures,
        "store+tree": PathFigures,
    },
)


def _configure(engine: OursEngine, store: bool, tree: bool, saved: tuple[Any, bool]) -> None:
    prefix_store, tree_ok = saved
    if prefix_store is not None:
        prefix_store.clear()
    engine.backend.prefix_store = prefix_store if store else None
    engine.backend.tree = tree_ok and tree


def compare(
    engine: OursEngine, methods: list[str], indices: list[int], rounds: int = 2
) -> dict[str, MethodPaths]:
    """Per method and path: summed figures over ``rounds`` rotations, agreement with ``batched``."""
    saved = (engine.backend.prefix_store, engine.backend.tree)
    out: dict[str, MethodPaths] = {}
    for method in methods:
        figures: dict[str, PathFigures] = {
            p: {"seconds": 0.0, "cpu_seconds": 0.0, "tokens": 0, "calls": 0} for p in PATHS
        }
        results: dict[str, ScoringRun] = {}
        names = list(PATHS)
        for r in range(rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                _configure(engine, *PATHS[name], saved)
                tokens, calls, cpu = engine.counter.tokens, engine.counter.calls, time.process_time()
                res = engine.run(method, indices)
                figures[name]["cpu_seconds"] += time.process_time() - cpu
                figures[name]["seconds"] += res["seconds"]
                figures[name]["tokens"] += engine.counter.tokens - tokens
                figures[name]["calls"] += engine.counter.calls - calls
                results[name] = res
        base = results["batched"]
        for name, fig in figures.items():
            res = results[name]
            fig["identical_predictions"] = sum(
                res["predictions"][q] == p for q, p in base["predictions"].items()
            )
            fig["max_abs_score_diff"] = max(
                (
                    abs(a - b)
                    for q, s in base["scores"].items()
                    for a, b in zip(s, res["scores"][q], strict=True)
                ),
                default=0.0,
            )
            fig["cpu_ratio_to_batched"] = fig["cpu_seconds"] / figures["batched"]["cpu_seconds"]
        out[method] = {
            "questions": len(indices),
            "rounds": rounds,
            "batched": figures["batched"],
            "store": figures["store"],
            "store+tree": figures["store+tree"],
        }
    _configure(engine, True, True, saved)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", default=DEFAULT_QUESTIONS)
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--methods", default=",".join(SCORING_METHODS))
    parser.add_argument("--out", type=Path, default=Path("bench/results/scoring_paths.json"))
    args = parser.parse_args()
    engine = OursEngine(args.questions, args.threads, 8)
    indices = list(range(min(args.limit, len(engine.dataset.questions))))
    engine.run("first_token", indices[:1])  # warm-up
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    report = {
        "started": started,
        "threads": args.threads,
        "methods": compare(engine, args.methods.split(","), indices, args.rounds),
    }
    atomic_write_text(args.out, json.dumps(report, indent=2) + "\n")  # never through a link
    for method, entry in report["methods"].items():
        for name in PATHS:
            f = entry[name]
            print(
                f"{method:18s} {name:11s} cpu {f['cpu_seconds']:7.1f}s ({f['cpu_ratio_to_batched']:.2f}x) "
                f"wall {f['seconds']:7.1f}s tokens/q {f['tokens'] / entry['questions'] / entry['rounds']:6.0f} "
                f"calls {f['calls']:4d} identical {f['identical_predictions']}/{entry['questions']} "
                f"max diff {f['max_abs_score_diff']:.1e}"
            )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
