"""Independent recomputation of the report's numbers from the raw results JSON.

Nothing here imports ``enade_bench``: the numbers are recomputed from the
records with textbook formulas, so a bug in the report (or in the code it
calls) shows up as a mismatch.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats


def load_runs(root: Path) -> list[dict[str, Any]]:
    """Every results file under ``root`` outside ``*_old`` folders, as plain JSON."""
    return [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted(root.rglob("*_results.json"))
        if not any(part.endswith("_old") for part in p.relative_to(root).parts)
    ]


def strategy(run: dict[str, Any]) -> str:
    return run["strategy"]["id"] or "run"


def wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson score interval (Wilson 1927), 95 %."""
    if n == 0:
        return (math.nan, math.nan)
    z = stats.norm.ppf(0.975)
    p = k / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return (max(0.0, centre - half), min(1.0, centre + half))


def accuracy_groups(records: list[dict[str, Any]], key: str) -> dict[str, dict[str, float]]:
    """Accuracy per value of one of the records' grouping fields (records without it: none)."""
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in records:
        if key in r["fields"]:
            groups[str(r["fields"][key])].append(bool(r["correct"]))
    out = {}
    for value, hits in groups.items():
        low, high = wilson(sum(hits), len(hits))
        out[value] = {
            "n": len(hits),
            "correct": sum(hits),
            "accuracy": sum(hits) / len(hits),
            "ci95_low": low,
            "ci95_high": high,
        }
    return out


def position_shares(records: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    out = {}
    for k in sorted({r["n_options"] for r in records}):
        group = [r for r in records if r["n_options"] == k]
        counts = np.bincount(
            [r["predicted_position"] for r in group if r["predicted_position"] is not None], minlength=k
        ).astype(float)
        keyed = np.bincount([r["answer_position"] for r in group], minlength=k) / len(group)
        total = counts.sum()
        expected = total / k
        chi2 = float(((counts - expected) ** 2 / expected).sum()) if total else math.nan
        out[k] = {
            "counts": counts,
            "shares": counts / total if total else np.full(k, np.nan),
            "answer_shares": keyed,
            "tvd": 0.5 * float(np.abs(counts / total - 1 / k).sum()) if total else math.nan,
            "chi2": chi2,
            "p": float(stats.chi2.sf(chi2, k - 1)) if total else math.nan,
        }
    return out


def extraction_shares(records: list[dict[str, Any]]) -> dict[str, float]:
    rules = Counter(r["extraction_rule"] for r in records if r["extraction_rule"] is not None)
    return {rule: count / len(records) for rule, count in rules.items()}


# --- IRT, from INEP's tables -------------------------------------------------------------


def booklet_params(enem_dir: Path, co_prova: int) -> list[tuple[int, float, float, float, str]]:
    """(slot, a, b, c, item id) of a booklet's items with parameters, by position order."""
    import csv

    with (enem_dir / "inep_items.csv").open(encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if int(r["CO_PROVA"]) == co_prova]
    positions = sorted({int(r["CO_POSICAO"]) for r in rows})
    out = []
    for r in rows:
        if r["NU_PARAM_A"] and r["IN_ITEM_ABAN"] in ("0", "0.0", ""):
            c = float(r["NU_PARAM_C"]) if r["NU_PARAM_C"] else 0.0
            slot = positions.index(int(r["CO_POSICAO"]))
            out.append((slot, float(r["NU_PARAM_A"]), float(r["NU_PARAM_B"]), c, r["CO_ITEM"]))
    return out


def p3pl(theta: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return c + (1 - c) / (1 + np.exp(-a * (theta[..., None] - b)))


def eap(x: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[float, float]:
    """EAP with N(0,1) prior, 121 equally spaced points on [-6, 6] (mirt's fscores)."""
    grid = np.linspace(-6, 6, 121)
    p = p3pl(grid, a, b, c)
    like = np.prod(np.where(x == 1, p, 1 - p), axis=1) * stats.norm.pdf(grid)
    post = like / like.sum()
    mean = float((grid * post).sum())
    return mean, float(np.sqrt(((grid - mean) ** 2 * post).sum()))


def lz(x: np.ndarray, theta: float, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    """Drasgow, Levine & Williams (1985); NaN for all-correct / all-wrong patterns."""
    if x.sum() in (0, len(x)):
        return math.nan
    p = p3pl(np.array(theta), a, b, c)
    l0 = np.sum(x * np.log(p) + (1 - x) * np.log(1 - p))
    e = np.sum(p * np.log(p) + (1 - p) * np.log(1 - p))
    v = np.sum(p * (1 - p) * np.log(p / (1 - p)) ** 2)
    return float((l0 - e) / np.sqrt(v))
