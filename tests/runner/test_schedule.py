"""One seed rule for every path: chunk seed (seed + chunk index) + sample, live and batch alike."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from api_fakes import FAKE_KEY, FakeServer, Reply, openai_completion, user_text_openai, write_config
from batch_fakes import OpenAIBatchFake

from enade_bench.benchmarks import run_config
from enade_bench.cli.main import main
from enade_bench.runner.plan import RunOptions

SEED, BATCH, SAMPLES, N = 42, 2, 2, 5
SAMPLED = {"temperature": 0.7, "n_samples": SAMPLES, "batch_size": BATCH, "seed": SEED}


def _expected(index: int) -> list[int]:
    """The documented rule (docs/methods.md): seed + index // batch_size, then + sample."""
    return [SEED + index // BATCH + k for k in range(SAMPLES)]


def test_live_and_batch_requests_get_the_same_seeds(tmp_path: Path) -> None:
    batch_fake = OpenAIBatchFake("/v1")
    with FakeServer(batch_fake) as server:
        cfg = write_config(
            tmp_path,
            {"provider": "openai", "model": "m", "api_key": FAKE_KEY, "base_url": server.url + "/v1"},
            SAMPLED,
        )
        assert main(["run", str(cfg), "--batch-submit", "--limit", str(N), "--quiet"]) == 0
    (job,) = batch_fake.jobs.values()
    batch_seeds: dict[str, list[int]] = defaultdict(list)
    index_of: dict[str, int] = {}
    for rid, body in job:
        _, index, sample = rid.split("-")
        text = user_text_openai(body)
        index_of[text] = int(index)
        batch_seeds[text].insert(int(sample), body["seed"])
    assert len(index_of) == N
    for text, index in index_of.items():
        assert batch_seeds[text] == _expected(index)

    live_seeds: dict[str, list[int]] = defaultdict(list)

    def handler(req: Any) -> Reply:
        body = req.json()
        live_seeds[user_text_openai(body)].append(body["seed"])
        return Reply(200, openai_completion("Resposta: A"))

    live_dir = tmp_path / "live"
    live_dir.mkdir()
    with FakeServer(handler) as server:
        cfg = write_config(
            live_dir,
            {"provider": "openai", "model": "m", "api_key": FAKE_KEY, "base_url": server.url + "/v1"},
            SAMPLED,
        )
        (result,) = run_config(cfg, RunOptions(progress=False, limit=N)).results
    assert len(result.records) == N
    assert {text: sorted(seeds) for text, seeds in live_seeds.items()} == dict(batch_seeds)
