"""A report table: the numbers (CSV) and their formatted view (LaTeX booktabs, HTML).

Each :class:`Table` keeps two frames: ``data``, the long, numeric frame written
to ``<name>.csv`` (full precision, one row per number's context), and
``display``, a small frame of formatted strings laid out for reading, which
becomes ``<name>.tex`` (``booktabs``, ready to ``\\input``) and the HTML table.
``bold`` marks cells of ``display`` to emphasise (e.g. the best per column).
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from enade_bench.results.csv_safe import write_csv
from enade_bench.results.safe_write import file_stem, write_text

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "θ": r"$\theta$",
    "χ": r"$\chi$",
    "²": r"$^2$",
    "≥": r"$\geq$",
    "×": r"$\times$",
    "–": "--",
}
_LATEX_TABLE = str.maketrans(_LATEX_SPECIAL)
_NUMERIC = re.compile(r"^[\d\s.\-–\[\],%<>n=/()]*$")


#: Rows a table shows on the page (its CSV and LaTeX files hold every row).
HTML_ROWS = 200


@dataclass
class Table:
    """One table of the report.

    Attributes
    ----------
    name : str
        File stem (``table1`` → ``table1.csv``, ``table1.tex``).
    title : str
        Caption.
    data : DataFrame
        Numbers, written to CSV.
    display : DataFrame
        Formatted strings (index = row labels, columns = header).
    bold : DataFrame, optional
        Booleans shaped like ``display``; True cells are set in bold.
    notes : str
        One or two sentences under the table (how to read it).
    """

    name: str
    title: str
    data: pd.DataFrame
    display: pd.DataFrame
    bold: pd.DataFrame | None = None
    notes: str = ""
    files: dict[str, Path] = field(default_factory=dict)

    def is_bold(self, row: int, col: int) -> bool:
        """Whether cell (``row``, ``col``) of ``display`` is emphasised."""
        return self.bold is not None and bool(self.bold.iat[row, col])

    def to_latex(self) -> str:
        """A ``table`` environment with a ``booktabs`` tabular (needs ``\\usepackage{booktabs}``)."""
        index_names = [str(n) if n is not None else "" for n in self.display.index.names]
        n_index = len(index_names)
        header = [latex_escape(n) for n in index_names] + [latex_escape(str(c)) for c in self.display.columns]
        lines = [
            "\\begin{table}[htbp]",
            "\\centering",
            f"\\caption{{{latex_escape(self.title)}}}",
            f"\\label{{tab:{self.name}}}",
            "\\begin{tabular}{" + "l" * n_index + "".join(self._aligns()) + "}",
            "\\toprule",
            " & ".join(header) + " \\\\",
            "\\midrule",
        ]
        bold = (
            np.zeros(self.display.shape, dtype=bool)
            if self.bold is None
            else self.bold.to_numpy(dtype=bool).reshape(self.display.shape)
        )
        # rows as arrays, not iterrows (a Series per row: 60 s for the 150,000 flips of 120 models)
        for label, row, strong in zip(
            self.display.index, self.display.to_numpy(dtype=object), bold, strict=True
        ):
            labels = list(label) if isinstance(label, tuple) else [label]
            cells = [latex_escape(str(v)) for v in labels]
            for value, emphasised in zip(row.tolist(), strong.tolist(), strict=True):
                text = latex_escape(str(value))
                cells.append(f"\\textbf{{{text}}}" if emphasised else text)
            lines.append(" & ".join(cells) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}"]
        if self.notes:
            lines.append(f"\\par\\smallskip{{\\footnotesize {latex_escape(self.notes)}}}")
        lines.append("\\end{table}")
        return "\n".join(lines) + "\n"

    def _aligns(self) -> list[str]:
        """``r`` for columns of numbers and intervals, ``l`` for text."""
        return [
            "r" if all(_NUMERIC.match(str(v)) for v in self.display[col].tolist()) else "l"
            for col in self.display.columns
        ]

    def to_html(self) -> str:
        """An HTML ``<table>`` (escaped; emphasised cells in ``<strong>``).

        At most :data:`HTML_ROWS` rows: a longer table (the item flips of ten models) ends
        with a row naming its CSV file, which holds them all; the page's question browser
        filters the records themselves.
        """
        names = [str(n) if n is not None else "" for n in self.display.index.names]
        head = "".join(f"<th>{html.escape(n)}</th>" for n in names)
        head += "".join(f"<th>{html.escape(str(c))}</th>" for c in self.display.columns)
        body = []
        for i, (label, row) in enumerate(self.display.head(HTML_ROWS).iterrows()):
            labels = list(label) if isinstance(label, tuple) else [label]
            cells = "".join(f'<th scope="row">{html.escape(str(v))}</th>' for v in labels)
            for j, value in enumerate(row.tolist()):
                text = html.escape(str(value))
                cells += f"<td><strong>{text}</strong></td>" if self.is_bold(i, j) else f"<td>{text}</td>"
            body.append(f"<tr>{cells}</tr>")
        if len(self.display) > HTML_ROWS:
            width = len(names) + len(self.display.columns)
            body.append(
                f'<tr><td colspan="{width}" class="more">… {len(self.display) - HTML_ROWS} more rows in '
                f"tables/{html.escape(self.name)}.csv</td></tr>"
            )
        return (
            f'<table class="data" id="table-{html.escape(self.name)}">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        )

    def write(self, folder: Path) -> dict[str, Path]:
        """Write ``<name>.csv`` and ``<name>.tex`` into ``folder``; return the paths.

        Through the one safe writer (:mod:`enade_bench.results.safe_write`); a name that is
        not one safe file name (a field name from a results file made elsewhere) is mapped
        to one, and said.
        """
        stem = file_stem(self.name, "table")
        csv_path = folder / f"{stem}.csv"
        tex_path = folder / f"{stem}.tex"
        write_csv(csv_path, self.data, index=False, float_format="%.10g", na_rep="", lineterminator="\n")
        write_text(tex_path, self.to_latex())
        self.files = {"csv": csv_path, "tex": tex_path}
        return self.files


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters in plain text."""
    return text.translate(_LATEX_TABLE)


def fmt(value: float | None, digits: int = 3) -> str:
    """A number with ``digits`` decimals; an en dash for missing or non-finite values."""
    if value is None or not math.isfinite(float(value)):
        return "–"
    return f"{float(value):.{digits}f}"


def fmt_interval(value: float | None, low: float | None, high: float | None, digits: int = 3) -> str:
    """``value [low, high]`` (an en dash when ``value`` is missing)."""
    if value is None or not np.isfinite(value):
        return "–"
    return f"{fmt(value, digits)} [{fmt(low, digits)}, {fmt(high, digits)}]"


def fmt_p(value: float | None) -> str:
    """A p-value: three significant digits, ``<0.001`` below that."""
    if value is None or not math.isfinite(float(value)):
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3f}"
