"""lm-evaluation-harness ``--log_samples`` output: ``compare --from lm-eval DIR``.

``lm_eval ... --output_path DIR --log_samples`` writes, per model, a folder
``DIR/<model_name_sanitized>/`` with ``results_<date>.json`` and one
``samples_<task>_<date>.jsonl`` per task of that run (lm-eval 0.4,
``loggers/evaluation_tracker.py``).  Each line is one document under one filter
(``evaluator.py``): ``doc_id``, ``doc``, ``target``, ``arguments``, ``resps``,
``filtered_resps``, ``filter``, ``metrics`` (the names) and each metric's value.

The mapping (docs/comparisons.md, "Results from other harnesses"):

* model: ``model_name`` of the run's ``results_<date>.json`` (the ``pretrained=`` of
  ``--model_args``; a local folder is named by its last component);
* item: ``<task>/<doc_id>``; fields: ``task``, and ``group`` for a task of a group;
* replicate: ``0`` (lm-eval scores each document once per filter: its ``repeats`` are
  reduced by the filter before the metric);
* strategy: the filter (``-`` for lm-eval's ``none``), so each filter is compared apart;
* correct: the metric, by default ``acc`` for ``multiple_choice`` (and ``loglikelihood``)
  tasks and ``exact_match`` for ``generate_until`` (the ``output_type`` in the run's
  ``configs``), or ``--metric``; it must be 0/1 on every document.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from enade_bench.compare.importers._rows import ImportOptions, Row, Shown, as_correct, read_json
from enade_bench.compare.table import stem_excerpt
from enade_bench.dataset.schema import LETTERS
from enade_bench.errors import UserError
from enade_bench.regular_file import read_text

__all__ = ["DEFAULT_METRIC", "read"]

#: The 0/1 metric of each ``output_type`` when ``--metric`` is not given.
DEFAULT_METRIC = {"multiple_choice": "acc", "loglikelihood": "acc", "generate_until": "exact_match"}
_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")
_PATH_LIKE = re.compile(r"^(/|\.{1,2}/|~|[A-Za-z]:[\\/])")


def read(path: Path, options: ImportOptions) -> list[Row]:
    """Every scored document of every ``samples_*.jsonl`` under ``path`` (a folder or one file)."""
    if not path.exists():
        raise UserError(f"{path}: no such file or folder")
    files = [path] if path.is_file() else sorted(path.rglob("samples_*.jsonl"))
    if not files:
        raise UserError(
            f"{path}: no samples_*.jsonl under it (lm_eval writes them with --log_samples --output_path DIR)"
        )
    rows: list[Row] = []
    runs: dict[tuple[str, str], Path] = {}
    for file in files:
        match = _SAMPLES.match(file.name)
        if match is None:
            raise UserError(
                f"{file}: expected a name samples_<task>_<date>.jsonl, as lm_eval --log_samples writes"
            )
        task, date = match["task"], match["date"]
        run = _Run.read(file.with_name(f"results_{date}.json"), task)
        earlier = runs.setdefault((run.model, task), file)
        if earlier != file:
            raise UserError(
                f"{file}: model {run.model!r} has another run of task {task!r} ({earlier}); "
                "compare one run per model and task (move the other out)"
            )
        metric = options.metric_for(task) or DEFAULT_METRIC.get(run.output_type)
        if metric is None:
            raise UserError(
                f"{run.results}: task {task!r} has output_type {run.output_type!r}, which has no "
                "default right/wrong metric; choose one with --metric"
            )
        samples = _samples(file)
        run.check_complete(file, samples)
        rows += [_row(sample, run, metric, f"{file}: line {n}") for n, sample in samples]
    return rows


@dataclass(frozen=True)
class _Run:
    """What the run's ``results_<date>.json`` says about one task."""

    results: Path
    task: str
    model: str
    output_type: str
    group: str
    #: The documents the run scored for the task (``n-samples``/``effective``; ``None``: not said).
    expected: int | None = None

    @classmethod
    def read(cls, results: Path, task: str) -> _Run:
        if not results.is_file():
            raise UserError(
                f"{results}: not found; lm_eval writes it beside the samples files of its run "
                "(it names the model)"
            )
        info = read_json(results)
        name = info.get("model_name") if isinstance(info, dict) else None
        if not isinstance(name, str) or not name:
            raise UserError(f"{results}: no 'model_name'; expected the results file of an lm_eval run")
        model = Path(name).name if _PATH_LIKE.match(name) else name
        config = (info.get("configs") or {}).get(task) or {}
        group = next((g for g, tasks in (info.get("group_subtasks") or {}).items() if task in tasks), "")
        counts = (info.get("n-samples") or {}).get(task) if isinstance(info.get("n-samples"), dict) else None
        effective = counts.get("effective") if isinstance(counts, dict) else None
        expected = effective if isinstance(effective, int) and not isinstance(effective, bool) else None
        return cls(results, task, model, str(config.get("output_type", "")), group, expected)

    def check_complete(self, file: Path, samples: list[tuple[int, dict[str, Any]]]) -> None:
        """Each filter's samples cover the documents the results file counts (a cut file is refused).

        ``n-samples`` of ``results_<date>.json`` holds, per task, the documents scored
        (``effective``, after ``--limit``); ``--log_samples`` writes one line per document
        and filter. A file cut at a line boundary (a copy interrupted, a disk full) reads
        as valid JSON Lines with fewer documents: compared with a cut file, every model
        would lose different items without a word.
        """
        if self.expected is None:
            return
        by_filter: dict[str, set[str]] = {}
        for _, sample in samples:
            by_filter.setdefault(str(sample.get("filter", "none")), set()).add(str(sample["doc_id"]))
        short = {f: len(ids) for f, ids in by_filter.items() if len(ids) != self.expected}
        if not samples or short:
            found = ", ".join(f"{n} under filter {f!r}" for f, n in short.items()) if short else "none"
            raise UserError(
                f"{file}: {found} of the {self.expected} documents {self.results.name} counts for task "
                f"{self.task!r} (n-samples); the samples file is incomplete (cut short?): copy it again "
                "or rerun the task"
            )


