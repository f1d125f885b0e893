"""E-EVAL as a benchmark plug-in: its loader, prompts and extraction on the core runner.

An E-EVAL experiment is an ordinary :class:`~enade_bench.config.ExperimentConfig`
with ``dataset.benchmark: eeval`` and ``dataset.path`` naming the E-EVAL root or a
split folder.  :class:`EEvalBenchmark` builds a core
:class:`~enade_bench.runner.run.Experiment` whose hooks put E-EVAL prompts
(``prompt_fn_for``) and the Chinese extraction cascade (``extract_fn``) in place
of ENADE's, so resume, the intermediate log, results JSON/CSV and the
per-subject and per-level breakdowns (the questions' ``subject`` and ``level``
fields) all come from the core; :meth:`EEvalBenchmark.run` adds the E-EVAL summary files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from enade_bench.benchmarks.eeval.extraction import extract_chinese
from enade_bench.benchmarks.eeval.loader import EEvalData, load_eeval
from enade_bench.benchmarks.eeval.prompts import EEvalTemplate, build_eeval_prompt, load_templates
from enade_bench.benchmarks.eeval.report import eval_split, subject_summary, subjects_csv
from enade_bench.benchmarks.eeval.settings import LEADERBOARD_SETTINGS, EEvalSetting, plan_settings
from enade_bench.config import ExperimentConfig, input_base, output_dir, resolve_input
from enade_bench.errors import UserError
from enade_bench.prompts.builder import PromptParts
from enade_bench.prompts.templates import PromptSet, Templates
from enade_bench.results.store import atomic_write_text, dump_json
from enade_bench.runner.outputs import RunOutcome
from enade_bench.runner.plan import Experiment, PromptFn, RunOptions
from enade_bench.runner.run import run_experiment
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


PROMPTS = Path(__file__).parent / "prompts"


def prepare_eeval(cfg: ExperimentConfig, source: Path, options: RunOptions) -> Experiment:
    """Data, templates and settings of an E-EVAL config, all checked; no model is loaded.

    ``options.strategies`` holds setting ids (default: ``ao0``, ``ao5``, ``cot5``);
    ``options.limit`` keeps the first N questions *of each subject*. The templates are
    the shipped ones unless ``prompts.dir`` names a folder with both files.
    """
    settings = plan_settings(options.strategies, cfg.evaluation)
    if cfg.dataset.sample is not None:
        raise UserError(
            f"{source}: dataset.sample (--sample): E-EVAL keeps its subjects whole; use --limit N per subject"
        )
    base = input_base(cfg.dataset.path, source)
    data = load_eeval(
        cfg.dataset.model_copy(update={"path": str(base / cfg.dataset.path) if base else cfg.dataset.path}),
        limit_per_subject=options.limit,
    )
    if cfg.prompts.preset is not None:
        raise UserError(
            f"{source}: prompts.preset: E-EVAL ships one prompt set; use prompts.dir for your own"
        )
    folder = resolve_input(cfg.prompts.dir, source) if cfg.prompts.dir is not None else PROMPTS
    templates, paths = load_templates(folder)
    if any(s.k for s in settings) and data.split == "dev":
        raise UserError("E-EVAL: k-shot demonstrations come from the dev split; evaluate val or test")
    header = templates["ao"].header
    prompts = PromptSet(
        templates=Templates(instruction=header, instruction_log_prob=header), examples=(), source=paths
    )
    exp = Experiment(
        config=cfg,
        dataset=data.dataset,
        prompts=prompts,
        output_dir=output_dir(cfg, source, options.output_dir),
        strategies=list(settings),
        prompt_fn_for=make_prompt_fn_for(data, templates),
        extract_fn=extract_chinese,
        breakdown_fields=FIELDS,
    )
    return exp.planned()


def run_eeval(exp: Experiment, options: RunOptions) -> RunOutcome:
    """Run each setting with the core runner; write the E-EVAL summary of each.

    Besides the core files, each setting writes ``{name}_{setting}_subjects.csv``
    and ``{name}_{setting}_eeval.json`` (per-subject and per-level accuracy,
    extraction shares) when the split has answers (val, dev); Table 1 likewise.
    """
    split = eval_split(exp.dataset.sources)
    outcome = run_experiment(exp, options, table1=split != "test")
    if split == "test":
        return outcome
    written: list[Path] = []
    done = {r.strategy.id: r for r in outcome.results}
    for plan in exp.plans:
        result = done.get(plan.strategy.id)
        if result is None:  # a batch run still waiting for its answers
            continue
        summary = subject_summary(result)
        for path, text in (
            (plan.paths.sibling("eeval.json"), dump_json(summary.model_dump(mode="json"))),
            (plan.paths.sibling("subjects.csv"), subjects_csv(summary)),
        ):
            atomic_write_text(path, text)
            written.append(path)
    return RunOutcome.combine([outcome], *written)


@dataclass(frozen=True)
class EEvalBenchmark:
    """``dataset.benchmark: eeval``: settings ``ao<k>``/``cot<k>`` instead of S1–S7."""

    name: str = "eeval"
    #: What ``enade-bench study`` runs per model: the published leaderboard's settings.
    study_strategies: tuple[str, ...] = LEADERBOARD_SETTINGS

    def prepare(self, cfg: ExperimentConfig, source: Path, options: RunOptions) -> Experiment:
        return prepare_eeval(cfg, source, options)

    def run(self, exp: Experiment, options: RunOptions) -> RunOutcome:
        return run_eeval(exp, options)


BENCHMARK = EEvalBenchmark()
