"""Keeping secrets out never damages a result (issue 51).

Local servers are started with made-up keys (vLLM ``--api-key``, LM Studio's ``lm-studio``).
A key too short or too common to be told from data is sent, kept out of the config and the
URLs, and said in one ``warning:`` line; a reply that echoes it as a word is withheld after
its answer was extracted (issue 61); it never withholds a prediction, a field name or a
provider name.  A strong key echoed in an answer withholds the raw text only after the
answer was extracted, and the record says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from api_fakes import (
    FAKE_KEY,
    FakeServer,
    Reply,
    answer_for,
    openai_completion,
    user_text_openai,
    write_config,
)

from enade_bench.cli.main import main
from enade_bench.masking import MARK, add_vocabulary, forget_all, remember, scrub, weak_secrets
from enade_bench.report import load_results
from enade_bench.runner.execute import WITHHELD_NOTE


@pytest.fixture(autouse=True)
def _fresh() -> None:
    forget_all()


def _echo(key: str) -> FakeServer:
    """Answers every question, the answer followed by ``key`` (a server that echoes it)."""
    return FakeServer(
        lambda req: Reply(200, openai_completion(f"{answer_for(user_text_openai(req.json()))} [{key}]"))
    )


def _written(folder: Path) -> str:
    return "".join(
        p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.suffix in {".json", ".jsonl", ".csv"}
    )


def test_made_up_keys_keep_every_prediction_and_the_folder_readable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for key in ("resposta", "accuracy", "prediction", "Medicina"):  # an answer word, fields, a course
        (tmp_path / key).mkdir()
        with _echo(key) as server:
            cfg = write_config(
                tmp_path / key,
                {
                    "provider": "openai_compatible",
                    "model": "m",
                    "api_key": key,
                    "base_url": server.url + "/v1",
                    "max_concurrency": 1,
                },
            )
            assert main(["run", str(cfg), "--limit", "3", "--quiet"]) == 0
            assert {p.headers["authorization"] for p in server.posts()} == {f"Bearer {key}"}  # still sent
        out = tmp_path / key / "out"
        result = json.loads((out / "api_test_results.json").read_text(encoding="utf-8"))
        assert [r["prediction"] is not None for r in result["records"]] == [True] * 3, key
        # issue 61: the echo is withheld (after the answer was extracted), the data and fields are not
        assert [r["raw_output"] for r in result["records"]] == [MARK] * 3, key
        assert result["config"]["model"]["api"]["api_key"] == "***"  # never written where known to be
        assert result["model"]["api"]["provider"] == "openai_compatible" and "accuracy" in result["totals"]
        assert f"[{key}]" not in _written(out) and MARK not in json.dumps(result["totals"]), key
        if key == "accuracy":  # the key that renamed totals.accuracy: the whole report, once (slow)
            assert main(["report", str(out), "--out", str(tmp_path / key / "report")]) == 0, key
        else:  # what the report reads (results file, totals, log), without rendering it again
            assert [e.result.totals.n for e in load_results([out])] == [3], key
        warnings = [
            line for line in capsys.readouterr().err.splitlines() if line.startswith("warning: model.api")
        ]
        assert (
            len(warnings) == 1
            and "under 16 characters" in warnings[0]
            and "cannot be told from data" in warnings[0]
        )


def test_a_strong_key_echoed_in_an_answer_is_withheld_after_the_answer_was_extracted(tmp_path: Path) -> None:
    with _echo(FAKE_KEY) as server:
        cfg = write_config(
            tmp_path,
            {
                "provider": "openai_compatible",
                "model": "m",
                "api_key": FAKE_KEY,
                "base_url": server.url + "/v1",
                "max_concurrency": 1,
            },
        )
        assert main(["run", str(cfg), "--limit", "2", "--quiet"]) == 0
    out = tmp_path / "out"
    records = json.loads((out / "api_test_results.json").read_text(encoding="utf-8"))["records"]
    assert [r["prediction"] is not None for r in records] == [True, True]
    assert {r["raw_output"] for r in records} == {MARK}
    assert all(r["extra"]["withheld"].startswith(WITHHELD_NOTE) for r in records)
    assert FAKE_KEY[5:17] not in _written(out)


def test_a_long_key_found_in_the_data_or_the_vocabulary_is_weak() -> None:
    remember(["sk-a-long-and-unique-key-0123456789"])
    assert scrub("echo sk-a-long-and-unique-key-0123456789") == MARK
    remember(["Lei nº 8.080/1990 estabelece"])
    assert weak_secrets() == []
    assert add_vocabulary(["A Lei nº 8.080/1990 estabelece os princípios"]) == [
        "Lei nº 8.080/1990 estabelece"
    ]
    # issue 61: weak, yet a reply or error holding it whole is withheld, never left in clear
    assert scrub("A Lei nº 8.080/1990 estabelece os princípios") == MARK
    assert scrub("A Lei nº 8.080/1990 estabeleceu") == "A Lei nº 8.080/1990 estabeleceu"
    assert scrub("Authorization: Bearer Lei nº 8.080/1990 estabelece") == MARK
