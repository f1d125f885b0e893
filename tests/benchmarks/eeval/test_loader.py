"""The E-EVAL layout loads through the core dataset layer, cells as text, nothing dropped."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.benchmarks.eeval.helpers import raw_rows

from enade_bench.benchmarks.eeval.loader import load_eeval
from enade_bench.benchmarks.eeval.subjects import parse_subject_file, subject_from_key
from enade_bench.config import DatasetConfig
from enade_bench.errors import UserError


def _cfg(path: Path, **kw: object) -> DatasetConfig:
    return DatasetConfig(path=str(path), benchmark="eeval", **kw)  # type: ignore[arg-type]


def test_val_split_every_row_with_subject_and_level(eeval_root: Path) -> None:
    data = load_eeval(_cfg(eeval_root / "val"))
    files = sorted((eeval_root / "val").glob("*_val.csv"))
    expected = {f"{f.stem.removesuffix('_val').lower()}/{r['id']}": r for f in files for r in raw_rows(f)}
    got = {q.id: q for q in data.dataset.questions}
    assert data.split == "val"
    assert set(got) == set(expected)
    assert len(data.subjects) == len(files) == 23
    for qid, row in expected.items():
        q = got[qid]
        assert q.answer == row["answer"].strip()
        assert q.options == tuple(row[c].strip() for c in "ABCD" if row[c].strip())
        assert list(q.fields) == ["subject", "level"]  # E-EVAL's own fields, not ENADE's
        assert q.course == q.component == ""
        assert q.fields["subject"] == qid.split("/")[0]
        assert q.fields["level"] in {"primary", "middle", "high"}
        assert str(q.fields["subject"]).startswith(f"{q.fields['level']}_school_")
    assert data.dataset.counts["kept"] == len(expected)


def test_spreadsheet_mangled_cells_stay_text(eeval_root: Path) -> None:
    data = load_eeval(_cfg(eeval_root / "val"))
    got = {q.id: q for q in data.dataset.questions}
    mangled = [
        (f"{f.stem.removesuffix('_val').lower()}/{r['id']}", c, r[c])
        for f in sorted((eeval_root / "val").glob("*_val.csv"))
        for r in raw_rows(f)
        for c in "ABCD"
        if re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$", r[c])
    ]
    assert mangled, "the val split is expected to hold spreadsheet dates"
    for qid, column, text in mangled:
        assert got[qid].options["ABCD".index(column)] == text


def test_test_split_has_no_answers_and_keeps_quirky_rows(eeval_root: Path) -> None:
    data = load_eeval(_cfg(eeval_root))  # the root means val
    assert data.split == "val"
    test = load_eeval(_cfg(eeval_root / "test"))
    rows = {
        f"{f.stem.removesuffix('_test').lower()}/{r['id']}": r
        for f in sorted((eeval_root / "test").glob("*_test.csv"))
        for r in raw_rows(f)
    }
    assert {q.id for q in test.dataset.questions} == set(rows)
    assert all(q.answer == "" for q in test.dataset.questions)
    assert test.dataset.counts["empty_stem"] == sum(not r["question"].strip() for r in rows.values())
    assert test.dataset.counts["three_options"] == sum(not r["D"].strip() for r in rows.values())
    assert {s["split"] for s in test.dataset.sources} == {"test", "dev"}


def test_dev_demonstrations_per_subject(eeval_root: Path) -> None:
    data = load_eeval(_cfg(eeval_root / "val", cursos=["High_School_Biology", "小学科学"]))
    assert sorted(data.subjects) == ["high_school_biology", "primary_school_science"]
    dev = raw_rows(eeval_root / "dev" / "High_School_Biology_dev.csv")
    demos = data.demos["high_school_biology"]
    assert [d.answer for d in demos] == [r["answer"] for r in dev]
    assert [d.explanation for d in demos] == [r["explanation"] for r in dev]
    assert data.dataset.counts["removed_subject"] > 0


def test_level_filter_and_limit_per_subject(eeval_root: Path) -> None:
    data = load_eeval(_cfg(eeval_root / "val", componentes=["primary"]), limit_per_subject=2)
    assert {q.fields["level"] for q in data.dataset.questions} == {"primary"}
    assert len(data.dataset.questions) == 2 * len(data.subjects) == 10


@pytest.mark.parametrize(
    ("kw", "message"),
    [({"cursos": ["astrology"]}, "unknown E-EVAL subject"), ({"componentes": ["college"]}, "unknown level")],
)
def test_bad_filters(eeval_root: Path, kw: dict, message: str) -> None:
    with pytest.raises(UserError, match=message):
        load_eeval(_cfg(eeval_root / "val", **kw))


def test_bad_layouts(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a folder"):
        load_eeval(_cfg(tmp_path / "nowhere"))
    with pytest.raises(UserError, match="not the E-EVAL layout"):
        load_eeval(_cfg(tmp_path))
    (tmp_path / "val").mkdir()
    (tmp_path / "val" / "Notes_val.csv").write_text("id,question\n0,x\n", encoding="utf-8")
    with pytest.raises(UserError, match="not an E-EVAL subject file"):
        load_eeval(_cfg(tmp_path / "val"))
    (tmp_path / "val" / "Notes_val.csv").unlink()
    (tmp_path / "val" / "High_School_Physics_val.csv").write_text(
        "id,question,A,B,C,D\n0,x,a,b,c,d\n", encoding="utf-8"
    )
    with pytest.raises(UserError, match=r"missing column\(s\) answer"):
        load_eeval(_cfg(tmp_path / "val"))


def test_subject_names() -> None:
    s, split = parse_subject_file(Path("Primary_School_Ethics_test.csv"))
    assert (s.key, s.level, split, s.name_en) == (
        "primary_school_ethics",
        "primary",
        "test",
        "Primary School Ethics",
    )
    assert subject_from_key("high_school_mathematics").name_zh == "高中数学"
