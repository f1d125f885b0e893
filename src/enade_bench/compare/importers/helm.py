"""HELM run folders: ``compare --from helm DIR`` (a run folder, or a suite folder of them).

``helm-run`` writes one folder per run, ``benchmark_output/runs/<suite>/<run name>/``
(crfm-helm ``benchmark/runner.py``, documented in its ``docs/tutorial.md``), with

* ``run_spec.json``: the ``RunSpec`` (``name``, ``adapter_spec.model``…);
* ``per_instance_stats.json``: a list of ``PerInstanceStats`` (``metrics/metric.py``):
  ``instance_id``, ``perturbation`` (absent for the original instance),
  ``train_trial_index`` and ``stats``, each a ``Stat`` (``metrics/statistic.py``) whose
  ``name`` is a ``MetricName`` (``name``, ``split``, ``sub_split``) and ``mean`` its value;
* ``scenario_state.json``: the ``ScenarioState``, one ``RequestState`` per request
  (``instance`` with ``input.text`` and ``references``, ``train_trial_index``,
  ``output_mapping`` of the letters, ``result.completions[0].text``); ``helm-summarize``
  adds ``instances.json`` (the ``Instance`` list).

The mapping (docs/comparisons.md, "Results from other harnesses"):

* model: ``adapter_spec.model`` of ``run_spec.json`` (else the ``model=`` of the folder name);
* item: ``<task>/<instance_id>``, the task being the run name without its ``model=``
  argument (``mmlu:subject=anatomy,method=multiple_choice_joint``); fields: ``task``,
  ``split`` and the ``sub_split`` where one is set;
* replicate: ``train_trial_index``; strategy: the perturbation's name (``-`` for none);
* correct: the stat ``exact_match``, or the one named by ``--metric``
  (``quasi_exact_match``, ``prefix_exact_match``…); its mean must be 0 or 1;
* stem, answer and prediction come from ``scenario_state.json`` (or ``instances.json``)
  when present.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from enade_bench.compare.importers._rows import ImportOptions, Row, Shown, as_correct, measured, read_json
from enade_bench.compare.table import stem_excerpt
from enade_bench.errors import UserError

__all__ = ["DEFAULT_METRIC", "read"]

DEFAULT_METRIC = "exact_match"
_STATS = "per_instance_stats.json"


@dataclass(frozen=True)
class _Text:
    """What the run's request states tell about one instance (and trial, perturbation)."""

    stem: str = ""
    answer: str = ""
    prediction: str = ""
    shown: Shown = field(default_factory=Shown)


def read(path: Path, options: ImportOptions) -> list[Row]:
    """Every instance × trial × perturbation of every run folder at ``path``."""
    if not path.exists():
        raise UserError(f"{path}: no such file or folder")
    files = [path] if path.is_file() else sorted(path.rglob(_STATS))
    if path.is_file() and path.name != _STATS:
        raise UserError(f"{path}: expected a HELM run folder or its {_STATS}")
    if not files:
        raise UserError(
            f"{path}: no {_STATS} under it (helm-run writes one per run folder, "
            "benchmark_output/runs/<suite>/<run>/)"
        )
    rows: list[Row] = []
    skipped: list[str] = []
    for file in files:
        model, task = _model_and_task(file.parent)
        metric = options.metric_for(task) or DEFAULT_METRIC
        texts = _texts(file.parent)
        entries = read_json(file)
        if not isinstance(entries, list):
            raise UserError(f"{file}: expected a list of per-instance stats, as helm-run writes")
        try:
            rows += _rows(file, entries, model, task, metric, texts)
        except _MissingStat as exc:  # one run without the measure is left out, the others compared
            skipped.append(str(exc))
    if skipped and not rows:
        raise UserError(skipped[0])
    for reason in skipped:
        print(
            f"warning: {reason}; this run is left out of the comparison (HELM before 0.2.3 wrote runs "
            "without some stats)",
            file=sys.stderr,
        )
    return rows


class _MissingStat(UserError):
    """A run's entry lacks the chosen stat: that run is left out (:func:`read`)."""


def _rows(
    file: Path,
    entries: list[Any],
    model: str,
    task: str,
    metric: str,
    texts: dict[tuple[str, int, str], _Text],
) -> list[Row]:
    rows = []
    for n, entry in enumerate(entries):
        if (
            not isinstance(entry, dict)
            or "instance_id" not in entry
            or not isinstance(entry.get("stats"), list)
        ):
            raise UserError(f"{file}: entry {n}: expected 'instance_id' and 'stats' (a PerInstanceStats)")
        rows.append(_row(entry, model, task, metric, texts, f"{file}: instance {entry['instance_id']!r}"))
    return rows


