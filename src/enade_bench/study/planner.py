"""The one planner of a study's tasks: model × exam, their estimated cost, and their order.

Every study (ENEM: model × area × language; any other benchmark: model × exam of
``exams:``, or model × its one ``dataset``) hands its prepared runs here as
:class:`ExamRun` entries; :func:`exam_tasks` makes one :class:`~enade_bench.study.tasks.ModelTask`
per model × exam, and :func:`lpt_order` puts the longest first.

Cost.  A task's cost is the forward-pass compute of its tokens,

.. math:: C = 2 P T, \\qquad T = \\sum_{\\text{items}} \\left(\\lceil c_i / 4 \\rceil + o\\right),

with :math:`P` the model's parameters (read from its weights' headers,
:func:`~enade_bench.study.memory.parameters`), :math:`c_i` the characters of item
:math:`i`'s question and options (4 characters a token, the dry-run's estimate without a
tokenizer) and :math:`o` the answer tokens (``max_new_tokens``; 1 for scored methods).
:math:`2P` FLOPs per token is the forward pass of a decoder (Kaplan et al., 2020, "Scaling
Laws for Neural Language Models", section 2.1).  A model whose size is unknown here (an API
model, a hub id out of reach) counts as :data:`UNKNOWN_PARAMETERS`.

Order.  Tasks go out longest first (LPT: Graham, 1969, "Bounds on multiprocessing timing
anomalies"): with :math:`m` workers the makespan is at most :math:`4/3 - 1/(3m)` of the
optimum.  Where one worker runs everything (``local``), a model's tasks run one after the
other with one load (:func:`by_model`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from enade_bench.study.tasks import ModelTask, TaskRun

T = TypeVar("T")

#: Parameters assumed for a model whose size cannot be read before it loads.
UNKNOWN_PARAMETERS = 10**9


@dataclass(frozen=True)
class ExamRun:
    """One prepared run of a study: the study's model, the exam (``""``: the study's one dataset)."""

    model: str
    exam: str
    run: TaskRun


def exam_tasks(runs: Sequence[ExamRun], output: Path) -> list[ModelTask]:
    """One task per model × exam, in the order the runs come (a model's runs of one exam together).

    The label is ``model.exam`` (``model`` alone for a study's one dataset).
    """
    grouped: dict[tuple[str, str], list[TaskRun]] = {}
    for entry in runs:
        grouped.setdefault((entry.model, entry.exam), []).append(entry.run)
    return [
        ModelTask(f"{model}.{exam}" if exam else model, tuple(found), output, model, exam)
        for (model, exam), found in grouped.items()
    ]


def by_model(tasks: Sequence[ModelTask]) -> list[ModelTask]:
    """The tasks of each model as one task (its model loads once), in the order models first come."""
    grouped: dict[str, list[ModelTask]] = {}
    for task in tasks:
        grouped.setdefault(task.model or task.label, []).append(task)
    return [
        found[0] if len(found) == 1
        else dataclasses.replace(found[0], label=model, runs=tuple(r for t in found for r in t.runs), exam="")
        for model, found in grouped.items()
    ]  # fmt: skip


@dataclass(frozen=True)
class Cost:
    """A task's estimated compute: ``2 P T`` FLOPs (see the module's formula)."""

    parameters: int
    tokens: int
    #: Whether ``parameters`` was read from the weights (else :data:`UNKNOWN_PARAMETERS`).
    known: bool

    @property
    def flops(self) -> float:
        return 2.0 * self.parameters * self.tokens

    def __str__(self) -> str:
        size = f"{self.parameters / 1e9:.2g}B" if self.known else "size unknown"
        return f"est. {self.flops / 1e12:.3g} TFLOP ({size} × {self.tokens} tokens)"


def task_cost(task: ModelTask) -> Cost:
    """The estimated cost of ``task`` (its model's size × the tokens of its runs)."""
    count = task.parameters
    return Cost(count or UNKNOWN_PARAMETERS, task.tokens, count is not None)


def lpt_order(tasks: Sequence[T], cost: Callable[[T], float] | None = None) -> list[T]:
    """``tasks`` longest first by ``cost`` (default: :func:`task_cost`'s FLOPs); ties keep the planned order."""
    measure = cost or (lambda t: task_cost(t).flops)  # type: ignore[arg-type]
    costs = [measure(t) for t in tasks]
    return [tasks[i] for i in sorted(range(len(tasks)), key=lambda i: -costs[i])]
