"""From a config file to a prepared experiment, and to its results: what every command does."""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path

from enade_bench.backends.factory import check_backend
from enade_bench.benchmarks.base import Benchmark
from enade_bench.benchmarks.registry import DEFAULT, Registry
from enade_bench.config import ExperimentConfig, load_config, output_dir
from enade_bench.dataset.loader import listing_invalid
from enade_bench.errors import UserError
from enade_bench.masking import add_vocabulary
from enade_bench.results.records import RunResult
from enade_bench.results.writable import check_output_dir
from enade_bench.runner.outputs import RunOutcome
from enade_bench.runner.plan import Experiment, RunOptions
from enade_bench.runner.run import load_backend


def load_experiment(
    config_path: Path, options: RunOptions, registry: Registry = DEFAULT, list_invalid: bool = False
) -> tuple[Benchmark, Experiment]:
    """Read a config and prepare its experiment with its benchmark; no model is loaded.

    ``list_invalid`` (``validate``): rows that fail validation are collected in
    ``exp.dataset.invalid`` instead of stopping at the first (the experiment's config
    keeps the file's own ``dataset.skip_invalid``).

    Everything a run checks is checked here: the config, the output folder, the data,
    the prompts and every strategy's prompts, and the model config as far as it can be
    without loading the model (:func:`~enade_bench.backends.factory.check_backend`; not
    when ``options.backend_factory`` supplies the model).
    """
    cfg = load_config(config_path)
    if options.sample is not None:  # --sample: the config's dataset.sample, recorded in the results
        cfg = cfg.model_copy(update={"dataset": cfg.dataset.model_copy(update={"sample": options.sample})})
    if not cfg.output.dir.strip():
        raise UserError(
            f"{config_path}: output.dir: expected a folder (write '.' for the config file's folder)"
        )
    check_output_dir(
        output_dir(cfg, config_path, options.output_dir),
        "--output-dir" if options.output_dir else f"{config_path}: output.dir",
    )
    benchmark = registry.for_config(cfg, config_path)
    # list_invalid: every broken row listed (as the run would report the first), none fatal here
    with listing_invalid() if list_invalid else nullcontext():
        exp = benchmark.prepare(cfg, config_path, options)
    add_vocabulary(vocabulary(exp))  # before the key is read: a key found in them is weak
    if options.backend_factory is None:
        strategies = exp.strategies
        check_backend(cfg.model, {s.method for s in strategies}, [s.id or cfg.name for s in strategies])
    return benchmark, exp


def vocabulary(exp: Experiment) -> list[str]:
    """The project's own words and the run's texts, which no secret's echo can be told from:
    the results' and the config's field names and values (provider names), the prompt
    templates, and every question's id, text, options and fields (a course ``Medicina``)."""
    texts = [
        json.dumps(RunResult.model_json_schema()),
        json.dumps(ExperimentConfig.model_json_schema()),
        exp.prompts.model_dump_json(),
    ]
    for q in exp.dataset.questions:
        texts += [q.id, q.stem, *q.options, *(str(v) for v in q.fields.values())]
    return texts


def run_config(config_path: Path, options: RunOptions, registry: Registry = DEFAULT) -> RunOutcome:
    """Prepare a config, load its model and run (or resume) every planned strategy."""
    benchmark, exp = load_experiment(config_path, options, registry)
    with exp.lock():
        return benchmark.run(load_backend(exp, options), options)
