"""E-EVAL as a benchmark plug-in: its loader, prompts and extraction on the core runner.

An E-EVAL experiment is an ordinary :class:`~enade_bench.config.ExperimentConfig`
with ``dataset.preset: eeval`` and ``dataset.path`` naming the E-EVAL root or a
split folder.  :class:`EEvalBenchmark` builds a core
:class:`~enade_bench.runner.run.Experiment` whose hooks put E-EVAL prompts
(``prompt_fn_for``) and the Chinese extraction cascade (``extract_fn``) in place
of ENADE's, so resume, the intermediate log, results JSON/CSV and the
per-subject and per-level breakdowns (the questions' ``subject`` and ``level``
fields) all come from the core; :meth:`EEvalBenchmark.run` adds the E-EVAL summary files.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from enade_bench.backends.factory import check_capabilities, create_backend
from enade_bench.config import ExperimentConfig
from enade_bench.eeval.extraction import extract_chinese
from enade_bench.eeval.loader import EEvalData, load_eeval
from enade_bench.eeval.prompts import EEvalTemplate, build_eeval_prompt, load_templates
from enade_bench.eeval.report import eval_split, subject_summary, subjects_csv
from enade_bench.eeval.settings import EEvalSetting, plan_settings
from enade_bench.errors import UserError
from enade_bench.prompts.builder import PromptParts
from enade_bench.prompts.templates import PromptSet, Templates
from enade_bench.results.store import atomic_write_text, dump_json, result_paths
from enade_bench.runner.execute import PromptFn
from enade_bench.runner.outputs import RunOutcome
from enade_bench.runner.run import Experiment, RunOptions, run_loaded
from enade_bench.runner.work import WorkItem
from enade_bench.strategies.registry import Strategy

#: E-EVAL's grouping fields: the subject key and its level (``primary``, ``middle``, ``high``).
FIELDS = ("subject", "level")


def make_prompt_fn_for(
    data: EEvalData, templates: dict[str, EEvalTemplate]
) -> Callable[[Strategy], PromptFn]:
    """The ``Experiment.prompt_fn_for`` hook: one prompt builder per setting."""

    def prompt_fn_for(strategy: Strategy) -> PromptFn:
        if not isinstance(strategy, EEvalSetting):
            raise UserError(f"strategy {strategy.id}: not an E-EVAL setting (use ao<k> or cot<k>)")
        if strategy.k and data.split == "dev":
            raise UserError("E-EVAL: k-shot demonstrations come from the dev split; evaluate val or test")
        template = templates[strategy.kind]

        def build(item: WorkItem) -> PromptParts:
            subject = data.subjects[str(item.question.fields["subject"])]
            demos = data.demos.get(subject.key, ())
            return build_eeval_prompt(template, subject, item.question.stem, item.options, demos, strategy.k)

        return build

    return prompt_fn_for


def load_eeval_experiment(cfg: ExperimentConfig, options: RunOptions) -> tuple[Experiment, list[Strategy]]:
    """Load data, templates and model for an E-EVAL config; check before any model call.

    ``options.strategies`` holds setting ids (default: ``ao0``, ``ao5``, ``cot5``);
    ``options.limit`` keeps the first N questions *of each subject*.
    """
    if cfg.dataset.preset != "eeval":
        raise UserError(f"dataset.preset: got '{cfg.dataset.preset}'; an E-EVAL run needs 'eeval'")
    settings = plan_settings(options.strategies, cfg.evaluation)
    data = load_eeval(cfg.dataset, limit_per_subject=options.limit)
    templates, paths = load_templates(Path(cfg.prompts.dir))
    if any(s.k for s in settings) and data.split == "dev":
        raise UserError("E-EVAL: k-shot demonstrations come from the dev split; evaluate val or test")
    header = templates["ao"].header
    prompts = PromptSet(
        templates=Templates(instruction=header, instruction_log_prob=header),
        examples=(),
        source=paths,
    )
    factory = options.backend_factory or (lambda c: create_backend(c.model))
    backend = factory(cfg)
    check_capabilities(backend, {s.method for s in settings}, [s.id or "" for s in settings])
    exp = Experiment(
        config=cfg,
        dataset=data.dataset,
        prompts=prompts,
        backend=backend,
        output_dir=options.output_dir or Path(cfg.output.dir),
        prompt_fn_for=make_prompt_fn_for(data, templates),
        extract_fn=extract_chinese,
        breakdown_fields=FIELDS,
    )
    return exp, list(settings)


def run_eeval(exp: Experiment, strategies: list[Strategy], options: RunOptions) -> RunOutcome:
    """Run each setting with the core runner; write the E-EVAL summary of each.

    Besides the core files, each setting writes ``{name}_{setting}_subjects.csv``
    and ``{name}_{setting}_eeval.json`` (per-subject and per-level accuracy,
    extraction shares) when the split has answers (val, dev); Table 1 likewise.
    """
    # The limit was applied per subject when loading; the core would cut the whole list.
    per_run = dataclasses.replace(options, limit=None)
    split = eval_split(exp.dataset.sources)
    outcome = run_loaded(exp, strategies, per_run, table1=split != "test")
    if split == "test":
        return outcome
    written: list[Path] = []
    for strategy, result in zip(strategies, outcome.results, strict=True):
        paths = result_paths(exp.output_dir, exp.config.name, strategy.id)
        stem = paths["results"].name.removesuffix("_results.json")
        summary = subject_summary(result)
        for path, text in (
            (exp.output_dir / f"{stem}_eeval.json", dump_json(summary.model_dump(mode="json"))),
            (exp.output_dir / f"{stem}_subjects.csv", subjects_csv(summary)),
        ):
            atomic_write_text(path, text)
            written.append(path)
    return RunOutcome.combine([outcome], *written)


@dataclass(frozen=True)
class EEvalBenchmark:
    """``dataset.preset: eeval``: settings ``ao<k>``/``cot<k>`` instead of S1–S7."""

    name: str = "eeval"

    def load(
        self, cfg: ExperimentConfig, config_path: Path, options: RunOptions
    ) -> tuple[Experiment, list[Strategy]]:
        return load_eeval_experiment(cfg, options)

    def run(self, exp: Experiment, strategies: list[Strategy], options: RunOptions) -> RunOutcome:
        return run_eeval(exp, strategies, options)


BENCHMARK = EEvalBenchmark()
