"""Power at the clustered MDD under alternatives that keep the observed heterogeneity (issue 52, item 2).

A generator independent of ``metrics/power_clustered.py``: two models on ``n`` questions in
texts of 1-4, each question with its difficulty (plus its text's) and each model with its own
per-question deviation (model x item heterogeneity, SD 0.7 on the logit scale), scored over
``S`` shuffles (binomial).  The observed pair is one such data set; its MDD is the comparison's
(``metrics.power.pair_mdd`` at alpha/3, the first Holm level of three models: the larger of the
location and logit shifts' MDDs, both printed).  Then, with the same heterogeneity
(difficulties, text effects and model x item deviations drawn afresh for each data set, from the
same distributions, in the same texts: the questions are the unit), model A is moved so that its
expected accuracy exceeds B's by exactly the shown MDD, two ways:

* ``logit``: A's per-question logits shifted by one constant;
* ``location``: A's per-question probabilities shifted by one constant (kept in [0, 1]);

A alone where B's expected accuracy (about 50 %) leaves room for the MDD; above that (MDDs of
50-100 points, at 8 questions), A up and B down by half the constant each (``"moved"``), so that
every finite MDD is checked: checking only the MDDs below 50 points would select the data sets
whose spread came out small.
and ``--reps`` data sets of each are drawn and tested with the pair's own clustered paired t.
One JSON line per size, observed data set and alternative: the MDDs (points), which shift sets
the shown one, and the share rejected.  ``--observed K`` repeats it for K observed data sets per
size (seeds ``seed + n + 1000 k``; k = 0 is the one of earlier versions), because one observed
data set's spread is itself a draw: the MDD is a statistic, and its power varies with it.  A last
line per size and alternative sums them up: the mean, the quartiles and the shares of the observed data
sets whose MDD has power at least 0.75, at least 0.70 and at most 0.90 (``--summary-only`` prints only these).

    PYTHONPATH=.:src .venv/bin/python bench/clustered_mdd_power.py [--reps 1000] [--shuffles 30] [--observed 1]
        [--summary-only] [--sizes 8 28 180] [--spread 0.7] [--text-spread 0] [--texts 0]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit

from enade_bench.metrics.paired import paired_difference
from enade_bench.metrics.power import pair_mdd, records_of
from enade_bench.metrics.power_clustered import shift_mdds


def _texts(n: int, rng: np.random.Generator, count: int = 0) -> np.ndarray:
    """Each question's text: ``count`` texts of near-equal sizes, or (0) sizes of 1-4 drawn."""
    if count:
        return np.sort(np.arange(n) % count)
    sizes: list[int] = []
    while sum(sizes) < n:
        sizes.append(int(rng.integers(1, 5)))
    sizes[-1] -= sum(sizes) - n
    return np.repeat(np.arange(len(sizes)), sizes)


