"""The benchmark plug-in contract: a small Protocol and one ready implementation.

A benchmark owns what makes an exam an exam — its file layout (a
:class:`~enade_bench.dataset.presets.DatasetPreset`), its shipped prompt sets,
and, where needed, its own loader, prompt builder and answer extraction — and
hands the runner a loaded :class:`~enade_bench.runner.run.Experiment`. The runner
imports no benchmark; the registry (:mod:`enade_bench.benchmarks.registry`)
picks the benchmark by ``dataset.preset``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from enade_bench.config import ExperimentConfig, PromptsConfig
from enade_bench.dataset.presets import DatasetPreset
from enade_bench.runner.outputs import RunOutcome
from enade_bench.runner.run import ExamSpec, Experiment, RunOptions, load_experiment, run_loaded
from enade_bench.strategies.registry import Strategy


class Benchmark(Protocol):
    """What the command line needs from an exam."""

    @property
    def name(self) -> str:
        """The ``dataset.preset`` value that selects this benchmark."""
        ...

    def load(
        self, cfg: ExperimentConfig, config_path: Path, options: RunOptions
    ) -> tuple[Experiment, list[Strategy]]:
        """Load data, prompts and model; check everything before any model call."""
        ...

    def run(self, exp: Experiment, strategies: list[Strategy], options: RunOptions) -> RunOutcome:
        """Run (or resume) the strategies; the results and the files written."""
        ...


@dataclass(frozen=True)
class CsvExam:
    """An exam whose files have the usual shape: one row per question, options in columns.

    Adding such an exam is a folder with a preset and a prompt file (see
    ``docs/adding_an_exam.md``).

    Attributes
    ----------
    name
        The ``dataset.preset`` value.
    preset
        How the exam's columns map onto the canonical fields.
    prompt_presets
        Shipped prompt templates by name (``prompts.preset`` selects one).
    default_prompts
        The prompt preset used when a config has no ``prompts`` block (``None``:
        ``prompts/default.yaml`` as for any config).
    """

    name: str
    preset: DatasetPreset
    prompt_presets: Mapping[str, Path] = field(default_factory=dict)
    default_prompts: str | None = None

    @property
    def spec(self) -> ExamSpec:
        """What the runner needs of this exam: its file layout and shipped prompt sets."""
        return ExamSpec(preset=self.preset, prompt_presets=self.prompt_presets)

    def load(
        self, cfg: ExperimentConfig, config_path: Path, options: RunOptions
    ) -> tuple[Experiment, list[Strategy]]:
        if self.default_prompts and "prompts" not in cfg.model_fields_set:
            cfg = cfg.model_copy(update={"prompts": PromptsConfig(preset=self.default_prompts)})
        return load_experiment(config_path, options, cfg, self.spec)

    def run(self, exp: Experiment, strategies: list[Strategy], options: RunOptions) -> RunOutcome:
        return run_loaded(exp, strategies, options)
