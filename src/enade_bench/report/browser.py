"""The question browser's data: every record of the report's runs, for ``index.html``.

The page embeds one JSON document (``<script type="application/json" id="qb-data">``) read
by ``templates/browser.js`` (the package's own script; no library, no network):

* ``runs``: one per results file (model: the experiment, as the comparison names models;
  its model's name, strategy, method);
* ``questions``: one per question id (its grouping fields, gold letter, stem, and the
  exam-file lint's checks that flagged it in any run: ``dataset.lint`` of the results file);
* ``prompts``: every distinct prompt text once (a prompt is the question under one template
  and option order: models that share a template and a strategy share it, so a study of
  many models stores it once, not once per record);
* ``records``: one short row per record, pointing at those three lists.

Outcomes: ``right``, ``wrong`` (an answer that is not the gold one), ``unanswered`` (no
letter extracted) and ``error`` (the record ended in an error and is not scored).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import JsonValue

from enade_bench.report.loader import RunEntry
from enade_bench.results.records import QuestionRecord

#: Positions of a record's row in ``records`` (the script reads the same order).
RECORD_COLUMNS = (
    "run",
    "question",
    "shuffle",
    "prediction",
    "outcome",
    "rule",
    "raw",
    "scores",
    "prompt",
    "displayed",
    "permutation",
    "error",
)


def outcome(record: QuestionRecord) -> str:
    """``right``, ``wrong``, ``unanswered`` or ``error`` (not scored)."""
    if record.error is not None:
        return "error"
    if record.prediction is None:
        return "unanswered"
    return "right" if record.correct else "wrong"


@dataclass
class BrowserData:
    """What the browser shows, as lists that point at each other (see the module's docstring)."""

    runs: list[dict[str, JsonValue]] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)
    questions: list[dict[str, JsonValue]] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    records: list[list[JsonValue]] = field(default_factory=list)

    def to_json(self) -> str:
        """The document, safe inside a ``<script>`` element (every ``<`` written ``\\u003c``)."""
        data = {
            "columns": list(RECORD_COLUMNS),
            "runs": self.runs,
            "fields": self.fields,
            "questions": self.questions,
            "prompts": self.prompts,
            "records": self.records,
        }
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return text.replace("<", "\\u003c")  # only strings hold "<"; no "</script>" or "<!--" can end it


def browser_data(
    entries: Sequence[RunEntry], details: Mapping[str, Mapping[str, str]] | None = None
) -> BrowserData:
    """Every record of ``entries``, each prompt and each question stored once; ``details``:
    what an exam's analyses add to a question (label -> text, e.g. ENEM's INEP item)."""
    details = details or {}
    data = BrowserData()
    question_index: dict[str, int] = {}
    prompt_index: dict[str, int] = {}
    for run, entry in enumerate(entries):
        data.runs.append(
            {
                "model": entry.experiment,
                "strategy": entry.strategy,
                "model_name": entry.model,
                "method": entry.result.strategy.method,
                "label": entry.label,
            }
        )
        lint = entry.result.dataset.lint
        for r in entry.result.records:
            for name in r.fields:
                if name not in data.fields:
                    data.fields.append(name)
            if r.id not in question_index:
                question_index[r.id] = len(data.questions)
                data.questions.append(
                    {
                        "id": r.id,
                        "fields": dict(r.fields),
                        "answer": r.answer,
                        "stem": r.stem or "",
                        "n_options": r.n_options,
                        "cluster": r.cluster,
                        "details": dict(details.get(r.id, {})),
                        "lint": [],
                    }
                )
            flags = data.questions[question_index[r.id]]["lint"]
            assert isinstance(flags, list)
            flags += [c for c in lint.get(r.id, ()) if c not in flags]
            prompt = prompt_index.setdefault(r.prompt, len(prompt_index))
            if prompt == len(data.prompts):
                data.prompts.append(r.prompt)
            scores: JsonValue = dict(r.option_scores) if r.option_scores else None
            data.records.append(
                [
                    run,
                    question_index[r.id],
                    r.shuffle,
                    r.prediction,
                    outcome(r),
                    r.extraction_rule,
                    r.raw_output,
                    scores,
                    prompt,
                    r.displayed_prediction,
                    list[JsonValue](r.permutation) if r.permutation else None,
                    r.error,
                ]
            )
    return data
