"""ENEM booklets, linking by code or answer key, foreign language, scale."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.psychometrics.oracle import Oracle

from enade_bench.benchmarks.enem.files import parse_exam_filename
from enade_bench.benchmarks.enem.inep import (
    ENEM_SCALE,
    booklet_items,
    enem_score,
    load_booklets,
    patterns_to_matrix,
    scored_params,
)
from enade_bench.benchmarks.enem.linking import exam_items, link_booklet


def _questions(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def test_scale_constants_equal_inep_file(enem_dir: Path) -> None:
    table = pd.read_csv(enem_dir / "inep_scale_constants.csv")
    for area, k, d in zip(table["area"], table["k"], table["d"], strict=True):
        assert ENEM_SCALE[str(area)].k == k
        assert ENEM_SCALE[str(area)].d == d


def test_enem_score_is_linear() -> None:
    assert enem_score(0.0, "MT") == pytest.approx(500.02)
    assert enem_score(1.0, "mt") == pytest.approx(500.02 + 129.646)
    with pytest.raises(KeyError):
        enem_score(0.0, "XX")


def test_published_enem_score_column_is_not_inep_scale(oracle: Oracle) -> None:
    """The reference file's ENEM_IRT_SCORE is 500 + 100·θ, not INEP's k·θ + d (documented)."""
    rows = oracle.rows
    np.testing.assert_allclose(rows["ENEM_IRT_SCORE"], 500 + 100 * rows["IRT_SCORE"], atol=1e-6)
    mt = rows[rows["EXAM_SUBJECT"] == "MT"]
    assert np.abs(enem_score(mt["IRT_SCORE"], "MT") - mt["ENEM_IRT_SCORE"]).max() > 1.0


def test_lc_booklet_keeps_one_foreign_language(inep_items: pd.DataFrame) -> None:
    spanish = booklet_items(inep_items, 521, "spanish")
    english = booklet_items(inep_items, 521, "english")
    assert len(spanish) == len(english) == 45
    assert set(spanish["language"].dropna()) == {"spanish"}
    assert set(english["language"].dropna()) == {"english"}
    assert spanish["position"].tolist() == list(range(1, 46))
    assert (spanish["item_id"].iloc[:5] != english["item_id"].iloc[:5]).all()
    assert spanish["item_id"].iloc[5:].tolist() == english["item_id"].iloc[5:].tolist()


def test_annulled_items_are_not_scored(inep_items: pd.DataFrame) -> None:
    booklet = booklet_items(inep_items, 1082)
    raw = inep_items[inep_items["CO_PROVA"] == 1082]
    n_annulled = int(((raw["IN_ITEM_ABAN"] == 1) | raw["NU_PARAM_A"].isna()).sum())
    assert n_annulled > 0
    assert int((~booklet["scored"]).sum()) == n_annulled
    assert len(scored_params(booklet)) == 45 - n_annulled


def test_patterns_to_matrix_drops_unscored(inep_items: pd.DataFrame) -> None:
    booklet = booklet_items(inep_items, 1082)
    x = patterns_to_matrix(["1" * 45, "0" * 44 + "-"], booklet)
    assert x.shape == (2, int(booklet["scored"].sum()))
    assert np.isnan(x[1, -1])
    with pytest.raises(ValueError, match="44 characters"):
        patterns_to_matrix(["1" * 44], booklet)


def test_parse_exam_filename() -> None:
    parsed = parse_exam_filename("questions/pt-br/ENEM_2023_LC_CO_PROVA_0.csv")
    assert (parsed.year, parsed.area, parsed.co_prova) == (2023, "LC", 0)
    with pytest.raises(ValueError, match="expected a name like"):
        parse_exam_filename("exam.csv")


def test_known_code_is_used(enem_dir: Path, inep_items: pd.DataFrame) -> None:
    booklets = load_booklets(enem_dir / "inep_booklets.csv")
    path = enem_dir / "questions" / "pt-br" / "ENEM_2019_CN_CO_PROVA_519.csv"
    assert link_booklet(_questions(path), inep_items, booklets, 2019, "CN", 519) == 519


@pytest.mark.parametrize("area", ["CH", "CN", "LC", "MT"])
def test_2023_files_link_by_answer_key(enem_dir: Path, inep_items: pd.DataFrame, area: str) -> None:
    booklets = load_booklets(enem_dir / "inep_booklets.csv")
    path = enem_dir / "questions" / "pt-br" / f"ENEM_2023_{area}_CO_PROVA_0.csv"
    code = link_booklet(_questions(path), inep_items, booklets, 2023, area, 0)
    assert int(booklets.loc[booklets["CO_PROVA"] == code, "ano"].iloc[0]) == 2023
    joined = exam_items(_questions(path), inep_items, code)
    scored = joined[joined["scored"]]
    assert len(joined) == 45
    assert len(scored) >= 43
    assert (scored["answer"] == scored["booklet_key"]).all()


def test_answer_key_link_prefers_a_regular_print(enem_dir: Path, inep_items: pd.DataFrame) -> None:
    """The 2019 MT file is the adapted print 522; with its code hidden, the key picks a regular
    colour with the same key (the adapted print swaps one item for another with the same answer)."""
    booklets = load_booklets(enem_dir / "inep_booklets.csv")
    questions = _questions(enem_dir / "questions" / "pt-br" / "ENEM_2019_MT_CO_PROVA_522.csv")
    code = link_booklet(questions, inep_items, booklets, 2019, "MT", 0)
    colour = str(booklets.loc[booklets["CO_PROVA"] == code, "cor"].iloc[0])
    assert " - " not in colour
    joined = exam_items(questions, inep_items, code)
    assert (joined["answer"] == joined["booklet_key"]).all()
    named = booklet_items(inep_items, 522)["item_id"].tolist()
    linked = booklet_items(inep_items, code)["item_id"].tolist()
    assert sum(a != b for a, b in zip(named, linked, strict=True)) == 1


def test_link_fails_without_a_match(enem_dir: Path, inep_items: pd.DataFrame) -> None:
    booklets = load_booklets(enem_dir / "inep_booklets.csv")
    path = enem_dir / "questions" / "pt-br" / "ENEM_2023_MT_CO_PROVA_0.csv"
    questions = _questions(path)
    questions["answer"] = "A"
    with pytest.raises(LookupError, match="answer key"):
        link_booklet(questions, inep_items, booklets, 2023, "MT", 0)


def test_exam_items_lc_language(enem_dir: Path, inep_items: pd.DataFrame) -> None:
    questions = _questions(enem_dir / "questions" / "pt-br" / "ENEM_2022_LC_CO_PROVA_1072.csv")
    spanish = exam_items(questions, inep_items, 1072, "spanish")
    english = exam_items(questions, inep_items, 1072, "english")
    assert len(spanish) == len(english) == 45
    rows = questions.loc[spanish["row"].iloc[:5]]
    assert set(rows["language"]) == {"spanish"}
    assert (spanish["answer"] == spanish["booklet_key"]).all()
    assert (english["answer"] == english["booklet_key"]).all()
