"""The exam-file lint's findings on every exam file the project ships or tests against (issue 60).

For each file: the questions loaded, the findings of each check, and what
``dataset.stem_in_option: repair`` does (stems changed, rows left as they are).  Every
``stem_in_option`` and ``missing_context`` finding printed here was read by hand
(docs/bring_your_own_exam.md gives the counts and the verdicts).

    .venv/bin/python bench/lint_exam_files.py [--show CHECK ...]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

from enade_bench.benchmarks.enade import PRESET as ENADE
from enade_bench.benchmarks.enem import PRESET as ENEM
from enade_bench.config import DatasetConfig, load_config
from enade_bench.dataset import load_dataset

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "dataset" / "data"
SHARED = ROOT.parent / "shared" / "data"
INLINE = {"stem": "Texto", "answer": "Resposta Correta", "year": "Ano", "course": "Área"}
PROGRESS = {"id": "questao", "stem": "enunciado", "answer": "gabarito", "year": "ano", "course": "area"}
REVALIDA = {"id": "numero", "stem": "enunciado", "options": "alternativas", "answer": "gabarito"}
#: (label, dataset config, preset): the files, as their tests load them.
FILES: list[tuple[str, dict[str, Any], Any]] = [
    (
        "ENEM 2011-2023 pt-br (shared)",
        {"path": str(SHARED / "enem/questions/pt-br/ENEM_*.csv"), "benchmark": "enem", "skip_invalid": True},
        ENEM,
    ),
    ("ENADE demo", {"path": str(ROOT / "data/enade_demo.csv"), "benchmark": "enade"}, ENADE),
    (
        "Teste de Progresso shape",
        {
            "path": str(DATA / "teste_de_progresso/teste_de_progresso_2023.csv"),
            "columns": PROGRESS,
            "options_in_text": {"allow_other_counts": True},
            "skip_invalid": True,
        },
        None,
    ),
    (
        "residency exam (options in text)",
        {
            "path": str(DATA / "options_in_text/*.csv"),
            "columns": INLINE,
            "id_template": "{file_stem}:{Número}",
            "options_in_text": {},
            "skip_invalid": True,
        },
        None,
    ),
    (
        "OAB shape",
        {
            "path": str(DATA / "oab_shape/questoes.jsonl"),
            "columns": {"stem": "question", "options": "options"},
        },
        None,
    ),
    (
        "Revalida shape",
        {
            "path": str(DATA / "revalida_shape/questoes.json"),
            "columns": {k: v for k, v in REVALIDA.items() if k != "answer"},
            "answer_key": {"path": str(DATA / "revalida_shape/gabarito.json"), "match": "position"},
            "annulled_answers": ["-"],
        },
        None,
    ),
    ("Revalida cut stems", {"path": str(DATA / "revalida_cut/questoes.json"), "columns": REVALIDA}, None),
]
YAMLS = [DATA / "pdf_debris/exam.yaml", DATA / "enem2025_shape/exam.yaml", DATA / "licensing/licensing.yaml"]


def _configs() -> list[tuple[str, DatasetConfig, Any, Path | None]]:
    out = [(label, DatasetConfig.model_validate(raw), preset, None) for label, raw, preset in FILES]
    for path in YAMLS:
        out.append((path.parent.name, load_config(path).dataset, None, path.parent))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--show", nargs="*", default=["stem_in_option"], help="checks whose findings to print"
    )
    args = parser.parse_args()
    for label, cfg, preset, base in _configs():
        if label.startswith("ENEM 2011") and not SHARED.exists():
            print(f"{label}: ../shared/data absent, skipped")
            continue
        given = {"preset": preset} if preset else {}
        data = load_dataset(cfg, base, **given)
        repaired = load_dataset(cfg.model_copy(update={"stem_in_option": "repair"}), base, **given)
        found = Counter(w.check for w in data.warnings)
        done = Counter("repaired" if f.after is not None and not f.why else "left" for f in repaired.fixes)
        print(
            f"{label}: {len(data.questions)} questions; {dict(found) or 'no findings'}; "
            f"repair: {done['repaired']} stems changed, {done['left']} left as they are"
        )
        for w in data.warnings:
            if w.check in args.show:
                print(f"  {w}")


if __name__ == "__main__":
    main()