def _model_and_task(run: Path) -> tuple[str, str]:
    spec_file = run / "run_spec.json"
    spec = read_json(spec_file) if spec_file.is_file() else {}
    adapter = (spec.get("adapter_spec") or {}) if isinstance(spec, dict) else {}
    name = str(spec.get("name") or run.name) if isinstance(spec, dict) else run.name
    head, _, args = name.partition(":")
    pairs = [a for a in args.split(",") if a]
    named = dict(a.partition("=")[::2] for a in pairs)
    model = str(adapter.get("model") or adapter.get("model_deployment") or named.get("model", ""))
    if not model:
        raise UserError(
            f"{run}: no run_spec.json with adapter_spec.model, and no model= in the folder name; "
            "expected a HELM run folder"
        )
    rest = ",".join(a for a in pairs if not a.startswith("model="))
    return model, f"{head}:{rest}" if rest else head


def _row(
    entry: dict[str, Any],
    model: str,
    task: str,
    metric: str,
    texts: dict[tuple[str, int, str], _Text],
    where: str,
) -> Row:
    trial = int(entry.get("train_trial_index", 0))
    perturbation = str((entry.get("perturbation") or {}).get("name", ""))
    where = f"{where} (train trial {trial}{', ' + perturbation if perturbation else ''})"
    names = [s.get("name") or {} for s in entry["stats"] if isinstance(s, dict)]
    stat = next((s for s, n in zip(entry["stats"], names, strict=True) if n.get("name") == metric), None)
    if stat is None:
        have = ", ".join(sorted({str(n.get("name")) for n in names})) or "none"
        raise _MissingStat(f"{where}: no stat {metric!r} (stats: {have}); choose one with --metric")
    if "mean" not in stat:
        raise UserError(
            f"{where}: stat {metric!r} has no mean (count {stat.get('count', 0)}); expected one value"
        )
    correct = as_correct(stat["mean"], where, metric)
    name = stat["name"]
    fields = {"task": task, "split": str(name.get("split") or "")}
    if name.get("sub_split"):
        fields["sub_split"] = str(name["sub_split"])
    instance = str(entry["instance_id"])
    text = texts.get((instance, trial, perturbation)) or texts.get((instance, -1, perturbation), _Text())
    return Row(
        model=model,
        item=f"{task}/{instance}",
        replicate=str(trial),
        correct=correct,
        where=where,
        strategy=perturbation or "-",
        stem=text.stem,
        answer=text.answer,
        prediction=text.prediction,
        fields=fields,
        shown=text.shown,
    )


def _texts(run: Path) -> dict[tuple[str, int, str], _Text]:
    """(instance id, trial, perturbation) -> texts, from ``scenario_state.json``; else
    (instance id, -1, '') -> stem and answer from ``instances.json``; else nothing."""
    state_file, instances_file = run / "scenario_state.json", run / "instances.json"
    out: dict[tuple[str, int, str], _Text] = {}
    if state_file.is_file():
        state = read_json(state_file)
        for request in state.get("request_states", []) if isinstance(state, dict) else []:
            instance = request.get("instance") or {}
            if request.get("reference_index") is not None:  # one request per option: no single answer
                key = (
                    str(instance.get("id")),
                    int(request.get("train_trial_index", 0)),
                    _perturbation(instance),
                )
                out.setdefault(key, _Text(*_stem_answer(instance, {})))
                continue
            mapping = request.get("output_mapping") or {}
            result = request.get("result") or {}
            completion = (result.get("completions") or [{}])[0]
            key = (str(instance.get("id")), int(request.get("train_trial_index", 0)), _perturbation(instance))
            prediction = str(completion.get("text", "")).strip()
            out[key] = _Text(
                *_stem_answer(instance, mapping), prediction, _shown(instance, completion, result)
            )
    elif instances_file.is_file():
        instances = read_json(instances_file)
        for instance in instances if isinstance(instances, list) else []:
            out[(str(instance.get("id")), -1, _perturbation(instance))] = _Text(*_stem_answer(instance, {}))
    return out


def _shown(instance: dict[str, Any], completion: dict[str, Any], result: dict[str, Any]) -> Shown:
    """The instance's whole input, its references (the correct one marked), the completion and
    its tokens and request time (HELM records no prompt tokens per request)."""
    references = [r for r in instance.get("references", []) if isinstance(r, dict)]
    options = tuple(str((r.get("output") or {}).get("text", "")) for r in references)
    gold = next((i for i, r in enumerate(references) if "correct" in r.get("tags", [])), None)
    tokens = completion.get("tokens")
    return Shown(
        str((instance.get("input") or {}).get("text", "")),
        options,
        gold,
        raw=str(completion.get("text", "")),
        usage=measured(None, len(tokens) if isinstance(tokens, list) else None, result.get("request_time")),
    )


def _perturbation(instance: dict[str, Any]) -> str:
    return str((instance.get("perturbation") or {}).get("name", ""))


def _stem_answer(instance: dict[str, Any], mapping: dict[str, str]) -> tuple[str, str]:
    """The question's text and its key: the letter of the correct reference when the
    request lists the options (``output_mapping``), else the correct reference's text."""
    correct = [
        r["output"].get("text", "") for r in instance.get("references", []) if "correct" in r.get("tags", [])
    ]
    letters = [letter for letter, text in mapping.items() if correct and text == correct[0]]
    answer = letters[0] if letters else (correct[0] if correct else "")
    return stem_excerpt(str((instance.get("input") or {}).get("text", ""))), str(answer)
