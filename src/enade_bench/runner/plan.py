"""Plan setup, in one place: the experiment, its strategies, their work and their files.

Every way of running an experiment — live, through a provider's batch API, inside a
study — starts here.  :func:`plan_strategy` turns one strategy of a loaded
:class:`Experiment` into a :class:`StrategyPlan`: the work items (question × shuffle,
question-major, in dataset order), the fixed chunks, each item's seed, the prompt of
each item and the files of the run.  The experiment seed (``evaluation.seed``) is read
here and nowhere else; everything downstream takes it from the plan.

A plan is made before any model loads, so that everything checkable — prompt
placeholders, worked examples, the output files — is checked first.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Literal

from enade_bench.backends.base import Backend
from enade_bench.config import ExperimentConfig, SampleConfig
from enade_bench.dataset.loader import LoadedDataset
from enade_bench.dataset.schema import Question
from enade_bench.errors import UserError
from enade_bench.prompts.builder import PromptParts, build_prompt
from enade_bench.prompts.templates import PromptSet
from enade_bench.regular_file import read_text
from enade_bench.results.lock import run_lock
from enade_bench.results.store import RunPaths
from enade_bench.results.summary import PromptFile
from enade_bench.runner.schedule import chunks, item_seeds
from enade_bench.runner.work import WorkItem, work_items
from enade_bench.scoring.extraction import Extraction, extract_answer
from enade_bench.strategies.registry import ALL_STRATEGIES, Strategy, from_config, get_strategy

#: Builds the prompt of a work item (ENADE default: :func:`build_prompt`).
PromptFn = Callable[[WorkItem], PromptParts]
#: Extracts the answer from generated text: (text, valid letters, options) -> Extraction.
ExtractFn = Callable[[str, str, Sequence[str]], Extraction]
#: ``--batch-submit`` / ``--batch-fetch``: run through the provider's batch API.
BatchMode = Literal["submit", "fetch"]


@dataclass
class RunOptions:
    """Command-line choices that are not part of the experiment config."""

    strategies: list[str] | None = None  # None: the config's own settings
    all_strategies: bool = False
    limit: int | None = None
    #: ``--sample``: replaces the config's ``dataset.sample`` (and is recorded with it).
    sample: SampleConfig | None = None
    output_dir: Path | None = None
    resume: bool = True
    progress: bool = True
    backend_factory: Callable[[ExperimentConfig], Backend] | None = None
    #: Run through the provider's batch API instead of live requests.
    batch: BatchMode | None = None


#: ``evaluation.batch_size: auto`` before the model is loaded (and with a backend that cannot say).
AUTO_PLACEHOLDER = 8


@dataclass
class Experiment:
    """Everything loaded once and shared by the strategies of one run.

    A benchmark prepares it from the config (data, prompts, strategies, hooks) before
    any model loads; :meth:`with_backend` attaches the loaded model.
    """

    config: ExperimentConfig
    dataset: LoadedDataset
    prompts: PromptSet
    output_dir: Path
    strategies: list[Strategy]
    backend: Backend | None = None
    #: Optional hooks for other benchmarks (E-EVAL): prompt builder per strategy, extractor.
    prompt_fn_for: Callable[[Strategy], PromptFn] | None = None
    extract_fn: ExtractFn = extract_answer
    #: The grouping fields accuracy is broken down by (the benchmark declares them);
    #: ``None``: every field the records carry, in their order.
    breakdown_fields: tuple[str, ...] | None = None
    #: Questions kept by ``--limit`` (``None``: all); E-EVAL applies its limit per subject.
    limit: int | None = None
    #: The strategies' plans (:meth:`planned`), made once before the model loads.
    plans: tuple[StrategyPlan, ...] = ()
    #: A study's shard: only questions ``start`` to ``stop`` (0-based, ``stop`` excluded) of
    #: :attr:`questions` are asked, each item in the chunk and with the seed of the whole run.
    window: tuple[int, int] | None = None

    @property
    def seed(self) -> int:
        """The experiment seed: option shuffles and sampled generation derive from it."""
        return self.config.evaluation.seed

    @property
    def model(self) -> Backend:
        """The loaded backend (an error before :meth:`with_backend`)."""
        if self.backend is None:
            raise RuntimeError("the experiment has no backend yet (Experiment.with_backend)")
        return self.backend

    def with_backend(
        self, backend: Backend, probe: Callable[[Experiment], Callable[[int], None]] | None = None
    ) -> Experiment:
        """This experiment with its model loaded.

        ``evaluation.batch_size: auto`` is resolved here, once, by the backend
        (``auto_batch_size``; 8 where it has none) and the plans are made again with it.
        ``probe(exp)``: the workload the backend probes with, given this experiment loaded
        (the runner's :func:`~enade_bench.runner.batch_probe.peak_workload`: its heaviest
        chunks); None, or an experiment not planned: the backend's own probe.
        """
        if self.config.evaluation.batch_size != "auto":
            return dataclasses.replace(self, backend=backend)
        find = getattr(backend, "auto_batch_size", None)
        if callable(find) and probe is not None and self.plans:
            size = int(find(probe(dataclasses.replace(self, backend=backend))))
        else:
            size = int(find()) if callable(find) else AUTO_PLACEHOLDER
        evaluation = self.config.evaluation.model_copy(update={"batch_size": size})
        exp = dataclasses.replace(
            self, backend=backend, config=self.config.model_copy(update={"evaluation": evaluation})
        )
        return exp.planned() if self.plans else exp

    def planned(self) -> Experiment:
        """This experiment with the plan of every strategy made (and so checked)."""
        return dataclasses.replace(self, plans=tuple(plan_strategy(self, s) for s in self.strategies))

    @property
    def questions(self) -> list[Question]:
        """The questions the run puts to the model (``--limit`` applied)."""
        kept = self.dataset.questions
        return kept[: self.limit] if self.limit else kept

    @cached_property
    def prompt_files(self) -> dict[str, PromptFile]:
        """Path, sha256 and text of the prompt files (read once, used by every strategy)."""
        out = {}
        for role, path in self.prompts.source.items():
            text = read_text(path)
            out[role] = PromptFile(
                path=str(path), sha256=hashlib.sha256(text.encode()).hexdigest(), text=text
            )
        return out

    def prompt_fn(self, strategy: Strategy) -> PromptFn:
        """How this experiment builds the prompt of one strategy's work items."""
        if self.prompt_fn_for is not None:
            return self.prompt_fn_for(strategy)
        return template_prompt_fn(strategy, self.prompts)

    def paths(self, strategy: Strategy) -> RunPaths:
        """The files one strategy of this experiment writes."""
        return RunPaths.of(self.output_dir, self.config.name, strategy.id)

    def lock(self) -> AbstractContextManager[None]:
        """Hold the lock files of every strategy's run (another process on them: an error)."""
        return run_lock([self.paths(s).lock for s in self.strategies])


