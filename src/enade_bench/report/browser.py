"""The question browser's data: every record of the report's runs, for ``index.html``.

The page embeds one JSON document (``<script type="application/json" id="qb-data">``) read
by ``templates/browser.js`` (the package's own script; no library, no network):

* ``runs``: one per results file (model: the experiment, as the comparison names models;
  its model's name, strategy, method, and the names of the scores its records carry);
* ``questions``: one per question id (its grouping fields, gold letter, stem, option texts,
  and the exam-file lint's checks that flagged it in any run: ``dataset.lint``);
* ``prompts``: every distinct prompt text once (a prompt is the question under one template
  and option order: models that share a template and a strategy share it, so a study of
  many models stores it once, not once per record);
* ``records``: one short row per record (:data:`RECORD_COLUMNS`), pointing at those lists.

Outcomes: ``right``, ``wrong`` (an answer that is not the gold one), ``unanswered`` (no
letter extracted) and ``error`` (the record ended in an error and is not scored).

Scores are named by what they are (:func:`score_columns`): a ``log_prob`` record's mean
log-probability per token of each option, its summed log-probability and token count, and
the probability after normalising over the options (a softmax of the means, the quantity
its choice maximises); a ``first_token`` record's log-probability of each letter and the
probability renormalised over the valid letters.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import JsonValue

from enade_bench.dataset.schema import LETTERS
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
    "permutation",
    "error",
    "share",
    "usage",
)
#: The probability a scored record's choice maximises, named as the page names it.
SOFTMAX = "probability (softmax of the means over the options)"
LETTER_PROBABILITY = "probability (renormalised over the options)"


def outcome(record: QuestionRecord) -> str:
    """``right``, ``wrong``, ``unanswered`` or ``error`` (not scored)."""
    if record.error is not None:
        return "error"
    if record.prediction is None:
        return "unanswered"
    return "right" if record.correct else "wrong"


def score_columns(method: str) -> list[JsonValue]:
    """The names of the per-option values :func:`option_values` gives for ``method``."""
    if method == "log_prob":
        return ["mean log-probability per token", "summed log-probability", "tokens", SOFTMAX]
    if method == "first_token":
        return ["log-probability of the letter", LETTER_PROBABILITY]
    return ["score"]


def option_values(record: QuestionRecord) -> list[JsonValue] | None:
    """Per option, in the original order (A first), the values :func:`score_columns` names.

    ``log_prob``: :math:`\\bar s_j` (mean log-probability per token), :math:`\\sum_k \\log p`,
    :math:`n_j` and :math:`p_j = e^{\\bar s_j} / \\sum_i e^{\\bar s_i}`; ``first_token``:
    :math:`\\log p(\\ell_j \\mid c)` and the stored :math:`q_j` (:mod:`enade_bench.scoring.choice`).
    """
    scores, details = record.option_scores, record.score_details or {}
    if not scores:
        return None
    letters = [LETTERS[i] for i in range(record.n_options) if LETTERS[i] in scores] or list(scores)
    if record.method == "log_prob":
        return [
            [scores[c], details.get(c, {}).get("sum_logprob"), details.get(c, {}).get("n_tokens"), p]
            for c, p in zip(letters, softmax([scores[c] for c in letters]), strict=True)
        ]
    if record.method == "first_token":
        return [[details.get(c, {}).get("logprob"), scores[c]] for c in letters]
    return [[scores[c]] for c in letters]


def softmax(values: Sequence[float]) -> list[float]:
    r""":math:`e^{v_j} / \sum_i e^{v_i}`, computed from the largest (``-inf``: probability 0)."""
    top = max(values)
    weights = [math.exp(v - top) if math.isfinite(v) else 0.0 for v in values]
    total = sum(weights) or 1.0
    return [w / total for w in weights]


def _share(record: QuestionRecord) -> float | None:
    """The share of a sampled record's samples that are right (``None``: one generation)."""
    if not record.samples or len(record.samples) < 2:
        return None
    return sum(s.prediction == record.answer for s in record.samples) / len(record.samples)


def _usage(record: QuestionRecord) -> list[JsonValue] | None:
    """Input tokens, output tokens and seconds where the backend measured them (``None``: none)."""
    u = record.usage
    return None if u is None else [u.input_tokens, u.output_tokens, u.seconds]


@dataclass
class BrowserData:
    """What the browser shows, as lists that point at each other (see the module's docstring)."""

    runs: list[dict[str, JsonValue]] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)
    questions: list[dict[str, JsonValue]] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    records: list[list[JsonValue]] = field(default_factory=list)
    _question_index: dict[str, int] = field(default_factory=dict, repr=False)
    _prompt_index: dict[str, int] = field(default_factory=dict, repr=False)

    def question(self, qid: str, question: Mapping[str, JsonValue]) -> int:
        """The index of question ``qid``, added as ``question`` (with ``lint: []``) when new."""
        if qid not in self._question_index:
            self._question_index[qid] = len(self.questions)
            self.questions.append({"id": qid, **question, "lint": []})
            fields = question.get("fields")
            assert isinstance(fields, dict)
            self.fields += [f for f in fields if f not in self.fields]
        return self._question_index[qid]

    def prompt(self, text: str | None) -> int | None:
        """The index of ``text`` in ``prompts``, each text stored once (``None``: none)."""
        if text is None:
            return None
        index = self._prompt_index.setdefault(text, len(self.prompts))
        if index == len(self.prompts):
            self.prompts.append(text)
        return index

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
    for run, entry in enumerate(entries):
        method = entry.result.strategy.method
        data.runs.append(
            {
                "model": entry.experiment,
                "strategy": entry.strategy,
                "model_name": entry.model,
                "method": method,
                "label": entry.label,
                "scores": score_columns(method),
            }
        )
        lint = entry.result.dataset.lint
        for r in entry.result.records:
            question: dict[str, JsonValue] = {
                "fields": dict(r.fields),
                "answer": r.answer,
                "stem": r.stem or "",
                "options": list[JsonValue](r.options) if r.options else None,
                "n_options": r.n_options,
                "cluster": r.cluster,
                "details": dict(details.get(r.id, {})),
            }
            index = data.question(r.id, question)
            flags = data.questions[index]["lint"]
            assert isinstance(flags, list)
            flags += [c for c in lint.get(r.id, ()) if c not in flags]
            data.records.append(
                [
                    run,
                    index,
                    r.shuffle,
                    r.prediction,
                    outcome(r),
                    r.extraction_rule,
                    r.raw_output,
                    option_values(r),
                    data.prompt(r.prompt),
                    list[JsonValue](r.permutation) if r.permutation else None,
                    r.error,
                    _share(r),
                    _usage(r),
                ]
            )
    return data
