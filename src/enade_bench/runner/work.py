"""Work items (question × shuffle) and how a model's answer becomes a record."""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

from enade_bench.dataset.schema import LETTERS, Question
from enade_bench.errors import UserError
from enade_bench.prompts.builder import option_view
from enade_bench.results.records import QuestionRecord, Sample
from enade_bench.scoring.choice import OptionScores
from enade_bench.scoring.extraction import Extraction
from enade_bench.strategies.registry import Strategy
from enade_bench.strategies.shuffle import permutation_for


@dataclass(frozen=True)
class WorkItem:
    """One question in one option order."""

    question: Question
    shuffle: int
    permutation: tuple[int, ...] | None

    @property
    def key(self) -> tuple[str, int]:
        return (self.question.id, self.shuffle)

    @property
    def options(self) -> tuple[str, ...]:
        return option_view(self.question, self.permutation)

    def original_letter(self, displayed: str | None) -> str | None:
        """Map a letter as displayed back to the item's original letter."""
        if displayed is None:
            return None
        position = LETTERS.index(displayed)
        return LETTERS[self.permutation[position]] if self.permutation else displayed

    @property
    def answer_position(self) -> int:
        index = self.question.answer_index
        return self.permutation.index(index) if self.permutation else index


def work_items(questions: Sequence[Question], strategy: Strategy, seed: int) -> list[WorkItem]:
    """All (question, shuffle) pairs of a strategy, question-major, in dataset order."""
    items = []
    for q in questions:
        for k in range(strategy.n_shuffles if strategy.shuffle else 1):
            perm = tuple(permutation_for(seed, q.id, q.n_options, k)) if strategy.shuffle else None
            items.append(WorkItem(q, k, perm))
    return items


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def majority(letters: Sequence[str | None]) -> tuple[str | None, float]:
    """Most frequent letter (ties: the one seen first) and the share that agree with it."""
    answered = [x for x in letters if x is not None]
    if not answered:
        return None, 0.0
    counts = Counter(answered)
    best = max(counts.values())
    winner = next(x for x in answered if counts[x] == best)
    return winner, best / len(letters)


def build_record(
    item: WorkItem,
    strategy: Strategy,
    prompt_text: str,
    displayed: str | None,
    *,
    scores: OptionScores | None = None,
    outputs: Sequence[tuple[str, Extraction]] = (),
    error: str | None = None,
    extra: dict[str, JsonValue] | None = None,
    prompt_form: str | None = None,
) -> QuestionRecord:
    """Assemble the record of one work item (letters mapped back to the original order)."""
    q = item.question
    prediction = item.original_letter(displayed)
    option_scores = details = None
    if scores is not None:
        option_scores = {item.original_letter(d) or d: v for d, v in scores.scores.items()}
        details = {item.original_letter(d) or d: v for d, v in scores.details.items()}
    samples = agreement = raw = rule = None
    if outputs:
        raw, first = outputs[0][0], outputs[0][1]
        rule = next((e.rule for _, e in outputs if e.letter == displayed), first.rule)
        if len(outputs) > 1:
            samples = [
                Sample(text=t, prediction=item.original_letter(e.letter), rule=e.rule) for t, e in outputs
            ]
            _, agreement = majority([e.letter for _, e in outputs])
    return QuestionRecord(
        id=q.id,
        shuffle=item.shuffle,
        fields=dict(q.fields),
        n_options=q.n_options,
        answer=q.answer,
        prediction=prediction,
        correct=prediction == q.answer,
        method=strategy.method,
        shot=strategy.shot,
        strategy=strategy.id,
        permutation=list(item.permutation) if item.permutation else None,
        answer_position=item.answer_position,
        predicted_position=LETTERS.index(displayed) if displayed else None,
        displayed_prediction=displayed,
        option_scores=option_scores,
        score_details=details,
        raw_output=raw,
        extraction_rule=rule,
        samples=samples,
        agreement=agreement,
        error=error,
        question_hash=q.content_hash(),
        stem=q.stem,
        options=list(q.options),
        prompt_hash=sha256_text(prompt_text),
        prompt=prompt_text,
        prompt_form=prompt_form,
        cluster=q.cluster or None,
        extra=extra,
    )


def with_current_fields(
    done: dict[tuple[str, int], QuestionRecord], questions: Sequence[Question]
) -> dict[tuple[str, int], QuestionRecord]:
    """Logged records with the grouping fields (stimulus cluster, option texts) of the loaded questions.

    A log written before schema version 2 held ENADE's ``year``/``course``/``component``
    for every exam; the resume fingerprint guarantees the same data, so each resumed
    record takes its question's fields and the finished file is as if run in one go.
    """
    current = {q.id: (dict(q.fields), q.cluster or None, list(q.options)) for q in questions}

    def updated(r: QuestionRecord) -> QuestionRecord:
        fields, cluster, options = current.get(r.id, (r.fields, r.cluster, r.options))
        if (fields, cluster, options) == (r.fields, r.cluster, r.options):
            return r
        return r.model_copy(update={"fields": fields, "cluster": cluster, "options": options})

    return {key: updated(r) for key, r in done.items()}


def with_current_key(
    done: dict[tuple[str, int], QuestionRecord], questions: Sequence[Question], log: Path
) -> dict[tuple[str, int], QuestionRecord]:
    """Logged records scored against the answer key on disk, their question text checked.

    The resume log is not keyed on the answer key (:func:`enade_bench.runner.write.log_key`):
    a corrected key re-scores the logged answers (``answer``, ``correct``,
    ``answer_position``, ``question_hash``) instead of asking every question again.
    A question whose stem or options changed since it was answered cannot be resumed:
    ``UserError`` naming how many and the first.
    """
    current = {q.id: q for q in questions}
    changed: list[str] = []

    def rescored(r: QuestionRecord) -> QuestionRecord:
        q = current.get(r.id)
        if q is None or r.question_hash == q.content_hash():
            return r
        if dataclasses.replace(q, answer=r.answer).content_hash() != r.question_hash:
            changed.append(f"{r.id} (shuffle {r.shuffle})")
            return r
        position = r.permutation.index(q.answer_index) if r.permutation else q.answer_index
        return r.model_copy(
            update={
                "answer": q.answer,
                "correct": r.prediction == q.answer,
                "answer_position": position,
                "question_hash": q.content_hash(),
            }
        )

    out = {key: rescored(r) for key, r in done.items()}
    if changed:
        raise UserError(
            f"{log}: cannot resume: the text or options of {len(changed)} logged question(s) changed "
            f"in the data since they were answered (first: {changed[0]}); rerun with --no-resume "
            "(asks every question again) or choose another output.dir"
        )
    return out


def rescored_note(
    logged: dict[tuple[str, int], QuestionRecord], current: dict[tuple[str, int], QuestionRecord], log: Path
) -> str | None:
    """One line saying how many logged answers :func:`with_current_key` re-scored (``None``: none)."""
    changed = {key for key, r in current.items() if r.answer != logged[key].answer}
    if not changed:
        return None
    questions = len({question for question, _ in changed})
    return (
        f"{log}: {len(changed)} logged answer(s) of {questions} question(s) re-scored against the answer "
        "key on disk: their gold answer changed since they were answered"
    )
