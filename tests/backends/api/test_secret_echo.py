"""No secret in any form reaches stderr, the results folder or the report (issue 32).

A real HTTP server on 127.0.0.1 speaks the OpenAI-compatible chat shapes and, when it
refuses a request, echoes what it received into its error body: the ``Authorization``
header, the raw query string, and the base64 forms a logging proxy shows (the key's
base64 and ``Basic base64(user:token)``).  The API backend runs against it; every form
of both secrets must be absent from every output.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import parse_qs, quote, quote_plus, urlsplit

import pytest
from api_fakes import (
    FakeServer,
    Reply,
    Request,
    answer_for,
    openai_completion,
    openai_error,
    user_text_openai,
)
from api_fakes import write_config as api_config

from enade_bench.cli.main import main
from enade_bench.masking import MARK, forget_all

#: The key (characters that percent-encoding and base64 both change) and a token in the URL's query.
KEY = "sk-echo/KEY+0123456789abcdefghij=="
TOKEN = "tok/EN+secret value=42"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def forms(secret: str) -> set[str]:
    """Every form checked: literal, percent-encoded, base64 (whole, in ``Basic user:…``), 12-char pieces."""
    out = {
        secret,
        quote(secret, safe=""),
        quote_plus(secret),
        _b64(secret),
        _b64(secret).rstrip("="),
        _b64(f"user:{secret}"),
        base64.urlsafe_b64encode(secret.encode()).decode(),
    }
    for text in (secret, quote(secret, safe=""), quote_plus(secret)):  # any 12 characters of one
        out |= {text[i : i + 12] for i in range(len(text) - 11)}
    return out


FORMS = forms(KEY) | forms(TOKEN)


def echo_body(req: Request) -> str:
    """What a careless server (or proxy) says when it refuses a request."""
    auth = req.headers.get("authorization", "")
    query = urlsplit(req.path).query
    token = parse_qs(query).get("api_key", [""])[0]
    return (
        f"denied; headers: authorization={auth}; query={query}; "
        f"proxy: Authorization: Basic {_b64('user:' + token)} key_b64={_b64(KEY)}"
    )


class EchoServer(FakeServer):
    """Answers every third chat request with a 400 echoing the request's credentials."""

    def route(self, req: Request) -> Reply:
        if urlsplit(req.path).path != "/v1/chat/completions":
            return openai_error(404, f"no route {req.path}")
        if self.ticket() % 3 == 2:
            return openai_error(400, echo_body(req))
        return Reply(200, openai_completion(answer_for(user_text_openai(req.json()))))


def leaks(text: str) -> set[str]:
    return {form for form in FORMS if form in text}


@pytest.fixture(autouse=True)
def _fresh_masks() -> None:
    forget_all()  # each test proves its own masking, not one remembered by an earlier test


