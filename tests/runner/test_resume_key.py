"""Resume keyed on what changes the answers (issue 26), end to end through an API run.

Before: resume was refused after changing ``max_concurrency`` or after fixing a wrong answer
key, though no prompt changed; the refusal never said what changed; ``validate`` said
"ok, 3 calls" for a run that then refused its own log. The server is a loopback fake
speaking OpenAI's chat completions shape.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from api_fakes import DEMO_CSV, FAKE_KEY, FakeServer, Reply, openai_completion, user_text_openai

from enade_bench.cli.main import main
from enade_bench.results.log_key import FINGERPRINT_VERSION

N = 6


@pytest.fixture
def exam(tmp_path: Path) -> pd.DataFrame:
    rows = pd.read_csv(DEMO_CSV, dtype=str, keep_default_na=False).head(N)
    rows.to_csv(tmp_path / "exam.csv", index=False)
    return rows


def _config(tmp: Path, url: str, **api: object) -> Path:
    cfg = {
        "name": "rk",
        "dataset": {"benchmark": "enade", "path": "exam.csv"},
        "model": {
            "type": "api",
            "api": {"provider": "openai", "model": "m", "api_key": FAKE_KEY, "base_url": url + "/v1", **api},
        },
        "evaluation": {"method": "api", "seed": 42},
        "output": {"dir": "out"},
    }
    path = tmp / "rk.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return Path(path.name)  # as typed in the folder the tests run in (each test chdirs to tmp)


def _server(rows: pd.DataFrame) -> FakeServer:
    """Always answers the key of the demo file as it was first written (a model that knows it)."""
    keys = {stem[:80]: answer for stem, answer in zip(rows["stem"], rows["answer"], strict=True)}

    def handler(req):  # type: ignore[no-untyped-def]
        text = user_text_openai(req.json())
        return Reply(200, openai_completion("Resposta: " + next(a for s, a in keys.items() if s in text)))

    return FakeServer(handler)


def _result(tmp: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((tmp / "out" / "rk_results.json").read_text(encoding="utf-8"))


def test_throughput_settings_resume_and_a_fixed_key_rescores(
    exam: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    wrong = exam.copy()
    wrong.loc[0, "answer"] = "ABCDE"[("ABCDE".index(exam.loc[0, "answer"]) + 1) % 5]  # a typo in the key
    wrong.to_csv(tmp_path / "exam.csv", index=False)
    with _server(exam) as server:
        cfg = _config(tmp_path, server.url, max_concurrency=4)
        assert main(["run", str(cfg), "--quiet", "--limit", "4"]) == 0  # killed after 4 of 6, say
        assert len(server.posts()) == 4
        assert _result(tmp_path)["totals"]["correct"] == 3  # the typo costs one

        header = json.loads((tmp_path / "out" / "rk_intermediate.jsonl").read_text().splitlines()[0])
        assert header["fingerprint_version"] == FINGERPRINT_VERSION
        assert (
            header["settings"]["evaluation.seed"] == 42
            and "model.api.max_concurrency" not in header["settings"]
        )

        # throughput settings changed and the key fixed: validate says the log resumes
        exam.to_csv(tmp_path / "exam.csv", index=False)
        cfg = _config(tmp_path, server.url, max_concurrency=1, timeout_s=30, max_retries=2)
        capsys.readouterr()
        assert main(["validate", str(cfg)]) == 0
        out = capsys.readouterr().out
        assert (
            "note: run: resumes out/rk_intermediate.jsonl: 4 of 6 answer(s) logged, 1 re-scored against "
            "the answer key on disk (it changed); the model's identity is compared when it loads"
        ) in out, out
        assert main(["run", str(cfg), "--quiet"]) == 0
        assert len(server.posts()) == 4 + 2  # before: refused, and --no-resume paid for all 6 again
    result = _result(tmp_path)
    assert result["totals"]["correct"] == 6 and result["totals"]["n"] == 6
    first = result["records"][0]
    assert first["answer"] == exam.loc[0, "answer"] and first["correct"] is True


def test_a_changed_setting_is_refused_naming_old_and_new(
    exam: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with _server(exam) as server:
        assert main(["run", str(_config(tmp_path, server.url)), "--quiet", "--limit", "3"]) == 0
        cfg = _config(tmp_path, server.url, max_tokens=50)
        capsys.readouterr()
        assert main(["validate", str(cfg)]) == 2  # before: "ok, 3 calls", then the run refused
        out = capsys.readouterr().out
        expected = (
            "out/rk_intermediate.jsonl: cannot resume: 1 setting(s) that change the answers differ from the "
            "log's (model.api.max_tokens: 100 -> 50); put them back, or rerun with --no-resume (asks every "
            "question again) or choose another output.dir"
        )
        assert f"problem: run: {expected}" in out, out
        assert main(["run", str(cfg), "--quiet"]) == 2
        assert capsys.readouterr().err.strip() == f"error: {expected}"
        assert len(server.posts()) == 3  # nothing sent
        assert main(["validate", str(cfg), "--limit", "3"]) == 2
        assert main(["run", str(cfg), "--quiet", "--dry-run", "--no-resume"]) == 0
        assert (
            "--no-resume: the log out/rk_intermediate.jsonl will be started over" in capsys.readouterr().out
        )


def test_a_changed_question_text_is_refused(
    exam: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with _server(exam) as server:
        assert main(["run", str(_config(tmp_path, server.url)), "--quiet", "--limit", "3"]) == 0
        edited = exam.copy()
        edited.loc[1, "B"] = edited.loc[1, "B"] + " (corrigida)"
        edited.to_csv(tmp_path / "exam.csv", index=False)
        capsys.readouterr()
        assert main(["run", str(_config(tmp_path, server.url)), "--quiet"]) == 2
        err = capsys.readouterr().err.strip()
        assert err == (
            "error: out/rk_intermediate.jsonl: cannot resume: the text or options of 1 logged question(s) "
            f"changed in the data since they were answered (first: {exam.loc[1, 'id']} (shuffle 0)); rerun "
            "with --no-resume (asks every question again) or choose another output.dir"
        )
        assert len(server.posts()) == 3


def test_a_log_from_before_the_settings_were_recorded(
    exam: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migrated when its old fingerprint matches this setup (header rewritten); refused clearly if not."""
    from enade_bench.benchmarks import load_experiment
    from enade_bench.runner.plan import RunOptions
    from enade_bench.runner.run import load_backend
    from enade_bench.runner.write import legacy_fingerprint

    monkeypatch.chdir(tmp_path)
    log = tmp_path / "out" / "rk_intermediate.jsonl"
    with _server(exam) as server:
        cfg = _config(tmp_path, server.url)
        assert main(["run", str(cfg), "--quiet", "--limit", "3"]) == 0
        _, exp = load_experiment(cfg, RunOptions(progress=False))
        exp = load_backend(exp, RunOptions(progress=False))
        old = legacy_fingerprint(exp, exp.strategies[0])
        lines = log.read_text(encoding="utf-8").splitlines()
        log.write_text("\n".join([json.dumps({"kind": "header", "fingerprint": old}), *lines[1:]]) + "\n")
        assert main(["validate", str(cfg)]) == 0  # decided when the model loads
        assert main(["run", str(cfg), "--quiet"]) == 0
        assert len(server.posts()) == 3 + 3  # the three logged answers were kept
        assert json.loads(log.read_text().splitlines()[0])["fingerprint_version"] == FINGERPRINT_VERSION

        log.write_text(
            "\n".join([json.dumps({"kind": "header", "fingerprint": "0" * 64}), *lines[1:]]) + "\n"
        )
        capsys.readouterr()
        assert main(["run", str(cfg), "--quiet"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(
            "error: out/rk_intermediate.jsonl: cannot resume: this log was written by an "
            "older enade-bench, which recorded no settings"
        )
        assert "--no-resume" in err and len(server.posts()) == 6
