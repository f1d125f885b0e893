"""Questions that share a stimulus: the clusters of the comparisons' standard errors.

Exams often ask two or three questions about one text, table or case ("Texto para as
questões 10 e 11").  A model that misreads the text tends to miss all of them, so
those questions are not independent evidence, and an interval that treats them as
such is too narrow (Miller 2024, §2.2).  The cluster of a question comes from:

1. the data: a ``cluster`` column (or ``dataset.columns: {cluster: <column>}``), any
   label shared by the questions of one stimulus;
2. otherwise the rule below: questions of one file whose texts open with the same
   passage of at least :data:`MIN_SHARED_CHARS` characters (whitespace ignored) share
   that passage as their stimulus, and get the cluster ``text:<id of the first one>``.

A question with neither is its own cluster.  On the data here the rule finds nothing
to join: none of ENEM 2011–2023's 2,220 Portuguese items opens with another's text
(each item's text is printed in full), nor does the ENADE demo; a file that repeats a
case before each of its questions is where it applies.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from enade_bench.dataset.schema import Question

__all__ = ["MIN_SHARED_CHARS", "shared_text_clusters"]

#: Length of the identical opening passage that makes two questions one cluster.
MIN_SHARED_CHARS = 200


def _opening(stem: str) -> str:
    return " ".join(stem.split())[:MIN_SHARED_CHARS]


def shared_text_clusters(questions: Sequence[Question]) -> list[Question]:
    """The questions of one file, each with its cluster (module docstring).

    Questions that already carry a ``cluster`` keep it; the others are grouped by the
    first :data:`MIN_SHARED_CHARS` characters of their text when at least two share them.

    Examples
    --------
    >>> text = "Leia o caso clínico a seguir. " * 10
    >>> qs = [Question(id=i, stem=text + s, options=("a", "b"), answer="A")
    ...       for i, s in (("q1", "Qual o diagnóstico?"), ("q2", "Qual a conduta?"))]
    >>> [q.cluster for q in shared_text_clusters(qs)]
    ['text:q1', 'text:q1']
    """
    openings = [_opening(q.stem) for q in questions]
    first: dict[str, str] = {}
    counts: dict[str, int] = {}
    for q, opening in zip(questions, openings, strict=True):
        if q.cluster or len(opening) < MIN_SHARED_CHARS:
            continue
        first.setdefault(opening, q.id)
        counts[opening] = counts.get(opening, 0) + 1
    out = []
    for question, opening in zip(questions, openings, strict=True):
        shared = not question.cluster and counts.get(opening, 0) >= 2
        out.append(dataclasses.replace(question, cluster=f"text:{first[opening]}") if shared else question)
    return out
