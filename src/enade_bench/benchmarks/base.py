"""The benchmark plug-in contract: small Protocols and one ready implementation.

A benchmark owns everything that makes an exam an exam — its file layout (a
:class:`~enade_bench.dataset.presets.DatasetPreset`), its shipped prompt sets and
worked examples, and, where needed, its own loader, prompt builder, answer
extraction, commands and report sections — and hands the runner a prepared
:class:`~enade_bench.runner.plan.Experiment`.  The runner imports no benchmark; the
registry (:mod:`enade_bench.benchmarks.registry`) picks the benchmark by
``dataset.benchmark``.

Every benchmark has :class:`Benchmark`'s two steps (``prepare`` reads and checks
everything without a model; ``run`` runs the prepared experiment once its model is
loaded).  Optional abilities are Protocols of their own, checked with ``isinstance``:
:class:`ReportBenchmark` adds the exam's own analyses to ``enade-bench report``,
:class:`StudyBenchmark` brings the exam's own study to ``enade-bench study`` (an exam without
one gets the study every exam has, :mod:`enade_bench.benchmarks.generic_study`).  An exam's
commands are its :class:`~enade_bench.benchmarks.commands.ExamCommandLine`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from enade_bench.config import DatasetConfig, ExperimentConfig, input_base, output_dir, resolve_input
from enade_bench.dataset.loader import load_dataset
from enade_bench.dataset.presets import DatasetPreset, configured
from enade_bench.prompts.templates import PromptSet, prompt_set_for
from enade_bench.runner.outputs import RunOutcome
from enade_bench.runner.plan import Experiment, RunOptions, plan_strategies
from enade_bench.runner.run import run_experiment
from enade_bench.strategies.registry import ALL_STRATEGIES, Strategy

if TYPE_CHECKING:  # the report stack (pandas, matplotlib) loads only when a report is made
    from enade_bench.report.loader import RunEntry
    from enade_bench.report.section import Section
    from enade_bench.results.summary import JsonObject
    from enade_bench.study.plan import PlannedStudy, StudyOptions


@runtime_checkable
class Benchmark(Protocol):
    """What every exam gives the command line: prepare an experiment, run it."""

    @property
    def name(self) -> str:
        """The ``dataset.benchmark`` value that selects this benchmark."""
        ...

    def prepare(self, cfg: ExperimentConfig, source: Path, options: RunOptions) -> Experiment:
        """Read and check data, prompts and strategies of a config; no model is loaded.

        ``source`` is the config file (relative paths resolve from its folder first).
        Everything a run would check is checked here, for every strategy asked.
        """
        ...

    def run(self, exp: Experiment, options: RunOptions) -> RunOutcome:
        """Run (or resume) a prepared experiment whose model is loaded; results and files."""
        ...


@dataclass(frozen=True)
class ReportOptions:
    """What ``enade-bench report`` asks of each exam's own analyses.

    Attributes
    ----------
    seed
        Seed of every simulation an analysis runs (random baselines, simulated humans).
    data
        Data folder per benchmark name (``--enem-data DIR`` is ``data["enem"]``); a
        benchmark finds its own when absent.
    """

    seed: int = 20240101
    data: Mapping[str, Path] = field(default_factory=dict)


@runtime_checkable
class ReportBenchmark(Benchmark, Protocol):
    """A benchmark with analyses of its own in ``enade-bench report`` (ENEM's psychometrics)."""

    def report_section(self, entries: Sequence[RunEntry], options: ReportOptions, folder: Path) -> Section:
        """The exam's analyses of its runs among ``entries``; figures go to ``folder``."""
        ...


@runtime_checkable
class StudyBenchmark(Benchmark, Protocol):
    """A benchmark with a study of its own (ENEM: models × areas × languages, option shuffles, the verdict)."""

    def plan_study(self, path: Path, data: JsonObject, options: StudyOptions) -> PlannedStudy:
        """Check the study YAML ``data`` (read from ``path``) and prepare every run; no model loads.

        The study pipeline (:mod:`enade_bench.study.run`) then runs the plan's tasks and asks it
        for its report.
        """
        ...


@dataclass(frozen=True)
class PromptSets:
    """The prompts a benchmark ships: templates by name, its defaults, its worked examples.

    Attributes
    ----------
    templates
        Shipped prompt templates by name (``prompts.preset`` selects one).
    default
        The template used, per exam language (``dataset.language``), when a config names
        neither ``prompts.preset`` nor ``prompts.dir``.
    examples
        The shipped worked examples per exam language (one-/few-shot strategies).
    """

    templates: Mapping[str, Path] = field(default_factory=dict)
    default: Mapping[str, str] = field(default_factory=dict)
    examples: Mapping[str, Path] = field(default_factory=dict)

    def resolved(self, cfg: ExperimentConfig) -> ExperimentConfig:
        """``cfg`` with the default prompt set named (``prompts.preset``), so results record it."""
        block = cfg.prompts
        default = self.default.get(cfg.dataset.language)
        if block.dir is not None or block.preset is not None or default is None:
            return cfg
        return cfg.model_copy(update={"prompts": block.model_copy(update={"preset": default})})

    def load(self, cfg: ExperimentConfig, source: Path, strategies: list[Strategy]) -> PromptSet:
        """The prompt set a config asks for, from these (:func:`~enade_bench.prompts.templates.prompt_set_for`)."""
        return prompt_set_for(cfg, source, strategies, self.templates, self.default, self.examples)


def _key_found(cfg: ExperimentConfig, source: Path) -> DatasetConfig:
    """``cfg.dataset`` with its answer key looked up as any input (the config's folder first),
    not beside the questions file, which may lie elsewhere."""
    key = cfg.dataset.answer_key
    if key is None:
        return cfg.dataset
    found = key.model_copy(update={"path": str(resolve_input(key.path, source))})
    return cfg.dataset.model_copy(update={"answer_key": found})


@dataclass(frozen=True)
class CsvExam:
    """An exam whose files have the usual shape: one row per question, options in columns.

    Adding such an exam is a folder with a preset and a prompt file (see
    ``docs/adding_an_exam.md``).

    Attributes
    ----------
    name
        The ``dataset.benchmark`` value.
    preset
        How the exam's columns map onto the canonical fields, and its grouping fields.
    prompts
        The prompt templates and worked examples it ships.
    study_strategies
        What ``enade-bench study`` runs per model unless the study names strategies.
    """

    name: str
    preset: DatasetPreset
    prompts: PromptSets = field(default_factory=PromptSets)
    study_strategies: tuple[str, ...] = ALL_STRATEGIES

    def prepare(self, cfg: ExperimentConfig, source: Path, options: RunOptions) -> Experiment:
        cfg = self.prompts.resolved(cfg)
        strategies = plan_strategies(cfg, options)
        dataset = load_dataset(_key_found(cfg, source), input_base(cfg.dataset.path, source), self.preset)
        prompts = self.prompts.load(cfg, source, strategies)
        exp = Experiment(
            config=cfg,
            dataset=dataset,
            prompts=prompts,
            output_dir=output_dir(cfg, source, options.output_dir),
            strategies=strategies,
            breakdown_fields=tuple(  # a generic exam's file without course/component: not its fields
                f
                for f in configured(self.preset, cfg.dataset).breakdown_fields
                if any(f in q.fields for q in dataset.questions)
            ),
            limit=options.limit,
        )
        return exp.planned()

    def run(self, exp: Experiment, options: RunOptions) -> RunOutcome:
        return run_experiment(exp, options)
