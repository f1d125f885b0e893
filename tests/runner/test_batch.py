"""--batch-submit / --batch-fetch against loopback fakes of each provider's batch API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from api_fakes import FAKE_KEY, FakeServer, write_config
from batch_fakes import AnthropicBatchFake, GeminiBatchFake, OpenAIBatchFake

from enade_bench.cli.main import main

FAIL_FIRST = {"S1-00001-0": "server_error", "S4-00002-0": "expired"}
RUN = ["--strategy", "S1", "--strategy", "S4", "--limit", "5", "--quiet"]


def _setup(provider: str, url: str) -> tuple[Any, dict[str, Any]]:
    if provider in {"openai", "maritaca"}:
        prefix = "/v1" if provider == "openai" else "/api"
        return OpenAIBatchFake(prefix, dict(FAIL_FIRST)), {"base_url": url + prefix, "model": "gpt-4o-mini"}
    if provider == "anthropic":
        return AnthropicBatchFake(url, dict(FAIL_FIRST)), {"base_url": url, "model": "claude-sonnet-4-6"}
    return GeminiBatchFake(dict(FAIL_FIRST)), {"base_url": url, "model": "gemini-2.5-flash"}


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("provider", ["openai", "maritaca", "anthropic", "google"])
def test_batch_round_trip_matches_live_run(tmp_path: Path, provider: str, capsys) -> None:  # type: ignore[no-untyped-def]
    fake: Any = None
    with FakeServer(lambda req: fake(req)) as server:  # noqa: PLW0108 - fake is bound below
        fake, api = _setup(provider, server.url)
        cfg = write_config(tmp_path, {"provider": provider, "api_key": FAKE_KEY, **api})
        out = tmp_path / "out"
        manifest_path = out / "api_test_batch_manifest.json"

        assert main(["run", str(cfg), "--batch-submit", *RUN]) == 0
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        assert len(manifest["jobs"]) == 1 and len(manifest["requests"]) == 10
        s4 = manifest["requests"]["S4-00002-0"]
        assert s4["strategy"] == "S4" and s4["permutation"] and s4["question_id"]
        assert manifest["requests"]["S1-00000-0"]["question_id"] == s4["question_id"].replace(
            s4["question_id"], manifest["requests"]["S1-00000-0"]["question_id"]
        )
        assert main(["run", str(cfg), "--batch-submit", *RUN]) == 0  # idempotent: nothing new
        assert len(json.loads(manifest_path.read_text(encoding="utf-8"))["jobs"]) == 1
        capsys.readouterr()

        assert main(["run", str(cfg), "--batch-fetch", *RUN]) == 0  # still running
        assert "pending" in capsys.readouterr().out
        assert not (out / "api_test_S1_results.json").exists()

        fake.complete = True
        assert main(["run", str(cfg), "--batch-fetch", *RUN]) == 0  # collects, re-queues 2
        text = capsys.readouterr().out
        assert "re-queued 2" in text and "pending" in text
        assert not (out / "api_test_S1_results.json").exists()
        assert main(["run", str(cfg), "--batch-fetch", *RUN]) == 3  # the re-queued job; one refusal
        captured = capsys.readouterr()
        assert "pending" not in captured.out
        assert (
            "2 question(s) ended in an error" in captured.err
            and "rerun without --batch-fetch" in captured.err
        )
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        assert len(manifest["jobs"]) == 2 and sorted(manifest["jobs"][1]["request_ids"]) == sorted(FAIL_FIRST)
        batch_files = _files(out)

        downloads = fake.downloads
        assert main(["run", str(cfg), "--batch-fetch", *RUN]) == 3  # idempotent
        assert fake.downloads == downloads
        assert _files(out) == batch_files

        live = tmp_path / "live"
        assert main(["run", str(cfg), *RUN, "--output-dir", str(live)]) == 3  # the same refusal
    live_files = _files(live)
    for name in (
        "api_test_S1_results.json",
        "api_test_S4_results.json",
        "api_test_S1_summary.csv",
        "api_test_S4_summary.csv",
        "api_test_table1.csv",
    ):
        if name.endswith(".json"):  # the same results; each names its own log (whose tries differ)
            batch, same = json.loads(batch_files[name]), json.loads(live_files[name])
            assert batch["log"].pop("sha256") and same["log"].pop("sha256")
            answered = [r for r in batch["records"] if not r["error"]]
            assert answered and all(r["usage"] == {"input_tokens": 20, "output_tokens": 3} for r in answered)
            for r in same[
                "records"
            ]:  # the provider's token counts, the same; only a live request has seconds
                assert r.get("usage", {}).pop("seconds", 0) >= 0
            assert batch == same, name
        else:
            assert batch_files[name] == live_files[name], name
    for sid in ("S1", "S4"):  # the manifest maps request ids to the right question and permutation
        for i, record in enumerate(json.loads(batch_files[f"api_test_{sid}_results.json"])["records"]):
            entry = manifest["requests"][f"{sid}-{i:05d}-0"]
            assert (entry["question_id"], entry["permutation"]) == (record["id"], record["permutation"])
    result = json.loads(batch_files["api_test_S1_results.json"])
    errors = [r for r in result["records"] if r["error"]]
    assert len(errors) == 1 and errors[0]["error"].startswith("HTTP 400 (")
    assert all(r["raw_output"] for r in result["records"] if not r["error"])
    for blob in [*batch_files.values(), *live_files.values()]:
        text = blob.decode("utf-8")
        assert all(FAKE_KEY[i : i + 12] not in text for i in range(len(FAKE_KEY) - 12))


def test_batch_rejects_scoring_strategies_and_providers_without_batch(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    cfg = write_config(
        tmp_path, {"provider": "openai", "model": "m", "api_key": FAKE_KEY}, {"run_all_strategies": True}
    )
    assert main(["run", str(cfg), "--batch-submit", "--strategy", "S1", "--strategy", "S5"]) == 2
    assert "S5" in capsys.readouterr().err
    cfg = write_config(tmp_path, {"provider": "nvidia", "model": "m", "api_key": FAKE_KEY}, name="nv")
    assert main(["run", str(cfg), "--batch-submit"]) == 2
    assert "no batch API" in capsys.readouterr().err
    cfg = write_config(tmp_path, {"provider": "openai", "model": "m", "api_key": FAKE_KEY}, name="nf")
    assert main(["run", str(cfg), "--batch-fetch"]) == 2
    assert "--batch-submit first" in capsys.readouterr().err


def test_permanently_failing_requests_are_recorded_after_max_attempts(tmp_path: Path) -> None:
    fake = OpenAIBatchFake("/v1")
    fake.failure = lambda rid: "server_error" if rid == "run-00000-0" else None  # type: ignore[method-assign]
    fake.complete = True
    with FakeServer(fake) as server:
        cfg = write_config(
            tmp_path,
            {"provider": "openai", "model": "m", "api_key": FAKE_KEY, "base_url": server.url + "/v1"},
        )
        assert main(["run", str(cfg), "--batch-submit", "--limit", "2", "--quiet"]) == 0
        statuses = [main(["run", str(cfg), "--batch-fetch", "--limit", "2", "--quiet"]) for _ in range(6)]
        assert set(statuses) <= {0, 3} and statuses[-1] == 3  # done, with one question in error
    from enade_bench.runner.batch import MAX_ATTEMPTS

    manifest = json.loads((tmp_path / "out" / "api_test_batch_manifest.json").read_text(encoding="utf-8"))
    assert len(manifest["jobs"]) == MAX_ATTEMPTS
    result = json.loads((tmp_path / "out" / "api_test_results.json").read_text(encoding="utf-8"))
    first = result["records"][0]
    assert (
        first["error"] == "HTTP 500 (server_error): The server had an error" and first["prediction"] is None
    )


def test_a_batch_id_holding_a_piece_of_the_key_is_stored_as_it_is_and_collected(tmp_path: Path) -> None:
    """Issue 51: a batch id is sent back to fetch the batch; withheld, it would 404 every time."""
    fake = OpenAIBatchFake("/v1")
    fake.job_prefix = "batch_" + FAKE_KEY[8:28] + "_"  # 20 characters of the key in the provider's id
    with FakeServer(fake) as server:
        cfg = write_config(
            tmp_path,
            {
                "provider": "openai",
                "api_key": FAKE_KEY,
                "base_url": server.url + "/v1",
                "model": "gpt-4o-mini",
            },
        )
        run = ["--strategy", "S1", "--limit", "2", "--quiet"]
        assert main(["run", str(cfg), "--batch-submit", *run]) == 0
        manifest = json.loads((tmp_path / "out" / "api_test_batch_manifest.json").read_text(encoding="utf-8"))
        assert [job["id"] for job in manifest["jobs"]] == [fake.job_prefix + "0"]
        fake.complete = True
        assert main(["run", str(cfg), "--batch-fetch", *run]) == 3  # collected (the demo's first is refused)
    records = json.loads((tmp_path / "out" / "api_test_S1_results.json").read_text(encoding="utf-8"))[
        "records"
    ]
    assert [r["prediction"] is not None for r in records] == [False, True]


class _EchoingBatch(OpenAIBatchFake):
    """Every batch answer ends with the key (a proxy that echoes the request's header)."""

    @staticmethod
    def _chat(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status, payload = OpenAIBatchFake._chat(body)
        if status == 200:
            payload["choices"][0]["message"]["content"] += f" (auth: Bearer {FAKE_KEY})"
        return status, payload


def _submit_and_fetch(tmp_path: Path, fake: OpenAIBatchFake, key: str) -> list[dict[str, Any]]:
    """Three S1 questions through OpenAI's batch API on ``fake`` with ``key``: submitted, then fetched
    (exit 3: the demo's first question is refused); the results file's records."""
    with FakeServer(fake) as server:
        cfg = write_config(
            tmp_path,
            {"provider": "openai", "api_key": key, "base_url": server.url + "/v1", "model": "gpt-4o-mini"},
        )
        run = ["--strategy", "S1", "--limit", "3", "--quiet"]
        assert main(["run", str(cfg), "--batch-submit", *run]) == 0
        fake.complete = True
        assert main(["run", str(cfg), "--batch-fetch", *run]) == 3
    results = tmp_path / "out" / "api_test_S1_results.json"
    return list(json.loads(results.read_text(encoding="utf-8"))["records"])


def test_a_batch_answer_echoing_the_key_keeps_its_prediction_masked(tmp_path: Path) -> None:
    """Issue 51: the manifest keeps the answer with the key masked, so it is still scored."""
    records = _submit_and_fetch(tmp_path, _EchoingBatch("/v1"), FAKE_KEY)
    out = tmp_path / "out"
    answered = [r for r in records if not r["error"]]
    assert len(answered) == 2 and all(r["prediction"] is not None for r in answered)
    assert all(r["raw_output"].endswith("(auth: Bearer ***)") and r["extra"]["withheld"] for r in answered)
    for path in out.iterdir():
        assert FAKE_KEY[10:22] not in path.read_text(encoding="utf-8"), path


WEAK_KEY = "sk-local-7f3a9b"  # 15 characters: a weak key (under STRONG_SECRET), still withheld where echoed


class _WeakEcho(OpenAIBatchFake):
    """Echoes a short key: inside an answer, and in OpenAI's 401 wording as a request's error."""

    @staticmethod
    def _chat(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status, payload = OpenAIBatchFake._chat(body)
        if status != 200:
            message = (
                f"Incorrect API key provided: {WEAK_KEY}. You can find your API key at "
                "https://platform.openai.com/account/api-keys."
            )
            return 401, {
                "error": {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}
            }
        payload["choices"][0]["message"]["content"] += f" (served for key {WEAK_KEY})"
        return status, payload


def test_a_short_key_echoed_in_a_batch_is_absent_from_every_file(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Issue 61: a key of any length that the batch API echoes, in an answer or an error, is withheld
    from the manifest, the results, the summary and the log; the answers keep their predictions."""
    records = _submit_and_fetch(tmp_path, _WeakEcho("/v1"), WEAK_KEY)
    out = tmp_path / "out"
    answered = [r for r in records if not r["error"]]
    assert len(answered) == 2 and all(
        r["prediction"] is not None and r["extra"]["withheld"] for r in answered
    )
    assert [r["error"] for r in records if r["error"]] and len(records) == 3
    written = {p: p.read_text(encoding="utf-8", errors="replace") for p in out.rglob("*") if p.is_file()}
    assert len(written) >= 4  # manifest, results, summary, intermediate log
    assert [p.name for p, text in written.items() if WEAK_KEY.casefold() in text.casefold()] == []
    captured = capsys.readouterr()
    assert WEAK_KEY not in captured.out + captured.err
