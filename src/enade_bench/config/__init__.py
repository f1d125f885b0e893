"""Experiment configuration: one YAML file per experiment, validated by pydantic.

Every model forbids unknown keys (``extra="forbid"``), so a typo in a config is an
``error:`` line naming the key and the keys that are allowed, never a silently
ignored setting.

The blocks live in one module per section: :mod:`~enade_bench.config.base` (the
shared base and literal types), :mod:`~enade_bench.config.dataset`,
:mod:`~enade_bench.config.model`, :mod:`~enade_bench.config.experiment` (the
evaluation, prompts and output blocks and the whole file) and
:mod:`~enade_bench.config.load` (reading, error messages, config-relative paths).
Every name is re-exported here: import from ``enade_bench.config``.
"""

from enade_bench.config.base import Method, Provider, StrictModel
from enade_bench.config.dataset import AnswerKeyConfig, DatasetConfig, OptionsInTextConfig, SampleConfig
from enade_bench.config.experiment import (
    EvaluationConfig,
    ExperimentConfig,
    OutputConfig,
    PromptsConfig,
)
from enade_bench.config.load import (
    describe_validation_error,
    input_base,
    load_config,
    output_dir,
    parse_config,
    read_yaml,
    resolve_input,
    resolve_output,
    user_loc,
    validate_mapping,
)
from enade_bench.config.model import LOCAL_TYPES, ApiConfig, ModelConfig, VllmConfig

__all__ = [
    "LOCAL_TYPES",
    "AnswerKeyConfig",
    "ApiConfig",
    "DatasetConfig",
    "EvaluationConfig",
    "ExperimentConfig",
    "Method",
    "ModelConfig",
    "OptionsInTextConfig",
    "OutputConfig",
    "PromptsConfig",
    "Provider",
    "SampleConfig",
    "StrictModel",
    "VllmConfig",
    "describe_validation_error",
    "input_base",
    "load_config",
    "output_dir",
    "parse_config",
    "read_yaml",
    "resolve_input",
    "resolve_output",
    "user_loc",
    "validate_mapping",
]
