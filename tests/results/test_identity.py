"""The typed model identity: old results files' free-form mappings migrate into it, it round-trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from enade_bench.errors import UserError
from enade_bench.results.identity import ApiIdentity, ModelIdentity, WeightsIdentity, legacy_identity
from enade_bench.results.store import dump_json, read_result

STORED = Path(__file__).resolve().parent / "data"
LOCAL_FILES = ["v1_demo_S4_results.json", "v1_enem_results.json", "v2_demo_S5_results.json"]


@pytest.mark.parametrize("name", LOCAL_FILES)
def test_stored_local_model_identity_migrates_without_loss(name: str) -> None:
    """Versions 1 and 2 (packaged SmolLM2 runs) held the HF backend's mapping; every value is kept."""
    stored = json.loads((STORED / name).read_text(encoding="utf-8"))
    old = stored["model"]
    assert set(old) == {"source", "file", "weights_sha256", "package", "package_version", "instruct", "dtype"}
    ident = read_result(STORED / name).model
    assert ident.backend == stored["config"]["model"]["type"] == "causal_lm"
    assert ident.engine == "transformers" and ident.name == old["file"]
    assert (ident.dtype, ident.instruct) == (old["dtype"], old["instruct"])
    assert ident.weights == WeightsIdentity(
        source="gguf",
        weights_sha256=old["weights_sha256"],
        package=old["package"],
        package_version=old["package_version"],
    )
    assert ident.details is None and ident.api is None
    # what the HF backend wrote in every record (version 2 records carry it)
    forms = {r.get("prompt_form") for r in stored["records"]} - {None}
    assert ident.prompt_form == "chat_template_rendered" and forms <= {ident.prompt_form}


def test_stored_api_identity_migrates_without_loss() -> None:
    """A version-2 openai_compatible run (completions, the packaged tokenizer's template)."""
    stored = json.loads((STORED / "v2_api_S5_results.json").read_text(encoding="utf-8"))
    old = stored["model"]
    ident = read_result(STORED / "v2_api_S5_results.json").model
    assert (ident.backend, ident.engine, ident.name) == ("api", "api", old["model"])
    assert ident.prompt_form == old["prompt_form"] == stored["records"][0]["prompt_form"]
    assert ident.api == ApiIdentity(
        provider=old["provider"],
        base_url=old["base_url"],
        endpoint=old["endpoint"],
        tokenizer=old["tokenizer"],
        prefill=old["prefill"],
    )
    assert ident.weights is None and ident.details is None


