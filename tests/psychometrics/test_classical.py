"""Discrimination index and χ² tests against hand-worked values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from enade_bench.psychometrics.classical import attribute_tests, discrimination_index, item_attributes


def test_discrimination_index_hand_worked() -> None:
    # 8 units with theta 1..8 (given shuffled); top 2 = theta 7, 8; bottom 2 = theta 1, 2.
    theta = np.array([3, 8, 1, 5, 7, 2, 6, 4], dtype=float)
    responses = pd.DataFrame(
        {
            "easy": [1, 1, 1, 1, 1, 1, 1, 1],  # D = 1 - 1 = 0
            "good": [0, 1, 0, 1, 1, 0, 1, 0],  # top 1, 1; bottom 0, 0 -> D = 1
            "reverse": [1, 0, 1, 0, 0, 1, 0, 1],  # D = -1
            "half": [1, 1, 0, 0, 0, 1, 1, 1],  # top: 8 -> 1, 7 -> 0; bottom: 1 -> 0, 2 -> 1 -> D = 0
        }
    )
    table = discrimination_index(responses, theta)
    assert table["di"].tolist() == [0.0, 1.0, -1.0, 0.0]
    assert table["poor"].tolist() == [True, False, True, True]


def test_discrimination_index_skips_missing_and_non_finite() -> None:
    theta = np.array([1.0, 2.0, 3.0, 4.0, np.inf])
    responses = pd.DataFrame({"q": [0, np.nan, 1, 1, 1]})
    table = discrimination_index(responses, theta, fraction=0.5)
    # Finite units: theta 1..4 -> bottom {1, 2}, top {3, 4}; bottom has one answer (0).
    assert table["p_bottom"].iloc[0] == 0.0
    assert table["p_top"].iloc[0] == 1.0
    with pytest.raises(ValueError, match="theta values"):
        discrimination_index(responses, theta[:3])


def test_item_attributes_detect_text_features() -> None:
    questions = pd.DataFrame(
        {
            "body": [
                "Descrição da imagem: um gráfico de barras. Qual a moda?",
                "Leia o texto. (Fim da descrição) Qual a ideia?",
                "Read the poem below.",
                "Description of the table: two rows.",
                "Em 1933, o autor escreveu.",
            ],
            "A": ["10", "sim", "yes", "a", "b"],
            "B": ["20", "não", "no", "b", "c"],
        }
    )
    attrs = item_attributes(questions, options=("A", "B"))
    assert attrs["image_description"].tolist() == [True, True, False, True, False]
    assert attrs["numbers_in_options"].tolist() == [True, False, False, False, False]
    assert attrs["numbers_in_stem"].tolist() == [False, False, False, False, True]


def test_chi_square_hand_worked() -> None:
    # Table [[3, 1], [1, 3]]: every expected count 2, X^2 = 4 * 1/2 = 2.0, p = 0.157299.
    poor = [True, True, True, True, False, False, False, False]
    attrs = pd.DataFrame({"image_description": [True, True, True, False, True, False, False, False]})
    row = attribute_tests(poor, attrs).iloc[0]
    assert (row["poor_with"], row["poor_without"], row["ok_with"], row["ok_without"]) == (3, 1, 1, 3)
    assert row["chi2"] == pytest.approx(2.0)
    assert row["p_value"] == pytest.approx(0.1572992, abs=1e-6)
    assert row["min_expected"] == 2.0
    # Yates: (|1| - 0.5)^2 / 2 * 4 = 0.5.
    assert attribute_tests(poor, attrs, yates=True).iloc[0]["chi2"] == pytest.approx(0.5)


def test_chi_square_empty_margin_is_nan() -> None:
    attrs = pd.DataFrame({"numbers_in_stem": [True, True, True]})
    assert np.isnan(attribute_tests([True, False, True], attrs).iloc[0]["chi2"])


def test_attributes_on_real_exam(enem_dir: Path) -> None:
    questions = pd.read_csv(enem_dir / "questions" / "pt-br" / "ENEM_2019_MT_CO_PROVA_522.csv", dtype=str)
    attrs = item_attributes(questions)
    assert attrs["numbers_in_options"].mean() > 0.5
    assert 0 < attrs["image_description"].mean() < 1
