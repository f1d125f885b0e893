"""``enade-bench validate CONFIG`` (and ``run --dry-run``): check everything, call no model.

Prints the rows loaded, removed and rejected (with reasons), the model calls and prompt
tokens per strategy against the model's context, and one rendered prompt per strategy
(:mod:`enade_bench.runner.dry_run`).  Exit status 2 when anything would fail or be
misread.

A plug-in (a benchmark folder named by the config or by ``--include-path``, or an
installed entry-point plug-in for a benchmark or a backend) is Python code, and checking
a config that names one imports it, so its code runs: :func:`print_plugins` says which
plug-in modules were imported, and from which file.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING

from enade_bench.cli.options import add_include_path, add_selection, folder_arg, run_options
from enade_bench.errors import UserError

if TYPE_CHECKING:  # imported when the command runs: --help loads no benchmark, data or model code
    from enade_bench.benchmarks.registry import Registry
    from enade_bench.runner.dry_run import DryRun
    from enade_bench.runner.plan import Experiment, RunOptions

#: Characters of each strategy's example prompt that are printed (``--full-prompts``: all).
PROMPT_CHARS = 1200
#: Module-name prefix of benchmark folders imported as plug-ins (``benchmarks.registry.load_folder``).
FOLDER_PLUGIN_PREFIX = "enade_bench_plugin_"
#: Entry-point groups through which installed packages add code (benchmarks, backends).
PLUGIN_GROUPS = ("enade_bench.benchmarks", "enade_bench.backends")
#: ``validate --help``: what it does and does not do.
TRUST_NOTE = (
    "Check a config, its data, prompts and model without calling the model. A plug-in is "
    "Python code that runs when it is imported: a benchmark folder named by the config "
    "(dataset.benchmark: ./my_exam/) or by --include-path, or an installed entry-point plug-in, "
    "is imported (run) by validate as by run. Validate only configs and plug-ins you trust; "
    "validate prints which plug-in code it imported (module and file)."
)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "validate",
        help="check a config, its data, prompts and model without inference (plug-ins' code runs)",
        description=TRUST_NOTE,
    )
    parser.add_argument("config", type=Path, help="experiment YAML file")
    add_selection(parser, "S1–S6")
    parser.add_argument(
        "--output-dir",
        type=folder_arg,
        help="override output.dir (as run's: the logs a run would resume are looked for there)",
    )
    parser.add_argument("--full-prompts", action="store_true", help="print the example prompts in full")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="the exam-file lint's warnings (PDF debris: footers, cut stems, image "
        "markers…) are problems: exit 2",
    )
    add_include_path(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from enade_bench.benchmarks.registry import Registry  # noqa: PLC0415 (not at --help)

    options = run_options(args)
    return validate(args.config, options, Registry(args.include_path), args.full_prompts, args.strict)


def validate(
    config: Path, options: RunOptions, registry: Registry, full_prompts: bool = False, strict: bool = False
) -> int:
    """Check ``config`` as a run with ``options`` would, print what it would do; 0 or 2.

    ``strict``: the lint's warnings (:mod:`enade_bench.dataset.lint`) are problems.
    """
    from enade_bench.benchmarks.load import load_experiment  # noqa: PLC0415 (not at --help)
    from enade_bench.dataset.loader import NoQuestionLeft  # noqa: PLC0415
    from enade_bench.runner.dry_run import dry_run  # noqa: PLC0415

    before = set(sys.modules)
    try:
        try:
            _, exp = load_experiment(config, options, registry, list_invalid=True)
        except NoQuestionLeft as exc:  # every row failed: list them all, as when only some fail
            print_rejected(exc.counts, exc.invalid, skipped=False)
            raise
        report = dry_run(exp, options.resume)
    finally:  # also when the plug-in's own check fails: its code ran
        print_plugins(before)
    print_dry_run(config, report, full_prompts)
    if exp.dataset.key_join is not None:
        print(exp.dataset.key_join)
    print_strata(exp)
    files = [Path(s["path"]).name for s in exp.dataset.sources if "role" not in s]
    if len(files) > 1:
        print(f"data files, in the order read: {', '.join(files)}")
    for fix in exp.dataset.fixes:
        print(f"fix: {fix}")
    warnings = [str(w) for w in exp.dataset.warnings]
    print_warnings(warnings, strict)
    if exp.dataset.set_aside:
        print(
            f"exam-file lint: {len(exp.dataset.set_aside)} more finding(s) on questions read but left out "
            "(filters, dataset.exclude, stem_in_option, a sample) or repaired: not problems"
        )
    problems = report.problems + ([f"lint: {w}" for w in warnings] if strict else [])
    if problems:
        for problem in problems:
            print(f"problem: {problem}")
        raise UserError(f"{config}: {len(problems)} problem(s) found (listed above); nothing was run")
    calls = sum(s.calls for s in report.strategies)
    print(f"ok: {config} is ready; a run would make {calls} model call(s)")
    return 0


def print_rejected(counts: dict[str, int], invalid: list[str], skipped: bool) -> None:
    """The data line and every row that fails validation, with its reason."""
    removed = ", ".join(
        f"{v} {k.removeprefix('removed_')}" for k, v in counts.items() if k.startswith("removed_") and v
    )
    print(
        f"data: {counts.get('loaded', 0)} row(s) read, {counts.get('kept', 0)} question(s) kept"
        + (f"; removed: {removed}" if removed else "")
    )
    rejected = "skipped (dataset.skip_invalid)" if skipped else "rejected"
    print(f"rows that fail validation: {len(invalid)} {rejected}")
    for row in invalid:
        print(f"  {row}")


def print_dry_run(config: Path, report: DryRun, full_prompts: bool) -> None:
    """The dry run as text."""
    print_rejected(report.counts, report.invalid_rows, report.skip_invalid)
    context = (
        "unknown"
        if report.context_length is None
        else (f"{report.context_length} tokens ({report.context_source})")
    )
    print(f"model context: {context}; max_new_tokens {report.max_new_tokens}")
    print("strategy  items  calls  prompt tokens min/median/max  input tokens  output tokens (at most)")
    for s in report.strategies:
        mark = " (estimated: 4 characters per token)" if s.estimated else ""
        print(
            f"{s.label:8}  {s.items:5}  {s.calls:5}  {s.tokens_min:>6}/{s.tokens_median:>6.0f}/{s.tokens_max:<6}"
            f"       {s.input_tokens:12}  {s.output_tokens_max:>10}{mark}"
        )
    for note in report.notes:
        print(f"note: {note}")
    for s in report.strategies:
        text = (
            s.example_prompt
            if full_prompts or len(s.example_prompt) <= PROMPT_CHARS
            else (
                s.example_prompt[:PROMPT_CHARS]
                + f"\n[… {len(s.example_prompt) - PROMPT_CHARS} more characters; "
                "--full-prompts prints all]"
            )
        )
        print(f"--- {s.label}: the prompt of question {s.example_id}, as the model reads it ---")
        print(text)


def print_strata(exp: Experiment) -> None:
    """A stratified sample's questions per value of its field (``--sample N --stratify FIELD``)."""
    from enade_bench.dataset.filters import field_value  # noqa: PLC0415 (not at --help)
    from enade_bench.dataset.sample import EMPTY  # noqa: PLC0415

    sample = exp.config.dataset.sample
    if sample is None or sample.stratify is None:
        return
    values = Counter(str(field_value(q, sample.stratify)).strip() or EMPTY for q in exp.dataset.questions)
    split = ", ".join(f"{value} {n}" for value, n in sorted(values.items()))
    print(f"sample: {sum(values.values())} question(s) (seed {sample.seed}) by {sample.stratify}: {split}")


