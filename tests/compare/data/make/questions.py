"""Write the 10 ENEM 2022 humanities questions the harness fixtures were made from.

The 10 shortest questions (stem plus options) with an answer key of
``ENEM_2022_CH_CO_PROVA_1062.csv``, as JSONL with the fields both harness tasks read:
``id``, ``year``, ``area``, ``question``, ``choices`` (A–E texts), ``answer`` (letter),
``gold`` (its index).  Usage: ``python questions.py ENEM_DATA_DIR OUT.jsonl``.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

LETTERS = "ABCDE"


def main(enem: Path, out: Path) -> None:
    path = enem / "questions" / "pt-br" / "ENEM_2022_CH_CO_PROVA_1062.csv"
    with path.open(encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["answer"] in LETTERS]
    rows.sort(key=lambda r: (len(r["body"]) + sum(len(r[k]) for k in LETTERS), int(r["question_number"])))
    with out.open("w", encoding="utf-8") as f:
        for r in sorted(rows[:10], key=lambda r: int(r["question_number"])):
            doc = {
                "id": f"ENEM_2022_CH_{r['question_number']}",
                "year": r["year"],
                "area": r["test"],
                "question": r["body"],
                "choices": [r[k] for k in LETTERS],
                "answer": r["answer"],
                "gold": LETTERS.index(r["answer"]),
            }
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
