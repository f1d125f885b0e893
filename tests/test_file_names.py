"""The one rule for names that reach a path (issue 32): refused in configs, mapped when read."""

from __future__ import annotations

from pathlib import Path

import pytest

from enade_bench.cli.main import main
from enade_bench.config import parse_config
from enade_bench.errors import UserError
from enade_bench.file_names import NAME_MAX_BYTES, name_problem, safe_stem

CORPUS = Path(__file__).parent / "cli" / "bad_inputs"
BASE = {"name": "x", "dataset": {"path": "a.csv"}, "model": {"name": "m"}}


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("../../x", "holds '/'"),
        ("area/subarea", "holds '/'"),
        ("a\\b", "holds '\\\\'"),
        ("a..b", "holds '..'"),
        ("..", "holds '..'"),
        ("a\0b", "NUL"),
        ("a\nb", "U+000A"),
        ("a\x1bb", "U+001B"),
        ("", "is empty"),
        ("é" * 61, "is 122 bytes long (at most 120)"),
    ],
)
def test_unsafe_names_are_named_with_the_reason(name: str, problem: str) -> None:
    assert problem in (name_problem(name) or "")


@pytest.mark.parametrize("name", ["area", "S1", "v1.2", "Química", "é" * 60, "a" * NAME_MAX_BYTES, "2010-01"])
def test_ordinary_names_pass(name: str) -> None:
    assert name_problem(name) is None


def test_mapping_is_a_single_safe_name_and_keeps_different_names_apart() -> None:
    names = ["../../x", "area/subarea", "area_subarea", "a\\b", "a\nb", "x" * 400, "é" * 300]
    mapped = [safe_stem(n) for n in names]
    assert mapped[2] == "area_subarea"  # a safe name is kept as it is
    assert len(set(mapped)) == len(names)
    for m in mapped:
        assert name_problem(m, 200) is None and "/" not in m and ".." not in m


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"dataset": {"path": "a.csv", "fields": ["../../x"]}}, "key 'dataset.fields'"),
        (
            {"dataset": {"path": "a.csv", "fields": {"area/subarea": "area"}}},
            "field name 'area/subarea' holds '/'",
        ),
        ({"name": "a" * 250}, "key 'name': got 'aaaa"),
        ({"name": "a..b"}, "holds '..'"),
    ],
)
def test_config_refuses_names_that_would_reach_a_path(change: dict[str, object], expected: str) -> None:
    with pytest.raises(UserError, match="^c.yaml: ") as info:
        parse_config({**BASE, **change}, "c.yaml")
    assert expected in str(info.value) and "\n" not in str(info.value)


def test_validate_refuses_a_250_character_name_that_run_could_not_write(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 32: such a name passed ``validate`` and failed ``run`` with "File name too long"."""
    monkeypatch.chdir(CORPUS)
    assert main(["validate", "safe_name_too_long.yaml"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: safe_name_too_long.yaml: key 'name'"), err
    assert "is 250 bytes long (at most 120)" in err[0]
