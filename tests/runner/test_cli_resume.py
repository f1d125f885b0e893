"""Resume, as a user meets it (issue 32): a corrected key is said, a path's spelling does not
matter, a corrupt log line names its line and the way out.

End to end through an API run against a loopback fake speaking OpenAI's chat completions shape.
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
LOG = Path("out") / "rk_intermediate.jsonl"


@pytest.fixture
def exam(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> pd.DataFrame:
    monkeypatch.chdir(tmp_path)
    rows = pd.read_csv(DEMO_CSV, dtype=str, keep_default_na=False).head(N)
    rows.to_csv(tmp_path / "exam.csv", index=False)
    return rows


def _config(tmp: Path, url: str, data: str = "exam.csv") -> str:
    cfg = {
        "name": "rk",
        "dataset": {"benchmark": "enade", "path": data},
        "model": {
            "type": "api",
            "api": {"provider": "openai", "model": "m", "api_key": FAKE_KEY, "base_url": url + "/v1"},
        },
        "evaluation": {"method": "api", "seed": 42},
        "output": {"dir": "out"},
    }
    (tmp / "rk.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return "rk.yaml"


def _server(rows: pd.DataFrame) -> FakeServer:
    """Answers the key of the file as first written (a model that knows it)."""
    keys = {stem[:80]: answer for stem, answer in zip(rows["stem"], rows["answer"], strict=True)}

    def handler(req):  # type: ignore[no-untyped-def]
        text = user_text_openai(req.json())
        return Reply(200, openai_completion("Resposta: " + next(a for s, a in keys.items() if s in text)))

    return FakeServer(handler)


def test_run_says_when_it_rescores_logged_answers_against_a_changed_key(
    exam: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _server(exam) as server:
        cfg = _config(tmp_path, server.url)
        assert main(["run", cfg, "--quiet", "--limit", "4"]) == 0
        fixed = exam.copy()
        for row in (0, 2):  # the key of two answered questions changes
            old = str(exam.at[row, "answer"])
            fixed.at[row, "answer"] = "ABCDE"[("ABCDE".index(old) + 1) % 5]
        fixed.to_csv(tmp_path / "exam.csv", index=False)
        capsys.readouterr()
        assert main(["run", cfg, "--quiet"]) == 0
        notes = [line for line in capsys.readouterr().err.splitlines() if "re-scored" in line]
        assert notes == [
            f"note: run: {LOG}: 2 logged answer(s) of 2 question(s) re-scored against the answer key on disk: "
            "their gold answer changed since they were answered"
        ]
        assert len(server.posts()) == N  # the 4 logged answers were kept, 2 asked
    result = json.loads((tmp_path / "out" / "rk_results.json").read_text(encoding="utf-8"))
    assert [r["answer"] for r in result["records"]] == list(fixed["answer"])
    assert result["totals"]["correct"] == N - 2


def test_run_says_nothing_when_the_key_did_not_change(
    exam: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _server(exam) as server:
        cfg = _config(tmp_path, server.url)
        assert main(["run", cfg, "--quiet", "--limit", "4"]) == 0
        assert main(["run", cfg, "--quiet"]) == 0
        assert "re-scored" not in capsys.readouterr().err


def test_the_same_data_file_by_an_absolute_path_resumes(
    exam: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _server(exam) as server:
        assert main(["run", _config(tmp_path, server.url), "--quiet", "--limit", "3"]) == 0
        absolute = _config(tmp_path, server.url, data=str((tmp_path / "exam.csv").resolve()))
        assert main(["validate", absolute]) == 0
        assert "resumes out/rk_intermediate.jsonl: 3 of 6 answer(s) logged" in capsys.readouterr().out
        assert main(["run", absolute, "--quiet"]) == 0  # before: "dataset.path: 'exam.csv' -> '/…'"
        assert len(server.posts()) == N


def test_a_log_keyed_on_the_path_spelling_still_resumes(exam: pd.DataFrame, tmp_path: Path) -> None:
    """A header written while ``dataset.path`` was a setting: compared without it, then rewritten."""
    with _server(exam) as server:
        assert main(["run", _config(tmp_path, server.url), "--quiet", "--limit", "3"]) == 0
        lines = (tmp_path / LOG).read_text(encoding="utf-8").splitlines()
        header = json.loads(lines[0])
        assert "dataset.path" not in header["settings"]
        header["settings"]["dataset.path"] = "exam.csv"
        header["fingerprint"] = "0" * 64  # the sha256 of those settings, as the older version wrote it
        (tmp_path / LOG).write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
        assert main(["run", _config(tmp_path, server.url, data=str(tmp_path / "exam.csv")), "--quiet"]) == 0
        assert len(server.posts()) == N
        rewritten = json.loads((tmp_path / LOG).read_text(encoding="utf-8").splitlines()[0])
        assert rewritten["fingerprint_version"] == FINGERPRINT_VERSION
        assert "dataset.path" not in rewritten["settings"]


def test_a_corrupt_line_in_the_middle_of_the_log_names_the_line_and_the_remedy(
    exam: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _server(exam) as server:
        cfg = _config(tmp_path, server.url)
        assert main(["run", cfg, "--quiet", "--limit", "4"]) == 0
        lines = (tmp_path / LOG).read_text(encoding="utf-8").splitlines()
        lines[2] = lines[2][: len(lines[2]) // 2]  # a half-written record, then more records
        (tmp_path / LOG).write_text("\n".join(lines) + "\n", encoding="utf-8")
        capsys.readouterr()
        assert main(["run", cfg, "--quiet"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"error: {LOG}: line 3 (byte ")
        assert "corrupt line in the middle of the log (not JSON)" in err[0]
        assert "move the log aside" in err[0] and "--no-resume (the earlier files are moved aside" in err[0]
        assert len(server.posts()) == 4  # nothing asked
        assert main(["run", cfg, "--quiet", "--no-resume"]) == 0  # the remedy works
        (kept,) = tmp_path.glob("out/previous_old/*/rk_intermediate.jsonl")
        assert kept.read_text(encoding="utf-8").splitlines() == lines  # the damaged log kept, not deleted


def test_validate_output_dir_looks_where_run_output_dir_wrote(
    exam: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``validate --output-dir DIR`` means what ``run --output-dir DIR`` means (it had no such option)."""
    with _server(exam) as server:
        cfg = _config(tmp_path, server.url)
        assert main(["run", cfg, "--quiet", "--limit", "2", "--output-dir", "elsewhere"]) == 0
        capsys.readouterr()
        assert main(["validate", cfg, "--output-dir", "elsewhere"]) == 0
        assert (
            "run: resumes elsewhere/rk_intermediate.jsonl: 2 of 6 answer(s) logged" in capsys.readouterr().out
        )
        assert main(["validate", cfg]) == 0  # output.dir: no log there
        assert "resumes" not in capsys.readouterr().out
        assert len(server.posts()) == 2
