"""``dataset.sample`` / ``--sample``: a seeded random subset, stratified by proportional allocation."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from tests.conftest import DEMO_CSV

from enade_bench.config import DatasetConfig, SampleConfig
from enade_bench.dataset import load_dataset
from enade_bench.dataset.sample import allocate, draw_sample
from enade_bench.errors import UserError


def years(n_per_year: dict[int, int], tmp_path: Path) -> Path:
    """A file whose rows come year by year (what --limit cuts badly)."""
    rows = [f"q{y}_{i},{y},Qual {y} {i}?,a,b,A" for y, n in n_per_year.items() for i in range(n)]
    path = tmp_path / "q.csv"
    path.write_text("id,year,stem,A,B,answer\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_allocation_is_proportional_with_largest_remainders() -> None:
    # quotas 2.5, 1.5, 1.0: floors 2, 1, 1; the one seat left goes to the larger tied group
    assert allocate({"2019": 10, "2020": 6, "2021": 4}, 5) == {"2019": 3, "2020": 1, "2021": 1}
    sizes = {"a": 480, "b": 120, "c": 97, "d": 23}
    shares = allocate(sizes, 20)
    assert sum(shares.values()) == 20
    for group, size in sizes.items():  # each within one of its exact quota
        quota = 20 * size / sum(sizes.values())
        assert math.floor(quota) <= shares[group] <= math.ceil(quota)


def test_a_stratified_sample_spreads_over_the_years(tmp_path: Path) -> None:
    path = years({2019: 30, 2020: 20, 2021: 10}, tmp_path)
    first = load_dataset(DatasetConfig(path=str(path)))
    assert {q.year for q in first.questions[:12]} == {2019}  # what --limit 12 would give
    sample = SampleConfig(n=12, seed=7, stratify="year")
    data = load_dataset(DatasetConfig(path=str(path), sample=sample))
    assert Counter(q.year for q in data.questions) == {2019: 6, 2020: 4, 2021: 2}
    assert data.counts["removed_sample"] == 48 and data.counts["kept"] == 12
    order = [q.id for q in first.questions]
    assert [q.id for q in data.questions] == sorted((q.id for q in data.questions), key=order.index)
    again = load_dataset(DatasetConfig(path=str(path), sample=sample))
    assert [q.id for q in again.questions] == [q.id for q in data.questions]  # seeded
    other = load_dataset(DatasetConfig(path=str(path), sample=sample.model_copy(update={"seed": 8})))
    assert [q.id for q in other.questions] != [q.id for q in data.questions]


def test_a_simple_sample_is_seeded_and_without_repeats() -> None:
    data = load_dataset(DatasetConfig(path=str(DEMO_CSV), sample=SampleConfig(n=10, seed=1)))
    ids = [q.id for q in data.questions]
    assert len(ids) == len(set(ids)) == 10
    whole = load_dataset(DatasetConfig(path=str(DEMO_CSV)))
    assert data.counts["removed_sample"] == len(whole.questions) - 10
    assert ids != [q.id for q in whole.questions[:10]]


def test_a_sample_of_every_question_keeps_everything_and_a_larger_one_is_refused() -> None:
    """Issue 32: ``--sample 1000`` on 28 questions says there are only 28 (it passed silently)."""
    whole = load_dataset(DatasetConfig(path=str(DEMO_CSV)))
    n = len(whole.questions)
    data = load_dataset(DatasetConfig(path=str(DEMO_CSV), sample=SampleConfig(n=n, stratify="course")))
    assert [q.id for q in data.questions] == [q.id for q in whole.questions]
    assert data.counts["removed_sample"] == 0
    with pytest.raises(UserError, match=f"1000 questions asked, but only {n} are left after the filters"):
        load_dataset(DatasetConfig(path=str(DEMO_CSV), sample=SampleConfig(n=1000, stratify="course")))


def test_stratifying_by_a_field_unique_to_every_question_is_refused() -> None:
    with pytest.raises(UserError, match="every question has its own value of 'id'"):
        load_dataset(DatasetConfig(path=str(DEMO_CSV), sample=SampleConfig(n=5, stratify="id")))


def test_empty_values_are_their_own_stratum() -> None:
    whole = load_dataset(DatasetConfig(path=str(DEMO_CSV))).questions
    mixed = [q if i % 3 else replace(q, fields={**q.fields, "course": ""}) for i, q in enumerate(whole)]
    counts: dict[str, int] = {}
    kept = draw_sample(mixed, SampleConfig(n=9, stratify="course"), counts)
    sizes = Counter(str(q.fields["course"] or "(empty)") for q in mixed)
    expected = allocate(dict(sorted(sizes.items(), key=lambda kv: (kv[0] == "(empty)", kv[0]))), 9)
    assert Counter(str(q.fields["course"] or "(empty)") for q in kept) == {
        k: v for k, v in expected.items() if v
    }
    assert (
        expected["(empty)"] == round(9 * sizes["(empty)"] / len(mixed))
        and counts["removed_sample"] == len(mixed) - 9
    )


def test_an_unknown_stratifying_field_is_an_error() -> None:
    with pytest.raises(UserError, match=r"dataset.sample.stratify \(--stratify\): 'curso' is not a field"):
        load_dataset(DatasetConfig(path=str(DEMO_CSV), sample=SampleConfig(n=5, stratify="curso")))


def test_a_config_without_a_sample_dumps_as_before() -> None:
    """No ``sample`` key in the recorded config unless one is set: earlier runs' logs still resume."""
    assert "sample" not in DatasetConfig(path="q.csv").model_dump(mode="json")
    assert DatasetConfig(path="q.csv", sample=SampleConfig(n=3)).model_dump(mode="json")["sample"] == {
        "n": 3,
        "seed": 42,
        "stratify": None,
    }
