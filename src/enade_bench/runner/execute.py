"""Run one chunk of work items through a backend, for each method.

The prompts come with the items (built once, by the plan: :mod:`enade_bench.runner.plan`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import cast

from pydantic import JsonValue

from enade_bench.backends.base import (
    Backend,
    BatchLogProbBackend,
    FirstTokenBackend,
    Generation,
    GenerationBackend,
    GenerationParams,
    LogProbBackend,
    PrefetchBackend,
    StreamingBackend,
)
from enade_bench.config import EvaluationConfig
from enade_bench.dataset.schema import LETTERS
from enade_bench.masking import MARK, echoes_word, holds_secret, known_secrets, weak_secrets
from enade_bench.prompts.builder import PromptParts
from enade_bench.results.records import QuestionRecord
from enade_bench.runner.plan import ExtractFn, StrategyPlan
from enade_bench.runner.work import WorkItem, build_record, majority
from enade_bench.scoring.choice import OptionScores, choose_first_token, choose_log_prob
from enade_bench.scoring.extraction import Extraction

#: What a record says when a raw output echoed a secret (``extra.withheld``).
WITHHELD_NOTE = "raw output withheld (it held a form of a secret); the prediction was extracted before"


def withhold_outputs(
    outputs: list[tuple[str, Extraction]],
) -> tuple[list[tuple[str, Extraction]], dict[str, JsonValue] | None]:
    """Each raw output that holds a remembered secret (a weak one as a word) replaced by :data:`~enade_bench.masking.MARK`
    *after* its answer was extracted (the record stays scorable); the note for ``extra``."""
    secrets, weak = known_secrets(), weak_secrets()
    hidden = [holds_secret(text, secrets) or echoes_word(text, weak) for text, _ in outputs]
    if not any(hidden):
        return outputs, None
    kept = [(MARK if h else text, e) for (text, e), h in zip(outputs, hidden, strict=True)]
    return kept, {"withheld": f"{WITHHELD_NOTE}: {sum(hidden)} of {len(outputs)} sample(s)"}


class ChunkExecutor:
    """Turns chunks of one strategy's plan into records with one backend."""

    def __init__(
        self, backend: Backend, plan: StrategyPlan, evaluation: EvaluationConfig, extract_fn: ExtractFn
    ) -> None:
        self.backend = backend
        self.plan = plan
        self.strategy = plan.strategy
        self.evaluation = evaluation
        self.extract_fn = extract_fn

    def ahead(self, chunks: Sequence[Sequence[WorkItem]]) -> Iterator[Sequence[WorkItem]]:
        """Each chunk in turn, the next one's prompts first handed to a backend that prepares prompts
        ahead (:class:`.PrefetchBackend`: tokenised while this chunk runs, :mod:`.hf_ahead`)."""
        for k, chunk in enumerate(chunks):
            if k + 1 < len(chunks) and isinstance(self.backend, PrefetchBackend):
                after = chunks[k + 1]
                if self.strategy.method == "log_prob":
                    self.backend.prefetch(*zip(*self._scored(after), strict=True))
                else:
                    self.backend.prefetch([self.plan.prompt_of(item) for item in after])
            yield chunk

    def run(self, chunk: Sequence[WorkItem]) -> list[QuestionRecord]:
        """The records of one chunk of the plan."""
        method = self.strategy.method
        if method == "generation":
            return self._generation(chunk)
        if method == "log_prob":
            return self._log_prob(chunk)
        return self._first_token(chunk)

    def generation_params(self, seed: int) -> GenerationParams:
        """Decoding settings; ``seed``: the chunk's seed from the plan (greedy decoding ignores it)."""
        return GenerationParams(
            max_new_tokens=(
                self.evaluation.cot_max_new_tokens
                if self.strategy.chain_of_thought
                else self.evaluation.max_new_tokens
            ),
            temperature=self.evaluation.temperature,
            n_samples=self.evaluation.n_samples,
            seed=seed,
        )

    def _generation(self, chunk: Sequence[WorkItem]) -> list[QuestionRecord]:
        backend = cast(GenerationBackend, self.backend)
        prompts = [self.plan.prompt_of(item) for item in chunk]
        generations = backend.generate(prompts, self.generation_params(self.plan.seeds[chunk[0].key]))
        return [
            self.generation_record(item, prompt, gen)
            for item, prompt, gen in zip(chunk, prompts, generations, strict=True)
        ]

    def generation_record(self, item: WorkItem, prompt: PromptParts, gen: Generation) -> QuestionRecord:
        """The record of one generated answer (every sample extracted, majority vote)."""
        letters = LETTERS[: item.question.n_options]
        error = gen.error
        try:
            outputs = [(text, self.extract_fn(text, letters, item.options)) for text in gen.texts]
        except Exception as exc:  # noqa: BLE001 - a failing (plug-in) extractor must not lose the answer
            outputs = [(text, Extraction(None, "extraction_failed")) for text in gen.texts]
            error = f"extraction failed ({type(exc).__name__}: {exc})"
        displayed, _ = majority([e.letter for _, e in outputs])
        outputs, extra = withhold_outputs(outputs)
        record = build_record(
            item,
            self.strategy,
            self.backend.render(prompt),
            displayed,
            outputs=outputs,
            error=error,
            extra=extra,
            prompt_form=self.backend.prompt_form,
        )
        return record if gen.usage is None else record.model_copy(update={"usage": gen.usage})

    def run_streaming(
        self,
        backend: StreamingBackend,
        items: Sequence[WorkItem],
        on_record: Callable[[QuestionRecord], None],
    ) -> None:
        """Generation through a streaming backend (API backends).

        Each item is sent with its chunk seed from the plan. ``on_record`` receives
        each record the moment its answer arrives, so an interrupted run loses only
        the requests in flight.
        """
        prompts = [self.plan.prompt_of(item) for item in items]
        params = self.generation_params(0)
        seeds = [self.plan.seeds[item.key] for item in items]
        stream = backend.generate_stream(prompts, params, seeds)
        for index, gen in stream:
            on_record(self.generation_record(items[index], prompts[index], gen))

    def _log_prob(self, chunk: Sequence[WorkItem]) -> list[QuestionRecord]:
        backend = cast(LogProbBackend, self.backend)
        requests = self._scored(chunk)
        prompts = [p for p, _ in requests]
        if isinstance(backend, BatchLogProbBackend):  # several questions per call
            batch = backend.continuation_logprobs_batch(requests)
        else:
            batch = [backend.continuation_logprobs(p, c) for p, c in requests]
        choices = [choose_log_prob([s.sum_logprob for s in v], [s.n_tokens for s in v]) for v in batch]
        return [self._scored_record(*args) for args in zip(chunk, prompts, choices, strict=True)]

    def _scored_record(self, item: WorkItem, prompt: PromptParts, choice: OptionScores) -> QuestionRecord:
        """The record of an answer chosen by its scores (``log_prob``, ``first_token``)."""
        return build_record(
            item,
            self.strategy,
            self.backend.render(prompt),
            choice.letter,
            scores=choice,
            prompt_form=self.backend.prompt_form,
        )

    def _scored(self, chunk: Sequence[WorkItem]) -> list[tuple[PromptParts, list[str]]]:
        """``log_prob``'s requests: each item's prompt and the options it scores (a space before each)."""
        return [(self.plan.prompt_of(item), [" " + text for text in item.options]) for item in chunk]

    def _first_token(self, chunk: Sequence[WorkItem]) -> list[QuestionRecord]:
        backend = cast(FirstTokenBackend, self.backend)
        # Items with the same number of options are scored together (same letter set).
        by_n: dict[int, list[int]] = {}
        for i, item in enumerate(chunk):
            by_n.setdefault(item.question.n_options, []).append(i)
        results: dict[int, QuestionRecord] = {}
        for n, indices in by_n.items():
            prompts = [self.plan.prompt_of(chunk[i]) for i in indices]
            letter_lps = backend.letter_logprobs(prompts, LETTERS[:n], self.evaluation.letter_variants)
            for i, prompt, lps in zip(indices, prompts, letter_lps, strict=True):
                results[i] = self._scored_record(chunk[i], prompt, choose_first_token(lps))
        return [results[i] for i in range(len(chunk))]
