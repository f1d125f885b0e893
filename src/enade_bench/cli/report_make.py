"""What ``enade-bench report`` does (:mod:`enade_bench.cli.report_cmd` is its parser): imported
only when the command runs, since it needs the report stack (pandas, matplotlib).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from enade_bench.benchmarks.base import ReportBenchmark, ReportOptions
from enade_bench.benchmarks.commands import extending
from enade_bench.benchmarks.registry import Registry
from enade_bench.compare.study import comparison_lead, study_comparison
from enade_bench.compare.table import from_entries, grouping_fields
from enade_bench.errors import UserError
from enade_bench.report.build import write_report
from enade_bench.report.folder import ReportFolder
from enade_bench.report.html import Lead
from enade_bench.report.loader import RunEntry, load_results
from enade_bench.report.section import Section
from enade_bench.results.summary import as_object
from enade_bench.results.writable import check_output_dir


def benchmark_of(entry: RunEntry) -> str:
    """The benchmark a run was made with (``dataset.benchmark``; ``preset`` in older files)."""
    dataset = as_object(entry.result.config.get("dataset"))
    name = dataset.get("benchmark", dataset.get("preset"))
    return str(name) if name else "generic"


def exam_sections(
    entries: list[RunEntry], registry: Registry, options: ReportOptions, folder: Path
) -> list[Section]:
    """The section of every exam among ``entries`` whose benchmark has analyses of its own."""
    names = list(dict.fromkeys(benchmark_of(e) for e in entries))
    sections = []
    for name in names:
        try:
            benchmark = registry.get(name)
        except UserError as exc:
            sections.append(Section(notes=[f"runs of benchmark '{name}': {exc}"]))
            continue
        if isinstance(benchmark, ReportBenchmark):
            mine = [e for e in entries if benchmark_of(e) == name]
            sections.append(benchmark.report_section(mine, options, folder))
    return sections


def check_compare_by(entries: list[RunEntry], by: list[str]) -> None:
    """``--compare-by FIELD``: a field of the runs' questions, checked before the report folder is touched."""
    if not by:
        return

    fields = grouping_fields(from_entries(entries))
    unknown = [f for f in by if f not in fields]
    if unknown:
        raise UserError(
            f"--compare-by {', '.join(unknown)}: no such field (fields: {', '.join(fields) or 'none'})"
        )


def handle(args: argparse.Namespace) -> int:
    check_output_dir(args.out, "--out")
    folder = ReportFolder.open(args.out, "--out")
    data = {name: folder for line in extending("report") for name, folder in line.report_data(args).items()}
    entries = load_results(args.results)
    check_compare_by(entries, args.compare_by)
    with folder:
        options = ReportOptions(seed=args.seed, data=data)
        registry = Registry(args.include_path)
        sections = (
            [] if args.no_psychometrics else exam_sections(entries, registry, options, args.out / "figures")
        )
        lead = Lead()
        if len({e.result.experiment for e in entries}) >= 2:
            section, lead, _ = comparison_lead(
                study_comparison(entries, args.out, args.compare_by, args.adjust, 0.05, allow_errors=True)
            )
            sections.insert(0, section)
        report = write_report(entries, args.out, sections, args.results, args.title, lead)
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for note in report.notes:
        print(f"note: {note}")
    print(
        f"read {len(report.entries)} results file(s); wrote {len(report.tables)} tables, "
        f"{len(report.figures)} figures"
    )
    print(f"wrote {report.index}")
    return 0
