"""What a run would do, without inference: ``enade-bench validate`` and ``run --dry-run``.

Everything a run checks is checked (the config, the output folder, the data, every
strategy's prompts and worked examples, the model config as far as it goes without
weights).  Then, per strategy: the model calls it would make, one rendered prompt, and
the prompts' token counts against the model's context minus ``max_new_tokens`` (the
model's own tokenizer, no weights; :func:`~enade_bench.backends.factory.inspect_model`), by the rule the run applies
(:func:`~enade_bench.runner.context.answer_room`, ``evaluation.context_limit``).
For an API model the input tokens are those of its ``api.tokenizer`` when set, else an
estimate of 4 characters per token, marked as such; output tokens are at most
``max_new_tokens`` (``cot_max_new_tokens`` for chain of thought) per call.

Problems (rows that fail validation and are not skipped, prompts longer than the
context under ``truncate: error``, an intermediate log the run would refuse) are listed,
and the command exits with status 2; under ``truncate: left`` the prompts that would be
cut are a note. For each strategy with a log, :func:`resume_outlook` says whether the run
will resume it (how many answers it holds, how many errors it asks again, how many are
re-scored against a corrected answer key) or why not: the settings that changed, with
their old and new values. The model's identity is compared when the model loads.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from enade_bench.backends.factory import inspect_model
from enade_bench.backends.model_info import ModelInfo
from enade_bench.errors import UserError
from enade_bench.results.store import IntermediateLog
from enade_bench.runner.context import answer_room, effective_context
from enade_bench.runner.plan import Experiment, StrategyPlan
from enade_bench.runner.retry import split_logged
from enade_bench.runner.work import with_current_fields, with_current_key
from enade_bench.runner.write import log_key

__all__ = ["DryRun", "StrategyDryRun", "check_logs", "dry_run", "resume_outlook"]

#: Characters per token when no tokenizer is known (API models without ``api.tokenizer``).
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class StrategyDryRun:
    """One strategy's planned work."""

    label: str
    items: int
    calls: int
    example_id: str
    example_prompt: str
    tokens_min: int
    tokens_median: float
    tokens_max: int
    input_tokens: int
    output_tokens_max: int
    estimated: bool
    too_long: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class DryRun:
    """Everything ``validate`` prints."""

    counts: dict[str, int]
    invalid_rows: list[str]
    skip_invalid: bool
    context_length: int | None
    context_source: str | None
    max_new_tokens: int
    strategies: list[StrategyDryRun]
    truncate: str = "error"
    notes: list[str] = field(default_factory=list)
    #: Intermediate logs the run would refuse, each with the reason.
    logs_refused: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        """What would make the run fail or misread: each one line."""
        out = [] if self.skip_invalid else [f"invalid row: {row}" for row in self.invalid_rows]
        out += self.logs_refused
        if self.truncate == "error":
            for s in self.strategies:
                out += [f"{s.label}: {item}" for item in s.too_long]
        return out


def _counts(info: ModelInfo | None, texts: list[str], seen: dict[str, int]) -> list[tuple[int, bool]]:
    """Tokens of each text and whether the count is an estimate; ``seen``: the texts counted already
    (strategies share prompts).  The new texts are encoded in one call (a third less CPU than one by one)."""
    if info is None or info.counter is None:
        return [(max(1, round(len(text) / CHARS_PER_TOKEN)), True) for text in texts]
    new = list(dict.fromkeys(text for text in texts if text not in seen))
    if new:
        seen.update(zip(new, info.counter.count_texts(new), strict=True))
    return [(seen[text], False) for text in texts]


def _strategy(
    exp: Experiment, plan: StrategyPlan, info: ModelInfo | None, seen: dict[str, int]
) -> StrategyDryRun:
    ev = exp.config.evaluation
    out_tokens = ev.cot_max_new_tokens if plan.strategy.chain_of_thought else ev.max_new_tokens
    generation = plan.strategy.method == "generation"
    samples = ev.n_samples if generation else 1
    counter = None if info is None else info.counter
    rendered = [counter.render(p) if counter is not None else p.plain_text() for p in plan.prompts]
    counted = _counts(info, rendered, seen)
    tokens = [n for n, _ in counted]
    context = effective_context(None if info is None else info.context_length, ev)
    too_long = []
    if context is not None and counter is not None:
        room = answer_room(counter.count_continuation, exp, plan)
        kept = f" minus max_new_tokens {room}" if generation else f" minus {room} for the answer"
        too_long = [
            f"question {item.question.id} (shuffle {item.shuffle}): prompt of {n} tokens, but the context is "
            f"{context} tokens{kept}"
            for item, n in zip(plan.items, tokens, strict=True)
            if n > context - room
        ]
    calls = len(plan.items) * samples
    return StrategyDryRun(
        label=plan.label,
        items=len(plan.items),
        calls=calls,
        example_id=plan.items[0].question.id if plan.items else "",
        example_prompt=rendered[0] if rendered else "",
        tokens_min=min(tokens, default=0),
        tokens_median=statistics.median(tokens) if tokens else 0.0,
        tokens_max=max(tokens, default=0),
        input_tokens=sum(tokens) * samples,
        output_tokens_max=calls * out_tokens if generation else calls,
        estimated=any(e for _, e in counted),
        too_long=too_long,
    )


