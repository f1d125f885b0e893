"""``--sample N [--seed S] [--stratify FIELD]``: a seeded subset spread over the questions.

``--limit N`` keeps the first N rows, which in most files are one year, one booklet or
one subject.  A sample draws N questions at random without replacement from those left
after the filters, with a seeded generator (``numpy.random.default_rng(seed)``), so the
same seed gives the same questions.  With ``stratify``, each value ``h`` of the field
(an empty value is the group ``(empty)``) gets a share of the sample proportional to
its size, by the largest-remainder (Hamilton) rule:

.. math::
    q_h = n \\frac{N_h}{N}, \\qquad n_h = \\lfloor q_h \\rfloor + [h \\text{ among the }
    n - \\textstyle\\sum_h \\lfloor q_h \\rfloor \\text{ largest } q_h - \\lfloor q_h \\rfloor]

(ties: the larger group, then the value's order), then ``n_h`` questions are drawn at
random within each group.  The kept questions keep their order in the data.  The
results file records the sample in its config (``dataset.sample``) and the questions it
left out in ``filter_counts.removed_sample``.

References
----------
Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed., §5.5 (proportional allocation).
Balinski, M. L., & Young, H. P. (2001). *Fair Representation*, 2nd ed. (largest remainders).
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from enade_bench.config import SampleConfig
from enade_bench.dataset.filters import field_value, known_fields
from enade_bench.dataset.schema import Question
from enade_bench.errors import UserError

__all__ = ["allocate", "draw_sample"]

#: The group of the questions whose value of the stratifying field is empty.
EMPTY = "(empty)"


def allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    """Proportional allocation of ``n`` over groups of ``sizes`` (largest remainders).

    Examples
    --------
    >>> allocate({"2019": 10, "2020": 6, "2021": 4}, 5)
    {'2019': 3, '2020': 1, '2021': 1}
    """
    total = sum(sizes.values())
    quotas = {g: n * size / total for g, size in sizes.items()}
    out = {g: math.floor(q) for g, q in quotas.items()}
    order = sorted(sizes, key=lambda g: (-(quotas[g] - out[g]), -sizes[g], list(sizes).index(g)))
    for g in order[: n - sum(out.values())]:
        out[g] += 1
    return out


def draw_sample(questions: list[Question], sample: SampleConfig, counts: dict[str, int]) -> list[Question]:
    """The sample of ``questions`` (all of them when ``sample.n`` equals their number); counts what it left out.

    Raises
    ------
    UserError
        ``sample.n`` larger than the number of questions, a ``stratify`` field the questions
        lack, or one whose value differs for every question (an id: no groups to keep).
    """
    if sample.stratify is not None and sample.stratify not in known_fields(questions):
        raise UserError(
            f"dataset.sample.stratify (--stratify): '{sample.stratify}' is not a field of the questions "
            f"(fields: {', '.join(known_fields(questions))})"
        )
    if sample.n > len(questions):
        raise UserError(
            f"dataset.sample.n (--sample): {sample.n} questions asked, but only {len(questions)} are left "
            f"after the filters; ask for at most {len(questions)} or leave the sample out"
        )
    if sample.stratify is not None and len(questions) > 1:
        values = {str(field_value(q, sample.stratify)) for q in questions}
        if len(values) == len(questions):
            raise UserError(
                f"dataset.sample.stratify (--stratify): every question has its own value of '{sample.stratify}' "
                f"({len(values)} values for {len(questions)} questions), so there are no groups to keep the "
                "shares of; name a grouping field (year, course, area, …)"
            )
    rng = np.random.default_rng(sample.seed)
    if sample.n == len(questions):
        chosen = list(range(len(questions)))
    elif sample.stratify is None:
        chosen = sorted(int(i) for i in rng.choice(len(questions), size=sample.n, replace=False))
    else:
        groups: dict[str, list[int]] = defaultdict(list)
        for i, q in enumerate(questions):
            value = field_value(q, sample.stratify)
            groups[EMPTY if value is None or not str(value).strip() else str(value)].append(i)
        ordered = dict(sorted(groups.items(), key=lambda kv: (kv[0] == EMPTY, kv[0])))
        shares = allocate({g: len(members) for g, members in ordered.items()}, sample.n)
        chosen = sorted(
            ordered[g][int(k)]
            for g in ordered
            for k in rng.choice(len(ordered[g]), size=shares[g], replace=False)
        )
    counts["removed_sample"] = len(questions) - len(chosen)
    return [questions[i] for i in chosen]
