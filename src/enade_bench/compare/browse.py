"""The question browser of ``compare --out`` over another harness's files or a long CSV.

Each answer read (:class:`~enade_bench.compare.importers._rows.Row`) becomes a record of the
page's browser (:mod:`enade_bench.report.browser`): one run per model and strategy (lm-eval's
filter, HELM's perturbation), the question's whole text as the harness put it to the model,
its options where the files list them (lm-eval's continuations, inspect's ``choices``,
HELM's references), the key and the choice as letters of those options, the outcome the
harness's own 0/1 measure gave (``right``, else ``wrong``), the output as written, the
log-likelihoods of a multiple-choice task, and tokens and seconds where recorded.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import JsonValue

from enade_bench.compare.importers._rows import Row
from enade_bench.dataset.schema import LETTERS
from enade_bench.report.browser import BrowserData, softmax

__all__ = ["add_rows"]

#: What each source calls its repeated answers to one item.
REPLICATE = {"lm-eval": "replicate", "inspect": "epoch", "helm": "train trial", "long": "replicate"}
SCORES: list[JsonValue] = ["summed log-probability", "probability (softmax of the sums over the options)"]


def _letter(options: tuple[str, ...], index: int | None, text: str) -> str | None:
    """The letter of option ``index``, or of the option ``text`` names (a letter or its text)."""
    if index is not None and index < len(options):
        return LETTERS[index]
    if options and len(text) == 1 and text in LETTERS[: len(options)]:
        return text
    return LETTERS[options.index(text)] if text in options else text or None


def add_rows(data: BrowserData, rows: Iterable[Row], source: str) -> None:
    """Add every answer of ``rows`` (read as ``source``'s output) to ``data``."""
    runs: dict[tuple[str, str], int] = {}
    for row in rows:
        shown = row.shown
        key = (row.model, row.strategy)
        if key not in runs:
            runs[key] = len(data.runs)
            data.runs.append(
                {
                    "model": row.model,
                    "strategy": row.strategy,
                    "model_name": row.model,
                    "method": source,
                    "label": "",
                    "scores": SCORES if shown.scores else None,
                    "replicate": REPLICATE.get(source, "replicate"),
                }
            )
        options = shown.options
        letters_only = all(o == LETTERS[i] for i, o in enumerate(options))
        question: dict[str, JsonValue] = {
            "fields": dict(row.fields),
            "answer": _letter(options, shown.gold, row.answer),
            "stem": shown.text or row.stem,
            "options": None if letters_only else list(options),
            "n_options": len(options),
            "cluster": None,
            "details": {},
        }
        prediction = _letter(options, shown.choice, row.prediction)
        probabilities = softmax(shown.scores) if shown.scores else []
        scores: list[JsonValue] = [[v, p] for v, p in zip(shown.scores, probabilities, strict=True)]
        replicate = int(row.replicate) if row.replicate.isdigit() else row.replicate
        data.records.append(
            [
                runs[key],
                data.question(row.item, question),
                replicate,
                prediction,
                "right" if row.correct else "wrong",
                None,
                shown.raw,
                scores or None,
                None,
                None,
                None,
                None,
                list[JsonValue](shown.usage) if shown.usage else None,
            ]
        )