def template_prompt_fn(strategy: Strategy, prompts: PromptSet) -> PromptFn:
    """The prompt builder of the template prompts (:func:`~enade_bench.prompts.builder.build_prompt`)."""

    def build(item: WorkItem) -> PromptParts:
        return build_prompt(
            item.question,
            item.options,
            strategy.method,
            strategy.n_examples,
            prompts,
            chain_of_thought=strategy.chain_of_thought,
        )

    return build


@dataclass(frozen=True)
class StrategyPlan:
    """One strategy's work: its items in fixed chunks, their seeds and prompts, its files."""

    strategy: Strategy
    items: tuple[WorkItem, ...]
    chunks: tuple[tuple[WorkItem, ...], ...]
    #: Each item's chunk seed (:mod:`enade_bench.runner.schedule`); sample ``k`` adds ``k``.
    seeds: Mapping[tuple[str, int], int]
    prompts: tuple[PromptParts, ...]
    paths: RunPaths

    @property
    def label(self) -> str:
        """The strategy id, as progress bars and messages name it."""
        return self.strategy.id or "run"

    def prompt_of(self, item: WorkItem) -> PromptParts:
        """The prompt of one of this plan's items."""
        return self.prompts[self._index[item.key]]

    @cached_property
    def _index(self) -> dict[tuple[str, int], int]:
        return {item.key: i for i, item in enumerate(self.items)}


def plan_strategies(cfg: ExperimentConfig, options: RunOptions) -> list[Strategy]:
    """The strategies a run asks for: the options' list, all six, or the config's own settings."""
    if options.all_strategies or (cfg.evaluation.run_all_strategies and not options.strategies):
        return [get_strategy(s, cfg.evaluation) for s in ALL_STRATEGIES]
    if options.strategies:
        return [get_strategy(s, cfg.evaluation) for s in options.strategies]
    return [from_config(cfg.evaluation)]


def plan_strategy(exp: Experiment, strategy: Strategy) -> StrategyPlan:
    """Work items, chunks, seeds, prompts and files of one strategy of an experiment.

    Every prompt is built here, before any model loads: a template placeholder that
    cannot be filled or too few worked examples is an ``error:`` now, not after the
    model has loaded or an earlier strategy has run.
    """
    try:
        size = exp.config.evaluation.batch_size
        plan = make_plan(
            exp.questions,
            strategy,
            exp.seed,
            AUTO_PLACEHOLDER if size == "auto" else size,
            exp.prompt_fn(strategy),
            exp.paths(strategy),
        )
    except UserError as exc:
        raise UserError(f"{strategy.id or exp.config.name}: {exc}") from None
    if exp.window is None:
        return plan
    start, stop = exp.window
    return window_plan(plan, {q.id for q in exp.questions[start:stop]}, plan.paths)


def window_plan(plan: StrategyPlan, kept: set[str], paths: RunPaths) -> StrategyPlan:
    """``plan`` with only the items of the questions ``kept`` (a shard), written to ``paths``: each
    item in its chunk of the whole run and with its seed there, so that it is computed as it is there."""
    cut = [c for c in (tuple(i for i in chunk if i.question.id in kept) for chunk in plan.chunks) if c]
    items = tuple(i for chunk in cut for i in chunk)
    return StrategyPlan(
        plan.strategy,
        items,
        tuple(cut),
        {i.key: plan.seeds[i.key] for i in items},
        tuple(plan.prompt_of(i) for i in items),
        paths,
    )


def make_plan(
    questions: Sequence[Question],
    strategy: Strategy,
    seed: int,
    batch_size: int,
    build: PromptFn,
    paths: RunPaths,
) -> StrategyPlan:
    """The plan of one strategy on ``questions`` (what :func:`plan_strategy` makes of an experiment)."""
    items = work_items(questions, strategy, seed)
    return StrategyPlan(
        strategy=strategy,
        items=tuple(items),
        chunks=tuple(tuple(c) for c in chunks(items, strategy, batch_size)),
        seeds=item_seeds(items, strategy, seed, batch_size),
        prompts=tuple(build(item) for item in items),
        paths=paths,
    )


def plan_run(exp: Experiment) -> list[StrategyPlan]:
    """The plan of every strategy of the experiment (made by :meth:`Experiment.planned`, or now)."""
    return list(exp.plans) if exp.plans else [plan_strategy(exp, s) for s in exp.strategies]
