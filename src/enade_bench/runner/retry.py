"""Errors are not answers: a resumed run asks again every question that ended in an error.

A record whose ``error`` is set (a refused request, a malformed reply, a key the
provider rejected) is logged like any other, so that the run can finish and say so;
but a rerun of the same command does not take it as done: the question is asked
again, up to :data:`MAX_ATTEMPTS` tries in all. The new record carries ``attempt``
(2, 3, …) and ``error_history`` (the errors of the earlier tries, oldest first); the
log keeps every try, the last one counts. A run that ends with errors exits with
:data:`EXIT_ERRORS` (see :func:`errors_note`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from enade_bench.results.records import QuestionRecord

#: Tries per question (the first and two retries by reruns); then its error is final.
MAX_ATTEMPTS = 3
#: Exit status of a run that finished with questions in error (bad input is 2).
EXIT_ERRORS = 3

Key = tuple[str, int]


def attempts(record: QuestionRecord) -> int:
    """How many tries a logged record took (1 for a record without ``attempt``)."""
    return record.attempt or 1


def retryable(record: QuestionRecord) -> bool:
    """An error with tries left: a resumed run asks the question again."""
    return record.error is not None and attempts(record) < MAX_ATTEMPTS


def split_logged(
    logged: Mapping[Key, QuestionRecord],
) -> tuple[dict[Key, QuestionRecord], dict[Key, QuestionRecord]]:
    """The logged records that are done, and those to ask again (errors with tries left)."""
    done = {k: r for k, r in logged.items() if not retryable(r)}
    again = {k: r for k, r in logged.items() if retryable(r)}
    return done, again


def as_retry(record: QuestionRecord, previous: QuestionRecord | None) -> QuestionRecord:
    """``record`` as the next try after ``previous`` (unchanged for a first try)."""
    if previous is None:
        return record
    history = [*(previous.error_history or []), previous.error or ""]
    return record.model_copy(update={"attempt": attempts(previous) + 1, "error_history": history})


def errors_note(records: Iterable[QuestionRecord], batch: bool = False) -> str | None:
    """What to tell the user about records in error (``None``: there are none).

    ``batch``: the run went through a provider's batch API, which keeps its errors; a
    live rerun (without ``--batch-*``) asks those questions again.
    """
    errors = [r for r in records if r.error is not None]
    if not errors:
        return None
    left = sum(attempts(r) < MAX_ATTEMPTS for r in errors)
    final = len(errors) - left
    parts = [f"{len(errors)} question(s) ended in an error (e.g. {errors[0].id}: {errors[0].error})"]
    if left:
        how = "rerun without --batch-fetch (live)" if batch else "rerun the same command"
        parts.append(
            f"{how} to ask the {left} question(s) again "
            f"(up to {MAX_ATTEMPTS} tries each; the log keeps every try)"
        )
    if final:
        parts.append(f"{final} used all {MAX_ATTEMPTS} tries: rerun with --no-resume to start over")
    return "; ".join(parts)