def resume_outlook(exp: Experiment, plan: StrategyPlan, resume: bool = True) -> tuple[str | None, str | None]:
    """``(note, problem)``: whether the run resumes this strategy's log, or why it refuses it.

    Read only: the log is not changed. The model's part of the settings is not known
    without loading it, so it is compared when the run starts.
    """
    log = IntermediateLog(plan.paths.intermediate, log_key(exp, plan.strategy, with_model=False))
    if not exp.config.output.save_intermediate or not log.path.exists():
        return None, None
    if not resume:
        return f"{plan.label}: --no-resume: the log {log.path} will be started over", None
    try:
        raw = with_current_fields(log.load(write=False), exp.questions)
        logged = with_current_key(raw, exp.questions, log.path)
    except UserError as exc:
        return None, f"{plan.label}: {exc}"
    keys = {item.key for item in plan.items}
    done, again = split_logged({k: r for k, r in logged.items() if k in keys})
    parts = [f"{len(done)} of {len(plan.items)} answer(s) logged"]
    if again:
        parts.append(f"{len(again)} error(s) asked again")
    rescored = sum(1 for k, r in done.items() if r.answer != raw[k].answer)
    if rescored:
        parts.append(f"{rescored} re-scored against the answer key on disk (it changed)")
    return (
        f"{plan.label}: resumes {log.path}: " + ", ".join(parts) + "; the model's identity is compared "
        "when it loads",
        None,
    )


def check_logs(exp: Experiment, resume: bool = True) -> None:
    """Refuse, before the model loads, a log the run would refuse (``UserError``, as the run says it).

    Compares the settings known without the model and each logged question's text; the
    model's identity is compared by the run once it is loaded.
    """
    if not resume or not exp.config.output.save_intermediate:
        return
    for plan in exp.plans:
        log = IntermediateLog(plan.paths.intermediate, log_key(exp, plan.strategy, with_model=False))
        if log.path.exists():
            with_current_key(
                with_current_fields(log.load(write=False), exp.questions), exp.questions, log.path
            )


def dry_run(exp: Experiment, resume: bool = True) -> DryRun:
    """The dry run of a prepared (planned) experiment; no model weights are read.

    ``resume``: whether the run would resume existing logs (``--no-resume``: no).
    """
    info = inspect_model(exp.config.model)
    notes = []
    if info is None:
        notes.append(f"model.type '{exp.config.model.type}' offers no inspection: token counts are estimates")
    elif effective_context(info.context_length, exp.config.evaluation) is None:
        notes.append("the model's context length is unknown: prompt lengths are not checked against it")
    seen: dict[str, int] = {}
    strategies = [_strategy(exp, plan, info, seen) for plan in exp.plans]
    outlooks = [resume_outlook(exp, plan, resume) for plan in exp.plans]
    notes += [note for note, _ in outlooks if note]
    truncate = exp.config.evaluation.truncate
    if truncate == "left":
        cut = sum(len(s.too_long) for s in strategies)
        if cut:
            notes.append(
                f"{cut} prompt(s) longer than the context will be cut from the start (truncate: left)"
            )
    return DryRun(
        counts=dict(exp.dataset.counts),
        invalid_rows=list(exp.dataset.invalid),
        skip_invalid=exp.config.dataset.skip_invalid,
        context_length=None if info is None else info.context_length,
        context_source=None if info is None else info.context_source,
        max_new_tokens=exp.config.evaluation.max_new_tokens,
        strategies=strategies,
        truncate=truncate,
        notes=notes,
        logs_refused=[problem for _, problem in outlooks if problem],
    )
