"""Issue 61: ``dataset.strip``'s time bound is for the whole load, not for each text."""

from __future__ import annotations

import time

import pytest

from enade_bench.dataset import strip
from enade_bench.dataset.strip import PatternTimeout, Stripper, compile_pattern


def test_a_pattern_that_backtracks_a_little_on_every_text_stops_within_the_load_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(strip, "TIMEOUT_S", 0.5)
    stripper = Stripper([compile_pattern("(a|aa)+$")])
    texts = ["a" * 22 + "!"] * 240  # each well under the bound (~0.1 s); 40 rows x 6 texts: ~20 s together
    started = time.monotonic()
    with pytest.raises(PatternTimeout, match=r"took over 0.5 s on \d+ text\(s\) \(this one 23 characters"):
        for text in texts:
            stripper(text)
    assert time.monotonic() - started < 3  # the bound, plus the last search's overrun
    assert 1 < stripper.searched < 240


def test_patterns_that_do_not_backtrack_strip_every_text() -> None:
    stripper = Stripper(["ÁREA LIVRE", compile_pattern(r"P[aá]gina \d+")])
    assert stripper("Texto ÁREA   LIVRE da Página 3 prova") == "Texto da prova"
    assert [stripper("sem nada") for _ in range(3)] == ["sem nada"] * 3 and stripper.changed == 1
