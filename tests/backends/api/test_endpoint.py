"""``model.api.base_url`` and ``api_key``: ``${VAR}``, user-info refused, the query kept (issue 32)."""

from __future__ import annotations

import pytest

from enade_bench.backends.api.clients import base_url_for, endpoint_for, make_sdk_client
from enade_bench.backends.api.keys import resolve_api_key
from enade_bench.config import ApiConfig
from enade_bench.errors import UserError


def api(**kw: object) -> ApiConfig:
    return ApiConfig.model_validate({"provider": "openai_compatible", "model": "m", **kw})


def test_variables_are_expanded_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENADE_T_KEY", "sk-env-0123456789")
    monkeypatch.setenv("ENADE_T_HOST", "10.0.0.7")
    cfg = api(api_key="${ENADE_T_KEY}", base_url="http://${ENADE_T_HOST}:8000/v1")
    assert resolve_api_key(cfg) == "sk-env-0123456789"
    assert base_url_for(cfg) == "http://10.0.0.7:8000/v1"


@pytest.mark.parametrize("key", ["api_key", "base_url"])
def test_an_unset_variable_is_refused_naming_it(key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENADE_T_UNSET", raising=False)
    cfg = api(
        **{
            "base_url": "http://h/v1",
            key: "http://${ENADE_T_UNSET}/v1" if key == "base_url" else "${ENADE_T_UNSET}",
        }
    )
    with pytest.raises(UserError, match=rf"model\.api\.{key}: .*ENADE_T_UNSET, which is not set"):
        resolve_api_key(cfg) if key == "api_key" else base_url_for(cfg)


@pytest.mark.parametrize("provider", ["openai", "openai_compatible", "anthropic", "nvidia"])
def test_user_info_is_refused_saying_where_the_key_goes(provider: str) -> None:
    cfg = ApiConfig.model_validate(
        {"provider": provider, "model": "m", "base_url": "https://bob:pw-SECRET@h/v1"}
    )
    with pytest.raises(UserError) as info:
        base_url_for(cfg)
    text = str(info.value)
    assert text.startswith("model.api.base_url: 'https://***@h/v1'") and "pw-SECRET" not in text
    assert "model.api.api_key" in text and "HTTP Basic" in text


def test_the_query_goes_to_the_sdk_as_default_query() -> None:
    cfg = api(base_url="http://127.0.0.1:9/v1?api-version=2024-10-21&api_key=tok%2F1")
    endpoint = endpoint_for(cfg)
    assert endpoint.url == "http://127.0.0.1:9/v1"
    assert endpoint.query == {"api-version": "2024-10-21", "api_key": "tok/1"}
    client = make_sdk_client(cfg, "sk-x")  # the real SDK client (no request sent)
    assert str(client.base_url) == "http://127.0.0.1:9/v1/"
    assert client.default_query == {"api-version": "2024-10-21", "api_key": "tok/1"}
    anthropic = make_sdk_client(
        ApiConfig.model_validate({"provider": "anthropic", "model": "m", "base_url": "http://h/x?v=1"}), "k"
    )
    assert anthropic.default_query == {"v": "1"} and str(anthropic.base_url) == "http://h/x/"


def test_gemini_cannot_take_a_query() -> None:
    cfg = ApiConfig.model_validate({"provider": "google", "model": "m", "base_url": "http://h/v1?key=abc123"})
    with pytest.raises(UserError, match="query parameters") as info:
        base_url_for(cfg)
    assert "abc123" not in str(info.value)
