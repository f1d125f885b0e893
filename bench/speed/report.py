"""Derived figures (throughput, ratios, agreement, targets), the JSON file and the table."""

from __future__ import annotations

import json
import os
import platform
from dataclasses import asdict, is_dataclass
from importlib import metadata
from pathlib import Path
from typing import Literal

from bench.speed.records import (
    Agreement,
    Difference,
    GenerationArmSection,
    MachineInfo,
    QuestionPair,
    Report,
    Target,
    Totals,
)
from enade_bench.results.store import atomic_write_text

#: Targets (ratios from one run against lm-eval; docs/performance.md); the vLLM arm's S5
#: target is issue 10's (>= 2x).
TARGETS_VLLM = {"log_prob_speedup": 2.0}
TARGETS = {
    "log_prob_speedup": 5.5,
    "log_prob_one_shot_speedup": 8.0,
    "first_token_speedup": 1.6,
    "log_prob_speedup_under_load": 3.0,
    "prediction_agreement": 0.99,
    "shuffle_time_ratio": 0.2,
    "peak_memory_mb": 2048.0,
}


def _version(name: str) -> str | None:
    """The installed version of the distribution ``name``; None when it is not installed."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def machine_info(threads: int) -> MachineInfo:
    """The machine and library versions the figures come from (the installed distributions' versions:
    the engines import the libraries in their own processes, the parent need not)."""
    import psutil  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return MachineInfo(
        cpu=cpu,
        logical_cpus=os.cpu_count(),
        memory_gb=round(psutil.virtual_memory().total / 2**30, 1),
        platform=platform.platform(),
        python=platform.python_version(),
        torch=_version("torch") or "absent",
        transformers=_version("transformers") or "absent",
        lm_eval=_version("lm_eval"),
        threads=threads,
        load_average_start=list(os.getloadavg()),
    )


def _throughput(entry: Totals) -> None:
    if entry.get("seconds"):
        entry["questions_per_second"] = entry["questions"] / entry["seconds"]
        entry["tokens_per_second"] = entry["tokens"] / entry["seconds"]
        entry["tokens_per_question"] = entry["tokens"] / entry["questions"]
    if entry.get("model_seconds"):
        entry["questions_per_second_model_only"] = entry["questions"] / entry["model_seconds"]


def _agreement(per_question: dict[str, QuestionPair]) -> Agreement:
    both = {q: e for q, e in per_question.items() if "ours" in e and "lm_eval" in e}
    differ: list[Difference] = []
    max_diff = 0.0
    token_mismatch = 0
    for qid, e in both.items():
        a, b = e["ours"].get("scores") or [], e["lm_eval"].get("scores") or []
        if len(a) == len(b):
            max_diff = max([max_diff, *(abs(x - y) for x, y in zip(a, b, strict=True))])
        if e["ours"].get("n_tokens") != e["lm_eval"].get("n_tokens"):
            token_mismatch += 1
        if e["ours"]["prediction"] != e["lm_eval"]["prediction"]:
            ranked = sorted(a, reverse=True)
            differ.append(
                {
                    "id": qid,
                    "ours": e["ours"]["prediction"],
                    "lm_eval": e["lm_eval"]["prediction"],
                    "ours_scores": a,
                    "lm_eval_scores": b,
                    "ours_top2_gap": ranked[0] - ranked[1] if len(ranked) > 1 else None,
                }
            )
    n = len(both)
    return Agreement(
        n=n,
        agree=n - len(differ),
        agreement=(n - len(differ)) / n if n else None,
        max_abs_score_diff=max_diff,
        token_count_mismatches=token_mismatch,
        differences=differ,
    )


def summarise(report: Report) -> None:
    """Add throughput, ours/lm-eval ratios, agreement and the target check to ``report``."""
    scoring = report.get("scoring", {})
    # speed-up goals: the vLLM arm has issue 10's S5 target only
    goals = TARGETS_VLLM if report.get("options", {}).get("engine") == "vllm" else TARGETS
    targets: dict[str, Target] = {}
    for method, sides in scoring.items():
        ours, lm = sides.get("ours", {}), sides.get("lm_eval", {})
        _throughput(ours)
        _throughput(lm)
        if ours.get("seconds") and lm.get("seconds"):
            # Speed-up = our throughput / lm-eval's.  Primary: lm-eval's time inside
            # HFLM.loglikelihood only (its task/dataset overhead excluded, in its favour).
            sides["speedup_vs_lm_eval_model_time"] = lm["model_seconds"] / ours["seconds"]
            sides["speedup_vs_lm_eval_end_to_end"] = lm["seconds"] / ours["seconds"]
            sides["token_ratio_lm_eval_over_ours"] = lm["tokens"] / max(1, ours["tokens"])
        sides["agreement"] = _agreement(report.get("per_question", {}).get(method, {}))
        loaded = "competing_load" in report
        key = f"{method}_speedup_under_load" if loaded else f"{method}_speedup"
        if "speedup_vs_lm_eval_model_time" in sides and key in goals:
            goal = goals[key]
            value = sides["speedup_vs_lm_eval_model_time"]
            targets[key] = {"target": f">= {goal}", "value": value, "met": value >= goal}
        agreement = sides["agreement"]["agreement"]
        if agreement is not None:
            goal = TARGETS["prediction_agreement"]
            targets[f"{method}_agreement"] = {
                "target": f">= {goal}",
                "value": agreement,
                "met": agreement >= goal,
            }
    shuffles = report.get("shuffles")
    if shuffles:
        value = shuffles["time_ratio_shared_over_independent"]
        goal = TARGETS["shuffle_time_ratio"]
        targets["shuffle_time_ratio"] = {"target": f"<= {goal}", "value": value, "met": value <= goal}
    memory = report.get("memory", {}).get("ours")
    if memory and "max_rss_mb" in memory:  # vLLM: the engine process is not in ru_maxrss
        value = memory["max_rss_mb"]
        goal = TARGETS["peak_memory_mb"]
        targets["peak_memory_mb"] = {"target": f"< {goal}", "value": value, "met": value < goal}
    targets.update(report.get("generation_vs_lm_eval", {}).get("targets", {}))
    report["targets"] = targets


def _json_default(value: object) -> object:
    """Dataclasses (the generation arm's results) as their fields; anything else as text."""
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return str(value)


def write_json(path: Path, report: Report) -> None:
    """Write ``report`` atomically (indented JSON)."""
    text = json.dumps(report, indent=2, ensure_ascii=False, default=_json_default)
    atomic_write_text(path, text + "\n")  # the one safe writer: never through a link


def table(report: Report) -> str:
    """A plain-text summary table of ``report``."""
    lines = []
    m = report.get("machine", {})
    lines.append(f"machine: {m.get('cpu')} ({m.get('logical_cpus')} CPUs), {m.get('threads')} threads")
    load = report.get("competing_load")
    if load:
        lines.append(f"competing load: {load['processes']} x {load['workload']}")
    engine = report.get("options", {}).get("engine", "hf")
    lines.append(
        "engine: vllm (ours: model.type vllm; lm-eval: --model vllm)"
        if engine == "vllm"
        else "engine: hf (ours: transformers; lm-eval: HFLM)"
    )
    lines.append(
        f"{'method':18s} {'engine':8s} {'q':>5s} {'seconds':>9s} {'q/s':>8s} {'tokens/q':>9s} {'peak MB':>8s}"
    )
    engines: tuple[Literal["ours", "lm_eval"], ...] = ("ours", "lm_eval")
    for method, sides in report.get("scoring", {}).items():
        for engine in engines:
            e = sides.get(engine) or {}
            if not e.get("seconds"):
                continue
            lines.append(
                f"{method:18s} {engine:8s} {e['questions']:5d} {e['seconds']:9.1f} "
                f"{e['questions_per_second']:8.3f} {e['tokens_per_question']:9.0f} {e.get('peak_rss_mb', 0):8.0f}"
            )
        if "speedup_vs_lm_eval_model_time" in sides:
            agree = sides["agreement"]
            lines.append(
                f"  speed-up ours/lm-eval: {sides['speedup_vs_lm_eval_model_time']:.2f}x (lm-eval model time), "
                f"{sides['speedup_vs_lm_eval_end_to_end']:.2f}x (end to end); "
                f"agreement {agree['agree']}/{agree['n']}"
            )
    s = report.get("shuffles")
    if s:
        lines.append(
            f"shuffles: {s['n_questions']} q x {s['n_shuffles']}: shared {s['shared']['seconds']:.1f}s, "
            f"independent {s['independent']['seconds']:.1f}s, ratio {s['time_ratio_shared_over_independent']:.2f}"
        )
    g = report.get("generation")
    if g:
        parts = [
            f"{k}: {v['items_per_second']:.3f} items/s"
            for k, v in g.items()
            if k.startswith("batch_") and isinstance(v, dict)
        ]
        lines.append("generation: " + ", ".join(parts))
    lines += _generation_lines(report.get("generation_vs_lm_eval"))
    for name, t in report.get("targets", {}).items():
        lines.append(f"target {name}: {t['value']:.3f} ({t['target']}) {'met' if t['met'] else 'NOT met'}")
    return "\n".join(lines)


def _generation_lines(arm: GenerationArmSection | None) -> list[str]:
    """The generation arm's lines of :func:`table` (none without the arm)."""
    if not arm:
        return []
    lines = [
        f"generation vs lm-eval generate_until (greedy, max_new_tokens {arm['max_new_tokens']}, "
        f"until {arm['until']}):"
    ]
    for sid, r in arm["results"].items():
        ours, lm = r.ours, r.lm_eval
        line = (
            f"  {sid}: {r.n} q, text agreement {r.text_agreement:.3f}, letter agreement "
            f"{r.letter_agreement:.3f}; ours {ours.seconds:.1f}s {ours.tokens} tokens"
        )
        if lm.seconds:
            line += (
                f", lm-eval {lm.model_seconds:.1f}s model ({lm.seconds:.1f}s end to end) "
                f"{lm.tokens} tokens; lm-eval/ours {r.speedup_model_time:.2f}x"
            )
        lines.append(line)
    if arm.get("ours_s3_over_s1") is not None:
        lines.append(f"  ours S3 time / ours S1 time: {arm['ours_s3_over_s1']:.2f}")
    return lines
