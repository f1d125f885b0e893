"""The flips file's ``stem`` is the question's stem, not the prompt's tail (issue 32).

Two models answer through a loopback fake speaking OpenAI's chat completions shape; one
gets two questions wrong. Before, ``stem`` held the last 160 characters of the rendered
prompt (for log_prob prompts, which list no options: the chat template's tail and
``Resposta:``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from api_fakes import DEMO_CSV, FAKE_KEY, FakeServer, Reply, openai_completion, user_text_openai

from enade_bench.cli.main import main
from enade_bench.compare.table import record_stem
from enade_bench.results.records import QuestionRecord

N = 5
WRONG = (1, 3)  # the rows model 'weak' answers wrong


def _config(tmp: Path, name: str, url: str) -> str:
    cfg = {
        "name": name,
        "dataset": {"benchmark": "enade", "path": "exam.csv"},
        "model": {
            "type": "api",
            "api": {"provider": "openai", "model": name, "api_key": FAKE_KEY, "base_url": url + "/v1"},
        },
        "evaluation": {"method": "api", "seed": 42},
        "output": {"dir": f"out_{name}"},
    }
    (tmp / f"{name}.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return f"{name}.yaml"


def test_the_flips_file_holds_each_question_stem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    rows = pd.read_csv(DEMO_CSV, dtype=str, keep_default_na=False).head(N)
    rows.to_csv(tmp_path / "exam.csv", index=False)
    keys = {
        str(stem)[:80]: (i, str(answer))
        for i, (stem, answer) in enumerate(zip(rows["stem"], rows["answer"], strict=True))
    }

    def handler(req):  # type: ignore[no-untyped-def]
        body = req.json()
        i, answer = next(v for s, v in keys.items() if s in user_text_openai(body))
        if body["model"] == "weak" and i in WRONG:
            answer = "ABCDE"[("ABCDE".index(answer) + 1) % 5]
        return Reply(200, openai_completion("Resposta: " + answer))

    with FakeServer(handler) as server:
        for name in ("strong", "weak"):
            assert main(["run", _config(tmp_path, name, server.url), "--quiet"]) == 0
    assert main(["compare", "out_strong", "out_weak", "--out", "cmp"]) == 0
    flips = pd.read_csv(tmp_path / "cmp" / "flips.csv", dtype=str, keep_default_na=False)
    assert sorted(flips["item"]) == sorted(rows["id"][list(WRONG)])
    stems = dict(zip(rows["id"], rows["stem"], strict=True))
    for item, stem in zip(flips["item"], flips["stem"], strict=True):
        whole = " ".join(stems[item].split())
        assert stem == (whole if len(whole) <= 160 else "…" + whole[-160:])
        assert "Resposta" not in stem and "Leia a questão" not in stem


def test_a_record_written_before_it_kept_the_stem_gives_the_prompt_excerpt() -> None:
    old = QuestionRecord.model_construct(stem=None, prompt="Instruções\nQuestão: 2+3?\nA) um\nE) cinco")
    assert record_stem(old) == "Instruções Questão: 2+3?"