def _samples(file: Path) -> list[tuple[int, dict[str, Any]]]:
    out = []
    try:
        lines = read_text(file).splitlines()
    except UnicodeDecodeError as exc:
        raise UserError(f"{file}: not UTF-8 text ({exc})") from None
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            sample = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{file}: line {n}: not JSON ({exc})") from None
        if not isinstance(sample, dict) or "doc_id" not in sample:
            raise UserError(
                f"{file}: line {n}: expected a sample object with 'doc_id', as --log_samples writes"
            )
        out.append((n, sample))
    return out


def _row(sample: dict[str, Any], run: _Run, metric: str, where: str) -> Row:
    task = run.task
    if metric not in sample:
        have = ", ".join(str(m) for m in sample.get("metrics", [])) or "none"
        raise UserError(
            f"{where} (doc_id {sample['doc_id']}): no metric {metric!r} (this task has: {have}); "
            "choose one with --metric"
        )
    correct = as_correct(sample[metric], f"{where} (doc_id {sample['doc_id']})", metric)
    shown = _shown(sample, sample.get("arguments") or {}, run.output_type, metric)
    fields = {"task": task, **({"group": run.group} if run.group else {})}
    strategy = str(sample.get("filter", "none"))
    return Row(
        model=run.model,
        item=f"{task}/{sample['doc_id']}",
        replicate="0",
        correct=correct,
        where=where,
        strategy="-" if strategy == "none" else strategy,
        stem=stem_excerpt(shown.text),
        answer=_pick(shown.options, shown.gold, str(sample.get("target", ""))),
        prediction=_pick(
            shown.options, shown.choice, shown.raw if run.output_type == "generate_until" else ""
        ),
        fields=fields,
        shown=_with_listed_choices(shown, sample.get("doc")),
    )


def _with_listed_choices(shown: Shown, doc: object) -> Shown:
    """Where the letters alone were scored (`` A``, `` B``, ...), the option texts the document lists
    under ``choices`` (as most multiple-choice tasks' documents do), for the question browser."""
    listed = doc.get("choices") if isinstance(doc, dict) else None
    letters = shown.options and shown.options == tuple(LETTERS[: len(shown.options)])
    if not letters or not isinstance(listed, list) or len(listed) != len(shown.options):
        return shown
    return replace(shown, options=tuple(str(c) for c in listed))


def _pick(options: tuple[str, ...], index: int | None, otherwise: str | None) -> str:
    return options[index] if index is not None else str(otherwise or "")


def _shown(sample: dict[str, Any], arguments: Any, output_type: str, metric: str) -> Shown:
    """The document's text, its options and scores: the key and the chosen continuation of a
    multiple-choice task (the choice is the highest log-likelihood, what ``acc`` scores), the
    filtered generation of a ``generate_until`` task."""
    target = str(sample.get("target", ""))
    responses = sample.get("filtered_resps") or []
    first = (arguments.get("gen_args_0") or {}) if isinstance(arguments, dict) else {}
    text = str(first.get("arg_0", ""))
    if output_type == "generate_until":
        return Shown(text, raw=str(responses[0]) if responses else "")
    if output_type != "multiple_choice" or not isinstance(arguments, dict):
        return Shown(text)
    choices = tuple(
        str((arguments.get(f"gen_args_{i}") or {}).get("arg_1", "")).strip() for i in range(len(arguments))
    )
    gold = int(target) if target.isdigit() and int(target) < len(choices) else None
    if metric != "acc" or len(responses) != len(choices) or not choices:
        return Shown(text, choices, gold)
    logliks = tuple(_loglik(r) for r in responses)
    return Shown(text, choices, gold, max(range(len(logliks)), key=logliks.__getitem__), logliks)


def _loglik(response: object) -> float:
    """The log-likelihood of one ``[loglik, is_greedy]`` response (written as strings); -inf if unreadable."""
    try:
        return float(response[0]) if isinstance(response, list) and response else float("-inf")
    except (TypeError, ValueError):
        return float("-inf")
