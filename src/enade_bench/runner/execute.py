"""Run one chunk of work items through a backend, for each method."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import cast

from enade_bench.backends.base import (
    Backend,
    BatchLogProbBackend,
    FirstTokenBackend,
    Generation,
    GenerationBackend,
    GenerationParams,
    LogProbBackend,
    StreamingBackend,
)
from enade_bench.config import EvaluationConfig
from enade_bench.dataset.schema import LETTERS
from enade_bench.prompts.builder import PromptParts, build_prompt
from enade_bench.prompts.templates import PromptSet
from enade_bench.results.records import QuestionRecord
from enade_bench.runner.schedule import chunk_seed
from enade_bench.runner.work import WorkItem, build_record, majority
from enade_bench.scoring.choice import choose_first_token, choose_log_prob
from enade_bench.scoring.extraction import Extraction, extract_answer
from enade_bench.strategies.registry import Strategy

#: Builds the prompt of a work item (ENADE default: :func:`build_prompt`).
PromptFn = Callable[[WorkItem], PromptParts]
#: Extracts the answer from generated text: (text, valid letters, options) -> Extraction.
ExtractFn = Callable[[str, str, Sequence[str]], Extraction]


class ChunkExecutor:
    """Turns chunks of work items into records with one backend and one strategy."""

    def __init__(
        self,
        backend: Backend,
        strategy: Strategy,
        prompts: PromptSet | None,
        evaluation: EvaluationConfig,
        prompt_fn: PromptFn | None = None,
        extract_fn: ExtractFn = extract_answer,
    ) -> None:
        self.backend = backend
        self.strategy = strategy
        self.prompts = prompts
        self.evaluation = evaluation
        self.prompt_fn = prompt_fn
        self.extract_fn = extract_fn

    @property
    def prompt_form(self) -> str | None:
        """How the backend sends prompts (``chat_template_rendered``, ``chat_messages``, ``raw``)."""
        return self.backend.prompt_form

    def prompt_for(self, item: WorkItem) -> PromptParts:
        if self.prompt_fn is not None:
            return self.prompt_fn(item)
        assert self.prompts is not None, "either prompts or prompt_fn is needed"
        return build_prompt(
            item.question,
            item.options,
            self.strategy.method,
            self.strategy.n_examples,
            self.prompts,
            chain_of_thought=self.strategy.chain_of_thought,
        )

    def run(self, chunk: Sequence[WorkItem], chunk_index: int) -> list[QuestionRecord]:
        method = self.strategy.method
        if method == "generation":
            return self._generation(chunk, chunk_index)
        if method == "log_prob":
            return self._log_prob(chunk)
        return self._first_token(chunk)

    def generation_params(self, chunk_index: int) -> GenerationParams:
        """Decoding settings of one chunk (its seed: :func:`~enade_bench.runner.schedule.chunk_seed`)."""
        return GenerationParams(
            max_new_tokens=(
                self.evaluation.cot_max_new_tokens
                if self.strategy.chain_of_thought
                else self.evaluation.max_new_tokens
            ),
            temperature=self.evaluation.temperature,
            n_samples=self.evaluation.n_samples,
            seed=chunk_seed(self.evaluation.seed, chunk_index),
        )

    def _generation(self, chunk: Sequence[WorkItem], chunk_index: int) -> list[QuestionRecord]:
        backend = cast(GenerationBackend, self.backend)
        prompts = [self.prompt_for(item) for item in chunk]
        generations = backend.generate(prompts, self.generation_params(chunk_index))
        return [
            self.generation_record(item, prompt, gen)
            for item, prompt, gen in zip(chunk, prompts, generations, strict=True)
        ]

    def generation_record(self, item: WorkItem, prompt: PromptParts, gen: Generation) -> QuestionRecord:
        """The record of one generated answer (every sample extracted, majority vote)."""
        letters = LETTERS[: item.question.n_options]
        outputs = [(text, self.extract_fn(text, letters, item.options)) for text in gen.texts]
        displayed, _ = majority([e.letter for _, e in outputs])
        return build_record(
            item,
            self.strategy,
            self.backend.render(prompt),
            displayed,
            outputs=outputs,
            error=gen.error,
            prompt_form=self.prompt_form,
        )

    def run_streaming(
        self,
        backend: StreamingBackend,
        items: Sequence[WorkItem],
        seeds: Mapping[tuple[str, int], int],
        on_record: Callable[[QuestionRecord], None],
    ) -> None:
        """Generation through a streaming backend (API backends).

        ``seeds``: each item's chunk seed (:func:`~enade_bench.runner.schedule.item_seeds`).
        ``on_record`` receives each record the moment its answer arrives, so an
        interrupted run loses only the requests in flight.
        """
        prompts = [self.prompt_for(item) for item in items]
        params = self.generation_params(0)
        stream = backend.generate_stream(prompts, params, [seeds[item.key] for item in items])
        for index, gen in stream:
            on_record(self.generation_record(items[index], prompts[index], gen))

    def _log_prob(self, chunk: Sequence[WorkItem]) -> list[QuestionRecord]:
        backend = cast(LogProbBackend, self.backend)
        prompts = [self.prompt_for(item) for item in chunk]
        requests = [
            (p, [" " + text for text in item.options]) for p, item in zip(prompts, chunk, strict=True)
        ]
        if isinstance(backend, BatchLogProbBackend):  # several questions per call
            batch = backend.continuation_logprobs_batch(requests)
        else:
            batch = [backend.continuation_logprobs(p, c) for p, c in requests]
        records = []
        for item, prompt, scores in zip(chunk, prompts, batch, strict=True):
            choice = choose_log_prob([s.sum_logprob for s in scores], [s.n_tokens for s in scores])
            records.append(
                build_record(
                    item,
                    self.strategy,
                    backend.render(prompt),
                    choice.letter,
                    scores=choice,
                    prompt_form=self.prompt_form,
                )
            )
        return records

    def _first_token(self, chunk: Sequence[WorkItem]) -> list[QuestionRecord]:
        backend = cast(FirstTokenBackend, self.backend)
        # Items with the same number of options are scored together (same letter set).
        by_n: dict[int, list[int]] = {}
        for i, item in enumerate(chunk):
            by_n.setdefault(item.question.n_options, []).append(i)
        results: dict[int, QuestionRecord] = {}
        for n, indices in by_n.items():
            prompts = [self.prompt_for(chunk[i]) for i in indices]
            letter_lps = backend.letter_logprobs(prompts, LETTERS[:n], self.evaluation.letter_variants)
            for i, prompt, lps in zip(indices, prompts, letter_lps, strict=True):
                choice = choose_first_token(lps)
                results[i] = build_record(
                    chunk[i],
                    self.strategy,
                    backend.render(prompt),
                    choice.letter,
                    scores=choice,
                    prompt_form=self.prompt_form,
                )
        return [results[i] for i in range(len(chunk))]
