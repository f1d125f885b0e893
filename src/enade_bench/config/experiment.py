"""The ``evaluation``, ``prompts`` and ``output`` blocks, and :class:`ExperimentConfig`, the whole file."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, JsonValue, model_validator

from enade_bench.config.base import Method, StrictModel, UserPath
from enade_bench.config.dataset import DatasetConfig
from enade_bench.config.model import ModelConfig
from enade_bench.file_names import SafeName
from enade_bench.masking import mask_config, mask_urls_in


class EvaluationConfig(StrictModel):
    """How each question is put to the model."""

    method: Literal["generation", "log_prob", "first_token", "api"] = "generation"
    shot_type: Literal["zero", "one", "few"] = "zero"
    shuffle_alternatives: bool = False
    n_shuffles: int = Field(default=1, ge=1, description="seeded shuffles per question")
    seed: int = 42
    max_new_tokens: int = Field(default=10, ge=1)
    cot_max_new_tokens: int = Field(
        default=512, ge=1, description="generation budget of chain-of-thought strategies (S7, E-EVAL cot)"
    )
    temperature: float | None = Field(default=None, ge=0)
    n_samples: int = Field(default=1, ge=1)
    batch_size: Annotated[int, Field(ge=1)] | Literal["auto"] = Field(
        default=8, description="questions per model call; auto: the largest that fits the GPU (8 on a CPU)"
    )
    run_all_strategies: bool = False
    letter_variants: Literal["both", "space", "bare"] = Field(
        default="both",
        description="first_token: which tokens stand for a letter ('A', ' A' or both)",
    )
    context_limit: int | None = Field(default=None, ge=2, exclude_if=lambda v: v is None)
    truncate: Literal["error", "left"] = Field(default="error", exclude_if=lambda v: v == "error")

    @property
    def resolved_method(self) -> Method:
        """``api`` is generation through an API backend."""
        return "generation" if self.method == "api" else self.method


class PromptsConfig(StrictModel):
    """The prompts: a set shipped with the benchmark (``preset``), or your own files in ``dir``.

    With neither, the benchmark's default set is used (ENADE: the published ENADE-QA
    prompt; other exams: a neutral prompt in the exam's language). Shipped sets come
    from the installed package, never from a checkout.
    """

    preset: str | None = Field(
        default=None,
        description="a prompt set shipped with the benchmark, e.g. enade_qa or team (replaces dir)",
    )
    dir: UserPath | None = Field(
        default=None,
        description="a folder with your own template (and worked examples); relative: from the config file",
    )
    template: str = "default.yaml"
    examples: str = Field(
        default="few_shot_examples.yaml",
        description="worked examples in dir (read only when a strategy uses them: S2, S3, S6)",
    )

    @model_validator(mode="after")
    def _one_source(self) -> PromptsConfig:
        if self.preset is not None and self.dir is not None:
            raise ValueError("give 'preset' (a shipped prompt set) or 'dir' (your own files), not both")
        return self


class OutputConfig(StrictModel):
    """Where a run writes (:func:`.output_dir`: a relative ``dir`` is read from the config's folder)."""

    dir: UserPath = Field(
        default="results",
        description="the results folder; relative: from the config file's folder, like the inputs "
        "(--output-dir on the command line: from the current folder)",
    )
    save_intermediate: bool = True


#: ``extra_params`` keys whose values identify users or sessions (OpenAI's ``metadata``,
#: ``user``, ``safety_identifier``; Anthropic's ``metadata.user_id``): kept out of the results.
USER_DATA_PARAMS = ("metadata", "user", "safety_identifier")


def _texts_masked(value: JsonValue) -> JsonValue:
    """``value`` with every text (and number) ``***``, keys and structure kept."""
    if isinstance(value, dict):
        return {k: _texts_masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_texts_masked(v) for v in value]
    return value if value is None or isinstance(value, bool) else "***"


class ExperimentConfig(StrictModel):
    """One experiment: dataset × model × evaluation settings."""

    name: SafeName = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str = ""
    dataset: DatasetConfig
    model: ModelConfig
    evaluation: EvaluationConfig = EvaluationConfig()
    prompts: PromptsConfig = PromptsConfig()
    output: OutputConfig = OutputConfig()

    def public_dict(self) -> dict[str, JsonValue]:
        """The config as plain data, secrets masked (safe to write to results).

        Keys (``api_key``, ``hf_token``, and any secret-looking key such as ``password`` in
        ``extra_params``: :func:`~enade_bench.masking.mask_config`) become ``***``, and so do
        the credentials inside any URL (``http://user:pw@host`` -> ``http://***@host``).
        User data sent with every request (``extra_params.metadata``, ``user``: session and
        user ids) is masked like a query value: every text in it is ``***``, its keys kept.
        """
        data: dict[str, JsonValue] = self.model_dump(mode="json")
        model = data["model"]
        assert isinstance(model, dict)
        api = model.get("api")
        for block in (model, api if isinstance(api, dict) else {}):
            for key in ("hf_token", "api_key"):
                if block.get(key) is not None:
                    block[key] = "***"
        extra = api.get("extra_params") if isinstance(api, dict) else None
        if isinstance(extra, dict):
            for key in USER_DATA_PARAMS:
                if key in extra:
                    extra[key] = _texts_masked(extra[key])
        return mask_urls_in(mask_config(data, texts=False))
