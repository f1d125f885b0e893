"""The self-contained ``index.html``: tables as HTML, figures embedded as base64 PNG."""

from __future__ import annotations

import base64
import datetime as dt
import importlib.metadata
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import jinja2
import yaml

from enade_bench.report.browser import BrowserData, browser_data
from enade_bench.report.figures import FigureFile
from enade_bench.report.loader import RunEntry, experiments
from enade_bench.report.table import Table
from enade_bench.results.shared_paths import shared_values
from enade_bench.results.summary import as_object


@dataclass(frozen=True)
class Lead:
    """The tables that open the page, under their own heading.

    Attributes
    ----------
    tables : sequence of Table
        In order (the comparison: Table 1 with its groups, the pairs, the flips).
    heading : str
        The section's heading (``Verdict`` for an ENEM study's verdict).
    comparison : bool
        The lead compares the models: the per-run tables then mark no "best" in bold.
    figures : sequence of FigureFile
        Drawn at the head of the lead, before its tables (the comparison's forest plots and
        accuracies with their intervals), and not again under Figures.
    """

    tables: Sequence[Table] = ()
    heading: str = "Verdict"
    comparison: bool = False
    figures: Sequence[FigureFile] = ()


def _version() -> str:
    try:
        return importlib.metadata.version("enade-bench")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def shown_path(path: Path, folders: Sequence[Path]) -> str:
    """A results file as the report names it: from the results folder it was found in (that
    folder's name first), or its bare name; never a folder of the author's machine above it."""
    for folder in folders:
        try:
            inside = Path(path).resolve().relative_to(Path(folder).resolve())
        except (ValueError, OSError):
            continue
        return (Path(Path(folder).resolve().name) / inside).as_posix()
    return Path(path).name


def _shared_text(text: str, entries: Sequence[RunEntry], folders: Sequence[Path]) -> str:
    """A warning with each results file's path as :func:`shown_path` names it."""
    for e in entries:
        text = text.replace(str(e.path), shown_path(e.path, folders))
    return text


def _data_name(path: str) -> str:
    """A data file by its name (its sha256 beside it identifies it); a URL (``hf://``) as given."""
    return path if "://" in path else Path(path).name


def manifest(entries: Sequence[RunEntry], folders: Sequence[Path] = ()) -> dict[str, list[dict[str, object]]]:
    """Runs (one row per results file) and experiments (config, versions, data) for the report.

    Paths are shown as they may be shared (:mod:`enade_bench.results.shared_paths`): results
    files from their results folder, data files by name and sha256, the config's paths from
    the results folder.
    """
    runs: list[dict[str, object]] = []
    for e in entries:
        git = as_object(e.result.environment.get("git"))
        commit = str(git.get("commit") or "")[:12] + (" (dirty)" if git.get("dirty") else "")
        runs.append(
            {
                "experiment": e.experiment,
                "strategy": e.strategy,
                "model": e.model,
                "identity": e.result.model.summary,
                "seed": e.result.seed,
                "n": e.result.totals.n,
                "n_errors": e.n_errors,
                "python": e.result.environment.get("python", ""),
                "commit": commit,
                "path": shown_path(e.path, folders),
            }
        )
    exps: list[dict[str, object]] = []
    for name in experiments(entries):
        first = next(e for e in entries if e.experiment == name)
        libs = {k: v for k, v in as_object(first.result.environment.get("libraries")).items() if v}
        exps.append(
            {
                "name": name,
                "libraries": libs,
                "sources": [
                    {**src, "path": _data_name(src.get("path", ""))} for src in first.result.dataset.sources
                ],
                "filter_counts": first.result.dataset.filter_counts,
                "config": yaml.safe_dump(
                    shared_values(first.result.config, first.path.parent), sort_keys=False, allow_unicode=True
                ),
            }
        )
    return {"runs": runs, "experiments": exps}


def _figure(f: FigureFile) -> dict[str, str]:
    return {
        "name": f.name,
        "caption": f.caption,
        "data": base64.b64encode(f.png.read_bytes()).decode("ascii"),
    }


def _table(t: Table) -> dict[str, str]:
    return {"name": t.name, "title": t.title, "notes": t.notes, "html": t.to_html()}


def render_html(
    entries: Sequence[RunEntry],
    tables: Sequence[Table],
    figures: Sequence[FigureFile],
    folders: Sequence[Path],
    skipped: Sequence[str] = (),
    title: str = "enade-bench report",
    lead: Lead | Sequence[Table] = (),
    warnings: Sequence[str] = (),
    browser: BrowserData | None = None,
) -> str:
    """Render the report page (no external resources; the question browser's own script inline).

    ``warnings`` (runs with records in error, stale results files) open the page; then the
    ``lead`` tables (a study's verdict, the comparison) under their heading.  ``browser``:
    the question browser's records (default: those of ``entries``, :func:`browser_data`).
    """
    opening = lead if isinstance(lead, Lead) else Lead(tuple(lead))
    templates = resources.files("enade_bench.report").joinpath("templates")
    text = (templates / "index.html.j2").read_text("utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = env.from_string(text)
    return template.render(
        title=title,
        generated=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        version=_version(),
        n_runs=len(entries),
        folders=[Path(f).resolve().name for f in folders],
        skipped=list(skipped),
        tables=[_table(t) for t in tables],
        lead=[_table(t) for t in opening.tables],
        lead_heading=opening.heading,
        warnings=[_shared_text(w, entries, folders) for w in warnings],
        lead_figures=[_figure(f) for f in opening.figures],
        figures=[_figure(f) for f in figures if f not in opening.figures],
        browser_data=(browser or browser_data(entries)).to_json(),
        browser_js=(templates / "browser.js").read_text("utf-8"),
        question_js=(templates / "question.js").read_text("utf-8"),
        **manifest(entries, folders),
    )