def print_warnings(warnings: list[str], strict: bool) -> None:
    """The lint's findings on the exam file, one ``warning:`` line each."""
    if not warnings:
        return
    what = "problems (--strict)" if strict else "warnings (--strict makes them problems)"
    print(f"exam-file lint: {len(warnings)} {what}; docs/bring_your_own_exam.md says what each means")
    for warning in warnings:
        print(f"warning: {warning}")


def plugins_imported(before: set[str]) -> list[tuple[str, str]]:
    """``(module, file)`` of each plug-in module imported since ``before`` (a ``sys.modules`` snapshot).

    Plug-in modules are benchmark folders (:data:`FOLDER_PLUGIN_PREFIX`) and the modules
    installed packages name as entry points (:data:`PLUGIN_GROUPS`), with their sub-modules.
    """
    roots = {ep.value.partition(":")[0] for group in PLUGIN_GROUPS for ep in entry_points(group=group)}
    found = []
    for name in sorted(set(sys.modules) - before):
        top = name.partition(".")[0]
        if top.startswith(FOLDER_PLUGIN_PREFIX) or any(name == r or name.startswith(r + ".") for r in roots):
            module = sys.modules.get(name)
            found.append((name, str(getattr(module, "__file__", None) or "(no file)")))
    return found


def print_plugins(before: set[str]) -> None:
    """One ``plug-in code imported:`` line per plug-in module imported since ``before``."""
    for name, path in plugins_imported(before):
        print(f"plug-in code imported (it ran): {name} ({path})")
