"""The GPU arm's JSON: each strategy's figures, the report, and its atomic write (:mod:`.gpu`)."""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.speed.gpu_checks import ChunkProfile, Float32Check
from enade_bench.results.store import atomic_write_text


@dataclass
class StrategyFigures:
    """One strategy in one order: both engines' time, questions/s, ratio and agreement."""

    strategy: str
    questions: int
    ours_seconds: float
    ours_qps: float
    ours_tokens: int
    ours_model_calls: int
    lm_eval_seconds: float | None = None
    lm_eval_qps: float | None = None
    lm_eval_tokens: int | None = None
    #: ours questions/s over lm-eval's (its time inside the model methods).
    ratio: float | None = None
    #: Share of questions with the same prediction (generation: the same extracted letter).
    agreement: float | None = None
    #: Generation: share of questions whose generated texts are equal (after stripping).
    text_agreement: float | None = None
    max_abs_score_diff: float | None = None
    #: Ours' attention path when the strategy ended (``HFLocalBackend.attention``: ``flex``, ``sdpa``,
    #: or ``flex (sdpa where flex failed: …)`` naming each compiled graph that fell back).
    attention: str | None = None


@dataclass
class PhaseRecord:
    """One finished phase of the arm: its name and wall time (seconds)."""

    name: str
    seconds: float


@dataclass
class PhaseError:
    """A phase that raised: its name, seconds until the error, the error and its traceback's last lines."""

    name: str
    seconds: float
    error: str
    traceback: list[str]


@dataclass
class GpuReport:
    """The JSON of the GPU arm."""

    card: str
    dtype: str
    batch_size: int
    lmeval_batch_size: int | None
    model: dict[str, object]
    options: dict[str, object]
    n_questions: int
    started: str
    orders: dict[str, list[StrategyFigures]] = field(default_factory=dict)
    #: Table 1 (S1–S6) strategy time per order, ours, seconds.
    table1_seconds: dict[str, float] = field(default_factory=dict)
    float32_check: Float32Check | None = None
    profile: list[ChunkProfile] = field(default_factory=list)
    #: The phases that finished, in the order they ran (:func:`run_phases`).
    phases: list[PhaseRecord] = field(default_factory=list)
    #: The phases that raised, in order (the run went on with the next one).
    errors: list[PhaseError] = field(default_factory=list)
    #: ``running``, ``complete``, ``complete, N phases failed: …`` or ``interrupted in <phase>: <error>``.
    status: str = "running"
    #: The card's toolchain as the run found it (gcc, Python headers, Triton: :mod:`.gpu_checks`).
    toolchain: dict[str, str] = field(default_factory=dict)


def write_report(path: Path, report: GpuReport) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(asdict(report), indent=2, default=str) + "\n")


#: One phase of the arm: its name, and what it runs (filling the report as it goes).
Phase = tuple[str, Callable[[], object]]


#: Lines of a failed phase's traceback kept in the JSON (its end: where it raised).
TRACEBACK_LINES = 12


def run_phases(phases: Sequence[Phase], report: GpuReport, path: Path, log: Callable[[str], object]) -> None:
    """Run ``phases`` in order; the JSON is written the moment each ends.

    A phase that raises an error is recorded (:class:`PhaseError`: the error and its traceback's
    last :data:`TRACEBACK_LINES` lines), logged in one line, and the next phase runs: an error in
    ours S5 does not lose S1 and its comparison.  An interrupt (``KeyboardInterrupt``, the
    ``SIGTERM`` of ``timeout`` turned into one by :func:`.gpu.run_gpu_bench`) writes the report
    once more with ``status: interrupted in <phase>`` and is raised again: every phase that
    finished is in the file already (atomic writes: an interrupt during a write leaves the
    previous file whole).
    """
    for name, phase in phases:
        start = time.perf_counter()
        try:
            phase()
        except Exception as exc:  # noqa: BLE001 (a phase's error is the report's, not the run's end)
            error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:500]}"
            lines = traceback.format_exception(exc)
            tail = "".join(lines).rstrip().splitlines()[-TRACEBACK_LINES:]
            report.errors.append(PhaseError(name, time.perf_counter() - start, error, tail))
            write_report(path, report)
            log(f"phase {name} failed: {error}")
            continue
        except BaseException as exc:
            report.status = f"interrupted in {name}: {type(exc).__name__} {exc}".strip()
            write_report(path, report)
            raise
        report.phases.append(PhaseRecord(name, time.perf_counter() - start))
        write_report(path, report)
        log(f"phase {len(report.phases)} {name}: {report.phases[-1].seconds:.1f} s")
    failed = ", ".join(e.name for e in report.errors)
    report.status = f"complete, {len(report.errors)} phases failed: {failed}" if failed else "complete"
    write_report(path, report)
