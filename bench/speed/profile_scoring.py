"""Where the time goes: torch-profiler tables of our S5 scoring and lm-eval's, same questions.

``python -m bench.speed.profile_scoring [--questions GLOB] [--n 2] [--threads 1] [--methods M,…] [--out FILE]``
runs both engines in this process (after one warm-up question each) under
``torch.profiler`` and writes the operator tables and wall times to ``--out``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench.speed.engines import SCORING_METHODS, LmEvalEngine, OursEngine
from bench.speed.options import DEFAULT_QUESTIONS
from enade_bench.results.store import atomic_write_text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", default=DEFAULT_QUESTIONS)
    parser.add_argument("--n", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--methods",
        default="log_prob,first_token",
        help="comma-separated: log_prob, log_prob_one_shot, first_token",
    )
    parser.add_argument("--out", type=Path, default=Path("bench/results/profile_scoring.txt"))
    args = parser.parse_args()
    methods = args.methods.split(",")
    unknown = sorted(set(methods) - set(SCORING_METHODS))
    if unknown:
        parser.error(f"--methods: expected some of {', '.join(SCORING_METHODS)}, got {', '.join(unknown)}")
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    ours = OursEngine(args.questions, args.threads, 8)
    lm = LmEvalEngine(ours.model_dir, args.threads, 8)
    warm, measured = [args.n], list(range(args.n))
    lines = [f"threads={args.threads}, questions={measured}"]
    for method in methods:
        docs = ours.docs(measured)
        ours.run(method, warm)
        lm.run(method, ours.docs(warm))
        for name, call in (
            ("ours", lambda m=method: ours.run(m, measured)),
            ("lm_eval", lambda m=method, d=docs: lm.run(m, d)),
        ):
            start = time.perf_counter()
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                res = call()
            wall = time.perf_counter() - start
            model = res.get("model_seconds", res["seconds"])
            lines.append(
                f"\n== {method} / {name}: wall {wall:.2f}s, scoring {model:.2f}s, tokens {res['tokens']}"
            )
            lines.append(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))
    atomic_write_text(args.out, "\n".join(lines) + "\n")  # the one safe writer: never through a link
    print("\n".join(line for line in lines if line.startswith("\n==") or line.startswith("threads")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