@pytest.mark.parametrize(
    ("old", "model_type", "expected"),
    [
        (  # hf_load before version 3: a hub model
            {
                "source": "hub",
                "name": "org/m",
                "revision": "main",
                "commit": "c0ffee",
                "instruct": False,
                "dtype": "bfloat16",
            },
            "causal_lm",
            ModelIdentity(
                backend="causal_lm",
                name="org/m",
                engine="transformers",
                dtype="bfloat16",
                instruct=False,
                prompt_form="raw",
                weights=WeightsIdentity(source="hub", revision="main", commit="c0ffee"),
            ),
        ),
        (  # a folder, seq2seq
            {
                "source": "folder",
                "path": "/models/t5",
                "weights_sha256": "ab" * 32,
                "instruct": True,
                "dtype": "float32",
            },
            "seq2seq",
            ModelIdentity(
                backend="seq2seq",
                name="/models/t5",
                engine="transformers",
                dtype="float32",
                instruct=True,
                prompt_form="chat_template_rendered",
                weights=WeightsIdentity(source="folder", weights_sha256="ab" * 32),
            ),
        ),
        (  # vllm_local before version 3
            {
                "source": "folder",
                "path": "/c/x",
                "weights_sha256": "cd" * 32,
                "engine": "vllm",
                "vllm_version": "0.32.0",
                "instruct": True,
                "dtype": "float32",
            },
            "vllm",
            ModelIdentity(
                backend="vllm",
                name="/c/x",
                engine="vllm",
                engine_version="0.32.0",
                dtype="float32",
                instruct=True,
                prompt_form="chat_template_rendered",
                weights=WeightsIdentity(source="folder", weights_sha256="cd" * 32),
            ),
        ),
        (  # a chat API
            {
                "type": "api",
                "provider": "anthropic",
                "model": "claude",
                "base_url": None,
                "endpoint": "chat",
                "prompt_form": "chat_messages",
                "tokenizer": None,
                "prefill": "none",
            },
            "api",
            ModelIdentity(
                backend="api",
                name="claude",
                engine="api",
                prompt_form="chat_messages",
                api=ApiIdentity(provider="anthropic", endpoint="chat", prefill="none"),
            ),
        ),
        (  # a test double, or any mapping no built-in backend wrote: kept whole
            {"model": "fixed", "seed": 3},
            None,
            ModelIdentity(backend="unknown", name="fixed", details={"model": "fixed", "seed": 3}),
        ),
        (  # an unplaced key of a local identity goes to details
            {"source": "gguf", "file": "m.gguf", "weights_sha256": "ef" * 32, "quant": "Q4"},
            "causal_lm",
            ModelIdentity(
                backend="causal_lm",
                name="m.gguf",
                engine="transformers",
                weights=WeightsIdentity(source="gguf", weights_sha256="ef" * 32),
                details={"quant": "Q4"},
            ),
        ),
    ],
)
def test_every_old_identity_shape_migrates(
    old: dict, model_type: str | None, expected: ModelIdentity
) -> None:  # type: ignore[type-arg]
    assert ModelIdentity.model_validate(legacy_identity(old, model_type)) == expected


def test_identity_round_trips_through_a_results_file(tmp_path: Path) -> None:
    """Every block filled; written as results files are written, read back equal, no nulls written."""
    result = read_result(STORED / "v2_demo_S5_results.json")
    ident = ModelIdentity(
        backend="acme",
        name="acme-7b",
        engine="acme-engine",
        engine_version="1.2",
        dtype="bfloat16",
        instruct=True,
        prompt_form="chat_messages",
        weights=WeightsIdentity(source="hub", revision="v1", commit="c0ffee"),
        api=ApiIdentity(provider="openai_compatible", base_url="http://h/v1", endpoint="completions"),
        details={"quantisation": {"bits": 4}, "shards": [1, 2]},
    )
    path = tmp_path / "x_results.json"
    path.write_text(dump_json(result.model_copy(update={"model": ident}).model_dump(mode="json")))
    written = json.loads(path.read_text())["model"]
    assert "null" not in json.dumps(written) and written["weights"] == {
        "source": "hub",
        "revision": "v1",
        "commit": "c0ffee",
    }
    again = read_result(path)
    assert again.model == ident and again.schema_version == 4


def test_unknown_identity_key_is_an_error_naming_it(tmp_path: Path) -> None:
    data = json.loads(dump_json(read_result(STORED / "v2_demo_S5_results.json").model_dump(mode="json")))
    data["model"]["colour"] = "red"
    path = tmp_path / "bad_results.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match=r"bad_results\.json: not a results file \(model\.colour"):
        read_result(path)
    with pytest.raises(ValidationError):
        ModelIdentity(backend="x", name="y", prompt_form="html")  # type: ignore[arg-type]


def test_fingerprint_data_leaves_out_only_the_package_version() -> None:
    ident = read_result(STORED / "v2_demo_S5_results.json").model
    data = ident.fingerprint_data()
    assert "package_version" not in json.dumps(data)
    reinstalled = ident.model_copy(
        update={"weights": ident.weights.model_copy(update={"package_version": "9"})}
    )  # type: ignore[union-attr]
    assert reinstalled.fingerprint_data() == data
    other = ident.model_copy(update={"dtype": "bfloat16"})
    assert other.fingerprint_data() != data
    assert {k: v for k, v in ident.model_dump(mode="json").items() if k != "weights"} == {
        k: v for k, v in data.items() if k != "weights"
    }