def _items(
    text: np.ndarray, rng: np.random.Generator, spread: float = 0.7, text_spread: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A fresh draw of the questions: difficulty plus its text's, and each model's own deviations
    per question (SD ``spread``) and per text (SD ``text_spread``)."""
    texts = int(text.max()) + 1
    easy = rng.normal(0.0, 1.5, text.size) + rng.normal(0.0, 1.0, texts)[text]
    own = [
        rng.normal(0.0, spread, text.size) for _ in "ab"
    ]  # (no draw for a text spread of 0: the old stream)
    own = [o + rng.normal(0.0, text_spread, texts)[text] if text_spread else o for o in own]
    return easy, own[0], own[1]


def _shift(expected_diff: Callable[[float], float], target: float) -> float:
    """The constant that makes A's expected accuracy exceed B's by ``target`` (over the questions' population)."""
    return float(brentq(lambda c: expected_diff(c) - target, -40.0, 40.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--shuffles", type=int, default=30)
    parser.add_argument("--seed", type=int, default=52)
    parser.add_argument("--observed", type=int, default=1)
    parser.add_argument("--summary-only", action="store_true", help="print only each size's summary line")
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 28, 180], help="questions per data set")
    parser.add_argument(
        "--spread", type=float, default=0.7, help="SD of the model x item deviations (logits)"
    )
    parser.add_argument("--text-spread", type=float, default=0.0, help="SD of the model x text deviations")
    parser.add_argument("--texts", type=int, default=0, help="texts per data set (0: sizes of 1-4 drawn)")
    args = parser.parse_args()
    alpha, s = 0.05 / 3, args.shuffles
    # the questions' population, for the expected accuracies: each question its own text, so that the text
    # effects vary as they do between a data set's texts (one shared text gave every question one effect,
    # which moved the population's accuracy to 0.58 and its expected logit shift off the target)
    population = _items(np.arange(200_000), np.random.default_rng(0), args.spread, args.text_spread)
    models = {
        "logit": lambda c, easy, ua: expit(easy + ua + c),
        "location": lambda c, easy, ua: np.clip(expit(easy + ua) + c, 0.0, 1.0),
    }
    base = float(np.mean(expit(population[0] + population[2])))  # B's expected accuracy
    powers: dict[tuple[int, str], list[float | None]] = {}
    for n in args.sizes:
        for k in range(args.observed):
            rng = np.random.default_rng(args.seed + n + 1000 * k)
            text = _texts(n, rng, args.texts)
            texts = [f"text{t}" for t in text]
            easy, ua, ub = _items(text, rng, args.spread, args.text_spread)
            a = rng.binomial(s, expit(0.2 + easy + ua)) / s
            b = rng.binomial(s, expit(easy + ub)) / s
            r = paired_difference(a, b, single_record=s == 1, clusters=texts)
            mdd = pair_mdd(r, alpha)
            shifts = shift_mdds(
                r.differences, r.clusters, alpha, bases=r.bases, records=records_of(np.r_[a, b])
            )
            for name, model in models.items():
                line = {
                    "questions": n,
                    "texts": r.n_clusters,
                    "shuffles": s,
                    "observed": k,
                    "alternative": name,
                    "mdd_points": round(100 * mdd, 1),
                    "location_mdd": round(100 * shifts["location"], 1),
                    "logit_mdd": round(100 * shifts["logit"], 1),
                    "sets_it": max(shifts, key=shifts.__getitem__)
                    if mdd == max(shifts.values())
                    else "floor",
                }
                if np.isfinite(mdd) and mdd < 1:
                    # A alone where B's accuracy leaves room; else A up and B down by half each (MDDs near 100 points)
                    split = 0.0 if mdd < 1 - base else 0.5
                    line["moved"] = "A" if split == 0 else "A and B"

                    def diff(c: float, m: Callable[..., np.ndarray] = model, h: float = split) -> float:
                        a_acc = np.mean(m((1 - h) * c, population[0], population[1]))
                        return float(a_acc - np.mean(m(-h * c, population[0], population[2])))

                    c = _shift(diff, mdd)
                    rejected = []
                    for _ in range(args.reps):
                        e, da, db = _items(text, rng, args.spread, args.text_spread)
                        x = rng.binomial(s, model((1 - split) * c, e, da)) / s
                        y = rng.binomial(s, model(-split * c, e, db)) / s
                        rejected.append(
                            paired_difference(x, y, single_record=s == 1, clusters=texts).p_value < alpha
                        )
                    line["power"] = round(float(np.mean(rejected)), 3)
                else:
                    line["power"] = None  # not reachable
                powers.setdefault((n, name), []).append(line["power"])
                if not args.summary_only:
                    print(json.dumps(line), flush=True)
    for (n, name), found in powers.items():
        print(json.dumps(_summary(n, name, found)), flush=True)


def _summary(n: int, alternative: str, powers: list[float | None]) -> dict[str, object]:
    """One size and alternative over the observed data sets: how the power at their MDDs spreads."""
    p = np.array([x for x in powers if x is not None])
    line: dict[str, object] = {
        "questions": n,
        "alternative": alternative,
        "observed": len(powers),
        "checked": int(p.size),
    }
    if p.size:
        q1, median, q3 = np.quantile(p, [0.25, 0.5, 0.75])
        line |= {
            "mean": round(float(p.mean()), 3),
            "quartiles": [round(float(q1), 3), round(float(median), 3), round(float(q3), 3)],
            "at_least_0.50": round(float(np.mean(p >= 0.50)), 3),
            "at_least_0.75": round(float(np.mean(p >= 0.75)), 3),
            "at_least_0.70": round(float(np.mean(p >= 0.70)), 3),
            "at_most_0.90": round(float(np.mean(p <= 0.90)), 3),
        }
    return line


if __name__ == "__main__":
    main()
