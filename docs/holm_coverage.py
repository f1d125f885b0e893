"""Joint coverage of the statements ``compare`` shows, over whole simulated exams (issue 43).

Quoted in docs/comparisons.md. Run from the repository root:

    PYTHONPATH=.:src python docs/holm_coverage.py [--exams 1000] [--seed 43]

Two designs (:data:`bench.holm_coverage_sim.DESIGNS`): five models on 200 questions,
one record each (McNemar's score test and Tango's interval), abilities a small step
apart, or far enough apart that several of the ten pairs are rejected, but never all.
For Holm (directional, with Strassburger & Bretz's statements) and Bonferroni it prints
the share of exams whose every statement holds, with Wilson's 95 % Monte-Carlo interval,
and, for Holm, the same for the old display (two-sided Holm's intervals at its step levels).
"""

from __future__ import annotations

import argparse

from bench.holm_coverage_sim import DESIGNS, simulate_coverage


def _rate(count: int, exams: int, interval: tuple[float, float]) -> str:
    return f"{count / exams:.3f} ({count}/{exams}) [{interval[0]:.3f}, {interval[1]:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exams", type=int, default=1000, help="simulated exams per design")
    parser.add_argument("--seed", type=int, default=43)
    args = parser.parse_args()
    print(f"joint coverage at 1 - alpha = 0.95, {args.exams} exams per design, seed {args.seed}")
    print(
        f"{'design':<20} {'adjust':<11} {'rejected/exam':>13}  {'statements shown':>32}  {'old: Holm step levels':>32}"
    )
    for design in DESIGNS:
        for adjust in ("holm", "bonferroni"):
            r = simulate_coverage(design, args.exams, adjust=adjust, seed=args.seed)
            old = _rate(r.step_covered, r.exams, r.interval(r.step_covered)) if adjust == "holm" else "–"
            print(f"{design.name:<20} {adjust:<11} {r.mean_rejected:>13.2f}  {_rate(r.covered, r.exams, r.interval()):>32}"
                  f"  {old:>32}")  # fmt: skip


if __name__ == "__main__":
    main()
