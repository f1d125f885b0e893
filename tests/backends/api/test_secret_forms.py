"""No form of a secret in any output, whatever the server echoes (issue 40).

A real HTTP server on 127.0.0.1 echoes the key it received, each time in another form
(JSON with ``\\/``, split over lines, ``%XX``, hex, HTML entities, upper and lower case,
base64 of ``Basic user:key`` wrapped every 10 characters), once in an error body and once
in the answer of a 200 reply, and its query string (``?subscription-key=…&code=…``, names
the masker knows nothing of).  Every file under the results folder, the log and stderr
are then searched for each form and for pieces of it.
"""

from __future__ import annotations

import base64
import html
import json
import os
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

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
from enade_bench.masking import MARK, forget_all, holds_secret, scrub_document

KEY = "sk-forms/KEY+0123456789abcdefghij"
SUBKEY = "f3a9c1SubKey7Qx2Lm9ZpR0w"
CODE = "c0De4d2b8e6f0aZqW71x"


def _wrapped(text: str, every: int = 10) -> str:
    return "\n".join(text[i : i + every] for i in range(0, len(text), every))


def echoed_forms(secret: str) -> dict[str, str]:
    """The forms a careless server (or a proxy, or PHP) shows a secret in."""
    raw = secret.encode()
    return {
        "json_slash": json.dumps({"key": secret}).replace("/", "\\/"),
        "two_lines": secret[:12] + "\n" + secret[12:],
        "three_lines": secret[:9] + "\r\n" + secret[9:20] + "\n" + secret[20:],
        "percent": "".join(f"%{b:02X}" for b in raw),
        "hex": raw.hex(),
        "hex_upper": raw.hex().upper(),
        "html": "".join(f"&#{ord(c)};" for c in secret),
        "html_hex": "".join(f"&#x{ord(c):x};" for c in secret),
        "html_named": html.escape(secret).replace("/", "&sol;").replace("+", "&plus;"),
        "upper": secret.upper(),
        "lower": secret.lower(),
        "basic_wrapped": "Authorization: Basic " + _wrapped(base64.b64encode(b"user:" + raw).decode()),
        "base64": base64.b64encode(raw).decode(),
    }


FORMS = echoed_forms(KEY)
ORDER = sorted(FORMS)


class FormsServer(FakeServer):
    """Request ``i`` echoes form ``i // 2``: even requests in a 400 body, odd ones in a 200 answer."""

    def route(self, req: Request) -> Reply:
        i = self.ticket()
        form = FORMS[ORDER[(i // 2) % len(ORDER)]]
        query = urlsplit(req.path).query
        if i % 2 == 0:
            return openai_error(400, f"denied key {form}; query was {query}")
        answer = answer_for(user_text_openai(req.json()))
        return Reply(200, openai_completion(f"{answer} (you sent {form} with {query})"))


def pieces(text: str, width: int = 10) -> set[str]:
    flat = "".join(text.split())
    return {flat[i : i + width] for i in range(max(len(flat) - width + 1, 1))}


#: What must appear nowhere: every piece of every echoed form, and of the query's secrets.
NEEDLES = {p for f in FORMS.values() for p in pieces(f)} | pieces(SUBKEY) | pieces(CODE) | pieces(KEY)


def leaks(text: str) -> set[str]:
    flat = "".join(text.split())
    return {n for n in NEEDLES if n in flat}


@pytest.fixture(autouse=True)
def _fresh_masks() -> None:
    forget_all()


def test_no_echoed_form_reaches_a_file_the_log_or_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ENADE_FORMS_KEY", KEY)
    monkeypatch.setenv("SUBKEY", SUBKEY)
    monkeypatch.setenv("FUNC_CODE", CODE)
    n = 2 * len(FORMS)
    with FormsServer() as server:
        base_url = server.url + "/v1?subscription-key=${SUBKEY}&code=${FUNC_CODE}"
        cfg = api_config(
            tmp_path,
            {
                "provider": "openai_compatible",
                "model": "m",
                "api_key": "${ENADE_FORMS_KEY}",
                "base_url": base_url,
                "max_concurrency": 1,
                "max_retries": 0,
            },
        )
        status = main(["run", str(cfg), "--limit", str(n)])
        posts = server.posts()
        port = urlsplit(server.url).port
    assert status == 3  # the refused questions are errors
    assert len(posts) == n
    assert {p.headers["authorization"] for p in posts} == {f"Bearer {KEY}"}
    assert all(
        parse_qs(urlsplit(p.path).query) == {"subscription-key": [SUBKEY], "code": [CODE]} for p in posts
    )
    out = tmp_path / "out"
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
    err = capsys.readouterr().err
    result = json.loads((out / "api_test_results.json").read_text(encoding="utf-8"))
    # the endpoint is kept (scheme, host, port, path), every query value is ***
    assert result["model"]["api"]["base_url"] == f"http://127.0.0.1:{port}/v1?subscription-key=***&code=***"
    errors = [r["error"] for r in result["records"] if r.get("error")]
    assert errors == [f"HTTP 400 (invalid_request_error): {MARK}"] * len(FORMS)
    answers = [r["raw_output"] for r in result["records"] if not r.get("error")]
    assert answers and set(answers) == {MARK}  # a 200 answer holding the key is withheld whole
    written = [p for folder in (out, tmp_path / "report") for p in folder.rglob("*") if p.is_file()]
    assert {"api_test_intermediate.jsonl", "api_test_results.json", "index.html"} <= {p.name for p in written}
    found = {p.name: leaks(p.read_bytes().decode("utf-8", "replace")) for p in written}
    assert {name: f for name, f in found.items() if f} == {}
    assert leaks(err) == set() and "HTTP 400 (invalid_request_error)" in err
    for path in written:  # and nothing that decodes to one of them either
        if path.suffix in (".json", ".jsonl", ".csv", ".html", ".tex"):
            assert not holds_secret(path.read_text(encoding="utf-8"), [KEY, SUBKEY, CODE]), path.name
    assert os.environ["SUBKEY"] == SUBKEY  # (the environment itself is left alone)


@pytest.mark.parametrize("name", ORDER)
def test_each_form_is_recognised(name: str) -> None:
    text = f"upstream said: {FORMS[name]} (end)"
    assert holds_secret(text, [KEY])
    assert holds_secret(text.replace(KEY[:4], ""), [KEY])  # a piece of it is enough


@pytest.mark.parametrize(
    "text",
    [
        "HTTP 400: the request is invalid",
        "Resposta: C",
        "sha256 " + "ab" * 32,
        "Basic information about it",
        base64.b64encode(b"an ordinary sentence, encoded").decode(),
    ],
)
def test_ordinary_text_is_not_withheld(text: str) -> None:
    assert not holds_secret(text, [KEY, SUBKEY, CODE])


def test_a_document_keeps_its_shape() -> None:
    doc = json.dumps({"a": "fine", "b": [f"bad {FORMS['hex']}", 3], "c": {"d": "ok"}}, indent=2) + "\n"
    assert json.loads(scrub_document(doc, ".json", [KEY])) == {"a": "fine", "b": [MARK, 3], "c": {"d": "ok"}}
    csv_text = f'id,text\n1,fine\n2,"{FORMS["two_lines"]}"\n'
    assert scrub_document(csv_text, ".csv", [KEY]) == f"id,text\n1,fine\n2,{MARK}\n"
    page = f"<p>one</p>\n<pre>{FORMS['three_lines']}</pre>\n<p>two</p>"
    assert scrub_document(page, ".html", [KEY]) == f"<p>one</p>\n{MARK}\n{MARK}\n{MARK}\n<p>two</p>"
