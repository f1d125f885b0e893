"""``enade_bench.masking``: every form of a secret is masked, ordinary text is not (issue 32)."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote, quote_plus, urlencode

import pytest

from enade_bench.masking import MASK, forget_all, mask, mask_config, remember, url_secrets

SECRET = "pa/ss+wörd=SECRET 42"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    forget_all()


@pytest.mark.parametrize(
    "shown",
    [
        SECRET,
        quote(SECRET, safe=""),
        quote(SECRET),
        quote_plus(SECRET),
        urlencode({"k": SECRET}).split("=", 1)[1],
        json.dumps(SECRET),
        json.dumps(SECRET, ensure_ascii=False),
        base64.b64encode(SECRET.encode()).decode(),
        base64.urlsafe_b64encode(SECRET.encode()).decode().rstrip("="),
    ],
)
def test_every_encoding_of_a_known_secret_is_masked(shown: str) -> None:
    text = f"server said: {shown} (end)"
    masked = mask(text, [SECRET])
    assert shown not in masked and masked.startswith("server said: ") and masked.endswith(" (end)")


@pytest.mark.parametrize("prefix", ["", "u", "us", "user:", "a longer prefix: "])
def test_base64_of_a_secret_inside_a_longer_value_is_masked(prefix: str) -> None:
    """``Basic base64(user:secret)`` and any other alignment of the secret in an encoded text."""
    encoded = base64.b64encode(f"{prefix}{SECRET}, and after".encode()).decode()
    masked = mask(f"echo {encoded}", [SECRET])
    # the characters that encode the secret's bytes (bits 8·len(prefix) … 8·(len(prefix)+n)) are gone
    start, end = -(-8 * len(prefix.encode()) // 6), 8 * len(f"{prefix}{SECRET}".encode()) // 6
    assert end - start > 20
    assert [encoded[i : i + 6] for i in range(start, end - 5) if encoded[i : i + 6] in masked] == []


def test_remembered_secrets_are_masked_everywhere_after() -> None:
    key = "sk-proj-remembered-0123456789"
    assert mask(f"echo {key}") == "echo sk-***"  # its shape alone
    remember([key])
    assert key[5:20] not in mask(f"piece {key[5:20]}")  # a 12-character fragment is masked too


def test_credentials_by_their_shape_without_knowing_them() -> None:
    basic = base64.b64encode(b"alice:hunter2").decode()
    text = (
        f"Authorization: Basic {basic}; Bearer abc.def-0123456789; http://alice:hunter2@h/v1?api_key=zz99&x=1; "
        "key AIzaSyA0123456789abcdefghijklmnopqrstu; nvapi-0123456789abcdefghij"
    )
    masked = mask(text)
    for leaked in (basic, "hunter2", "abc.def-0123456789", "zz99", "SyA0123456789", "0123456789abcdefghij"):
        assert leaked not in masked, leaked
    assert "x=***; key" in masked and "http://***@h/v1" in masked  # every query value, whatever its name


@pytest.mark.parametrize(
    "text",
    [
        "Basic information about the exam",
        "Bearer token missing",
        "Resposta: C (the key is C)",
        "max_tokens=100 and tokenizer=gpt2",
        "HTTP 400: Invalid request: prompt rejected by policy.",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert mask(text) == text


def test_config_keys_that_hold_secrets() -> None:
    config: dict[str, Any] = {
        "model": {
            "hf_token": "hf_abcdef",
            "api": {
                "api_key": "sk-old",
                "max_tokens": 5,
                "tokenizer": "gpt2",
                "top_logprobs": 20,
                "base_url": "http://u:pw123456@h/v1",
                "extra_params": {"password": "p", "client_secret": "c", "token": "t", "temperature": 0},
            },
        },
        "dataset": {"answer_key": "key.csv", "path": "data.csv"},
    }
    masked = mask_config(config)
    api = masked["model"]["api"]
    assert masked["model"]["hf_token"] == api["api_key"] == MASK
    assert api["extra_params"] == {"password": MASK, "client_secret": MASK, "token": MASK, "temperature": 0}
    assert api["base_url"] == "http://***@h/v1"
    assert (api["max_tokens"], api["tokenizer"], api["top_logprobs"]) == (5, "gpt2", 20)
    assert masked["dataset"] == config["dataset"]


def test_url_secrets() -> None:
    assert url_secrets("http://user:SECRET@host/v1?api_key=abc%2Fdef&api-version=1") == [
        "user:SECRET",
        "SECRET",
        "abc%2Fdef",
        "abc/def",
    ]
    assert url_secrets("http://127.0.0.1:8000/v1") == []


@pytest.mark.parametrize("where", ["config", "environment"])
def test_hugging_face_token_is_masked_once_read(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hub token is registered when the loader reads it, so an echo of it, in any encoding, is masked."""
    from enade_bench.backends.hf_load import hf_token
    from enade_bench.config import ModelConfig

    token = "hf_" + "Q7x9Lm2Zp4Rt8Vw3Ks6Nd1Bc5Hj0Fg"
    monkeypatch.setenv("HF_TOKEN", token if where == "environment" else "")
    cfg = ModelConfig(name="org/private-model", hf_token=token if where == "config" else None)
    forget_all()
    try:
        assert hf_token(cfg) == token
        echoed = f"401 for {token}; header Authorization: Bearer {base64.b64encode(token.encode()).decode()}"
        assert token not in mask(echoed) and base64.b64encode(token.encode()).decode() not in mask(echoed)
    finally:
        forget_all()
