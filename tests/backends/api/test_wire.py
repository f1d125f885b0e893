"""Request/response helpers: letter scores, echo alignment, Retry-After parsing."""

from __future__ import annotations

import email.utils
import math
import time

import pytest

from enade_bench.backends.api.resilience import parse_retry_after
from enade_bench.backends.api.wire import continuation_from_echo, echo_tokens, letter_scores


def test_letter_scores_add_variants_and_floor_missing_letters() -> None:
    tops = {"A": math.log(0.2), " A": math.log(0.3), " B": math.log(0.1), "x": math.log(0.05)}
    a, b, c = letter_scores(tops, "ABC", "both")
    assert a == pytest.approx(math.log(0.5))
    assert b == pytest.approx(math.log(0.1))
    assert c == pytest.approx(math.log(0.05))  # absent: the smallest listed value (an upper bound)
    assert letter_scores(tops, "A", "bare") == [pytest.approx(math.log(0.2))]


def test_echo_drops_generated_tail_even_with_replacement_characters() -> None:
    prompt = "Resposta: ç"
    choice = {
        "text": prompt + " B",
        "logprobs": {
            "tokens": ["Res", "posta", ":", " \ufffd", "\ufffd", " B"],
            "token_logprobs": [None, -1.0, -2.0, -3.0, -4.0, -5.0],
        },
    }
    tokens, values = echo_tokens(choice, prompt)
    assert tokens == ["Res", "posta", ":", " \ufffd", "\ufffd"] and values[-1] == -4.0


def test_continuation_after_common_prefix() -> None:
    ctx = ["Res", "posta", ":"]
    assert continuation_from_echo(ctx, [*ctx, " A", "bc"], [None, -1, -2, -3, -4]) == [-3.0, -4.0]
    # the tokenizer merged the boundary: everything after the shared part counts
    assert continuation_from_echo(ctx, ["Res", "posta", ": A"], [None, -1, -7]) == [-7.0]


def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    date = email.utils.formatdate(time.time() + 5, usegmt=True)
    assert 3.0 <= (parse_retry_after({"retry-after": date}) or 0) <= 5.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
