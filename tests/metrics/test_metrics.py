import pytest

from enade_bench.metrics import breakdown, field_breakdowns, position_bias, summarize, wilson_interval
from enade_bench.results.records import QuestionRecord


def rec(
    i: int, correct: bool, pred_pos: int | None, ans_pos: int = 0, k: int = 5, **kw: object
) -> QuestionRecord:
    letters = "ABCDE"
    fields = {"year": 2019, "course": kw.pop("course", "Medicina"), "component": "Formação Geral"}
    base = dict(
        id=f"q{i}",
        fields=fields,
        n_options=k,
        answer="A",
        prediction=letters[pred_pos] if pred_pos is not None else None,
        correct=correct,
        method="generation",
        shot="zero",
        strategy="S4",
        permutation=None,
        answer_position=ans_pos,
        predicted_position=pred_pos,
        displayed_prediction=None,
        question_hash="h",
        prompt_hash="p",
        prompt="x",
        extraction_rule="resposta" if pred_pos is not None else "unanswered",
    )
    base.update(kw)
    return QuestionRecord(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("x", "n", "low", "high"),
    # R: prop.test(x, n, correct = FALSE)$conf.int (7/10, 0/20); 45/50 worked by hand from the formula
    [(7, 10, 0.3967781, 0.8922087), (0, 20, 0.0, 0.1611252), (45, 50, 0.786396, 0.956522)],
)
def test_wilson_matches_r_prop_test(x: int, n: int, low: float, high: float) -> None:
    assert wilson_interval(x, n) == pytest.approx((low, high), abs=1e-5)


def test_summary_counts_and_extraction_shares() -> None:
    records = [rec(0, True, 0), rec(1, False, 1), rec(2, False, None), rec(3, True, 0)]
    s = summarize(records)
    assert (s.n, s.correct, s.accuracy, s.unanswered) == (4, 2, 0.5, 1)
    assert s.extraction is not None
    assert (s.extraction["resposta"].count, s.extraction["resposta"].share) == (3, 0.75)
    assert s.ci95 == pytest.approx(wilson_interval(2, 4))


def test_per_shuffle_summary() -> None:
    records = [rec(i, i % 2 == 0, 0, shuffle=s) for s in range(3) for i in range(4)]
    block = summarize(records).per_shuffle
    assert block is not None and block.n_shuffles == 3 and block.mean == 0.5


def test_breakdown_groups() -> None:
    records = [
        rec(0, True, 0, course="Medicina"),
        rec(1, False, 1, course="Nutrição"),
        rec(2, True, 0, course="Nutrição"),
    ]
    out = breakdown(records, lambda r: r.fields["course"])
    assert out["Medicina"].accuracy == 1.0 and out["Nutrição"].n == 2
    by_field = field_breakdowns(records, ["course", "year", "missing"])
    assert list(by_field) == ["course", "year", "missing"]
    assert by_field["course"] == out
    assert by_field["year"]["2019"].n == 3 and list(by_field["missing"]) == ["(empty)"]


def test_empty_values_form_a_named_counted_group_last() -> None:
    """Before: 14 of 20 questions with an empty field formed a group named '' (and None: 'None')."""
    records = [rec(i, i < 4, 0, course="" if i < 14 else "Medicina") for i in range(20)]
    records.append(rec(20, True, 0, course="  "))
    out = breakdown(records, lambda r: r.fields["course"])
    assert list(out) == ["Medicina", "(empty)"]
    assert "" not in out and "None" not in out
    assert (out["(empty)"].n, out["(empty)"].correct) == (15, 5)
    assert out["Medicina"].n == 6


def test_position_bias_matches_r_chisq_test() -> None:
    # 20 answered 4-option predictions at positions A..D = 10, 5, 3, 2.
    # R: chisq.test(c(10, 5, 3, 2)) -> X-squared = 7.6, df = 3, p-value = 0.05504
    positions = [0] * 10 + [1] * 5 + [2] * 3 + [3] * 2
    records = [rec(i, False, p, ans_pos=i % 4, k=4) for i, p in enumerate(positions)]
    records.append(rec(99, False, None, k=4))
    bpc = position_bias(records)["4"]
    assert bpc.n == 21 and bpc.n_answered == 20
    assert bpc.prediction_counts == [10, 5, 3, 2]
    assert bpc.chi2 == pytest.approx(7.6) and bpc.df == 3
    assert bpc.p_value == pytest.approx(0.05504, abs=1e-5)
    # TVD from uniform: 0.5 * (|.5-.25| + |.25-.25| + |.15-.25| + |.1-.25|) = 0.25
    assert bpc.bpc_tvd == pytest.approx(0.25)
