"""Issue 61: no text, key or echo from a file or a server makes a run crash or lose a paid answer."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml
from api_fakes import DEMO_CSV, FakeServer, Reply, openai_completion, write_config

from enade_bench.cli.main import main
from enade_bench.masking import forget_all


@pytest.fixture(autouse=True)
def _fresh() -> None:
    forget_all()


def _surrogate_questions(path: Path) -> Path:
    """Three demo questions as JSON, a lone ``\\ud83d`` (an emoji cut in half) in a stem and an option."""
    with DEMO_CSV.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))[:3]
    rows[0]["stem"] += " CUT"
    rows[1]["B"] += " CUT"
    path.write_text(json.dumps(rows, ensure_ascii=False).replace("CUT", "\\ud83d"), encoding="utf-8")
    return path


def test_lone_surrogates_in_questions_and_answers_run_resume_report_and_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = _surrogate_questions(tmp_path / "q.json")
    server = FakeServer(lambda req: Reply(200, openai_completion("Resposta: A \ud800")))
    with server:
        for model in ("m1", "m2"):
            (tmp_path / model).mkdir()
            cfg = write_config(
                tmp_path / model,
                {"provider": "openai_compatible", "model": model, "base_url": server.url + "/v1"},
                name=model,
            )
            data = yaml.safe_load(cfg.read_text(encoding="utf-8"))
            data["dataset"]["path"] = str(questions)
            cfg.write_text(yaml.safe_dump(data), encoding="utf-8")
            assert main(["validate", str(cfg), "--limit", "3"]) == 0
            asked = len(server.posts())
            assert main(["run", str(cfg), "--limit", "3", "--quiet"]) == 0
            assert len(server.posts()) == asked + 3
            assert main(["run", str(cfg), "--limit", "3", "--quiet"]) == 0  # resumed: nothing asked again
            assert len(server.posts()) == asked + 3
    err = capsys.readouterr().err
    assert err.count("lone surrogate") == 1 and "q.json: line 1: a lone surrogate U+D83D" in err
    out = tmp_path / "m1" / "out"
    result = json.loads((out / "m1_results.json").read_text(encoding="utf-8"))
    assert [r["raw_output"] for r in result["records"]] == ["Resposta: A \ud800"] * 3  # kept, as it came
    assert [r["prediction"] for r in result["records"]] == ["A"] * 3
    assert "\\ud800" in (out / "m1_results.json").read_text(encoding="utf-8")
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
    assert main(["compare", str(out), str(tmp_path / "m2" / "out"), "--out", str(tmp_path / "cmp")]) == 0


@pytest.mark.parametrize(
    ("key", "env", "named"),
    [
        ("sk-local\u20137f3a9b", {}, "model.api.api_key: the key holds a character that is not ASCII"),
        (
            "${MY_KEY}",
            {"MY_KEY": "chave de acesso"},
            "model.api.api_key (the variable MY_KEY): the key holds",
        ),
        (
            None,
            {"OPENAI_COMPATIBLE_API_KEY": "sk-ab\x07cd"},
            "OPENAI_COMPATIBLE_API_KEY: the key holds a control",
        ),
    ],
)
def test_a_key_no_header_can_carry_is_one_error_at_validate_that_never_shows_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    key: str | None,
    env: dict[str, str],
    named: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    api = {"provider": "openai_compatible", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key": key}
    assert main(["validate", str(write_config(tmp_path, api)), "--limit", "1"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and named in err[0], err
    assert not any(part in err[0] for part in ("7f3a9b", "chave", "sk-ab"))


def test_a_short_key_a_server_echoes_in_its_401_text_is_written_nowhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "sk-local-7f3a9b"  # 15 characters: weak, but an echo of it is withheld all the same
    refusal = {"error": {"message": f"Incorrect API key provided: {key}.", "type": "invalid_request_error"}}
    with FakeServer(lambda req: Reply(401, refusal)) as server:
        api = {"provider": "openai_compatible", "model": "m", "base_url": server.url + "/v1", "api_key": key}
        api["max_retries"] = 0
        main(["run", str(write_config(tmp_path, api)), "--limit", "2", "--quiet"])
        assert server.posts() and {p.headers["authorization"] for p in server.posts()} == {f"Bearer {key}"}
    captured = capsys.readouterr()
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert written and "Incorrect API key" not in captured.err
    assert key not in captured.out + captured.err
    assert not [p.name for p in written if key.encode() in p.read_bytes()]
