"""A server that moved to another host or port resumes the log, with a warning (issue 40).

The documented ``base_url: http://${VLLM_HOST}:8000/v1`` points at whichever node a job
lands on: the endpoint is provenance, not a setting that changes the answers.  Another
path (another API) is still refused.  Two real loopback servers on two ports.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from api_fakes import FakeServer, Reply, Request, answer_for, openai_completion, user_text_openai
from api_fakes import write_config as api_config

from enade_bench.cli.main import main


def _answer(req: Request) -> Reply:
    return Reply(200, openai_completion(answer_for(user_text_openai(req.json()))))


def test_another_port_resumes_with_a_warning_another_path_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def config(url: str, suffix: str = "/v1") -> Path:
        monkeypatch.setenv("ENADE_TEST_VLLM_HOST", url.removeprefix("http://"))
        return api_config(
            tmp_path,
            {
                "provider": "openai_compatible",
                "model": "m",
                "max_concurrency": 1,
                "base_url": "http://${ENADE_TEST_VLLM_HOST}" + suffix,
            },
        )

    with FakeServer(_answer) as first:
        assert main(["run", str(config(first.url)), "--limit", "2", "--quiet"]) == 0
    capsys.readouterr()
    with FakeServer(_answer) as second:
        assert second.url != first.url
        assert main(["run", str(config(second.url)), "--limit", "4", "--quiet"]) == 0
        assert len(second.posts()) == 2  # the two logged answers were resumed, not asked again
        err = capsys.readouterr().err
        assert "warning:" in err and "the server moved (model identity.api.base_url:" in err
        assert f"{first.url}/v1 -> {second.url}/v1" in err
        assert main(["run", str(config(second.url, "/v2")), "--limit", "4", "--quiet"]) == 2
        assert "cannot resume" in capsys.readouterr().err
    log = (tmp_path / "out" / "api_test_intermediate.jsonl").read_text(encoding="utf-8")
    assert second.url in log.splitlines()[0]  # the header now names where the log continued