def test_no_form_of_a_secret_in_stderr_results_log_or_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ENADE_ECHO_KEY", KEY)
    with EchoServer() as server:
        base_url = server.url + "/v1?api_key=" + quote(TOKEN, safe="") + "&api-version=2024-10-21"
        cfg = api_config(
            tmp_path,
            {
                "provider": "openai_compatible",
                "model": "m",
                "api_key": "${ENADE_ECHO_KEY}",
                "base_url": base_url,
                "max_concurrency": 1,
                "max_retries": 1,
            },
        )
        assert main(["run", str(cfg), "--limit", "6"]) == 3  # two questions refused (requests 3 and 6)
        assert main(["run", str(cfg), "--limit", "6"]) == 0  # resumed: both asked again, answered
        posts = server.posts()
    # the key went as the Bearer key (expanded from ${ENADE_ECHO_KEY}), the query as a query
    assert {p.headers["authorization"] for p in posts} == {f"Bearer {KEY}"}
    assert {urlsplit(p.path).path for p in posts} == {"/v1/chat/completions"}
    assert all(
        parse_qs(urlsplit(p.path).query) == {"api_key": [TOKEN], "api-version": ["2024-10-21"]} for p in posts
    )
    assert len(posts) == 8
    out = tmp_path / "out"
    result = json.loads((out / "api_test_results.json").read_text(encoding="utf-8"))
    histories = [r["error_history"] for r in result["records"] if r.get("error_history")]
    # status and type kept; the echoed message held the key, so it is withheld whole (issue 40)
    assert histories == [[f"HTTP 400 (invalid_request_error): {MARK}"]] * 2
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
    err = capsys.readouterr().err
    assert "HTTP 400 (invalid_request_error)" in err and "denied" not in err
    written = [p for folder in (out, tmp_path / "report") for p in folder.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {
        "api_test_results.json",
        "api_test_summary.csv",
        "index.html",
        "api_test_intermediate.jsonl",
    }
    found = {p.name: leaks(p.read_bytes().decode("utf-8", "replace")) for p in written}
    assert {name: f for name, f in found.items() if f} == {}
    assert leaks(err) == set()
    log = (out / "api_test_intermediate.jsonl").read_text(encoding="utf-8")
    assert "error_history" in log and MARK in log


def test_a_refusal_streak_echoing_the_key_stops_with_one_masked_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(req: Request) -> Reply:
        return openai_error(401, echo_body(req), "invalid_api_key", kind="authentication_error")

    with FakeServer(refuse) as server:
        base_url = server.url + "/v1?api_key=" + quote(TOKEN, safe="")
        cfg = api_config(
            tmp_path,
            {
                "provider": "openai_compatible",
                "model": "m",
                "api_key": KEY,
                "base_url": base_url,
                "max_concurrency": 1,
            },
        )
        assert main(["run", str(cfg), "--limit", "4", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "refused" in err[0]
    assert leaks(err[0]) == set()
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert leaks(path.read_text(encoding="utf-8")) == set(), path.name


def test_user_info_in_base_url_is_refused_before_any_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with EchoServer() as server:
        url = server.url.replace("http://", "http://user:SECRETpw99@") + "/v1"
        cfg = api_config(tmp_path, {"provider": "openai_compatible", "model": "m", "base_url": url})
        for command in ("validate", "run"):
            assert main([command, str(cfg)]) == 2
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and err[0].startswith("error: model.api.base_url: "), err
            assert "model.api.api_key" in err[0] and "OPENAI_COMPATIBLE_API_KEY" in err[0]
            assert "SECRETpw99" not in err[0] and _b64("user:SECRETpw99") not in err[0]
        assert server.requests == []


def test_an_unset_variable_in_the_key_is_refused_by_validate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ENADE_UNSET_KEY_32", raising=False)
    cfg = api_config(tmp_path, {"provider": "openai", "model": "m", "api_key": "${ENADE_UNSET_KEY_32}"})
    assert main(["validate", str(cfg)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "model.api.api_key" in err[0] and "ENADE_UNSET_KEY_32" in err[0]
    monkeypatch.setenv("ENADE_UNSET_KEY_32", "sk-from-the-environment-0123456789")
    assert main(["validate", str(cfg), "--limit", "2"]) == 0
    assert "ok:" in capsys.readouterr().out


def test_a_results_file_made_elsewhere_shows_no_secret_in_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An older version (or another program) wrote the key and a URL's password into the file."""
    with EchoServer() as server:
        cfg = api_config(
            tmp_path,
            {
                "provider": "openai_compatible",
                "model": "m",
                "api_key": KEY,
                "base_url": server.url + "/v1",
                "max_concurrency": 1,
            },
        )
        assert main(["run", str(cfg), "--limit", "2", "--quiet"]) == 0
    forget_all()  # the report runs in a process that never saw these secrets
    live, password = "sk-live-0123456789abcdefghijklmn", "hunter2pass"
    path = tmp_path / "out" / "api_test_results.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    api = data["config"]["model"]["api"]
    api.update(
        api_key=live,
        base_url=f"http://bob:{password}@gateway.example/v1",
        extra_params={"password": "p4ssw0rd-xyz", "client_secret": "cs-0123456789"},
    )
    data["records"][0]["error_history"] = [
        f"HTTP 401: sent Authorization: Basic {_b64('bob:' + password)}, Bearer {live}"
    ]
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["report", str(tmp_path / "out"), "--out", str(tmp_path / "report")]) == 0
    html = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "api_key: &#39;***&#39;" in html or "api_key: '***'" in html
    secrets = {live, password, _b64("bob:" + password), "p4ssw0rd-xyz", "cs-0123456789"}
    for file in (tmp_path / "report").rglob("*"):
        if file.is_file():
            text = file.read_bytes().decode("utf-8", "replace")
            assert {s for s in secrets if s in text} == set(), file.name
    assert {s for s in secrets if s in capsys.readouterr().err} == set()
