"""Reading a config: YAML parsing, one-line validation errors and config-relative paths."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from enade_bench.config.experiment import ExperimentConfig
from enade_bench.errors import UserError
from enade_bench.regular_file import read_text
from enade_bench.yaml_io import safe_load

M = TypeVar("M", bound=BaseModel)

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
        bounds = [
            f"{sign} {node[key]}"
            for key, sign in (
                ("minimum", "≥"),
                ("exclusiveMinimum", ">"),
                ("maximum", "≤"),
                ("exclusiveMaximum", "<"),
            )
            if key in node
        ]
        kinds = {
            "integer": "an integer",
            "number": "a number",
            "string": "a text",
            "boolean": "true or false",
            "null": "null",
            "array": "a list",
            "object": "a mapping",
        }
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


def validate_mapping(model: type[M], data: Any, source: str | Path) -> M:
    """``model`` validated from already-parsed YAML data; one error line naming ``source`` and the key."""
    if not isinstance(data, dict):
        raise UserError(f"{source}: expected a YAML mapping at the top level")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"{source}: {describe_validation_error(exc, model)}") from None


def parse_config(data: Any, source: str) -> ExperimentConfig:
    """Validate already-parsed YAML data; errors name ``source`` and the key."""
    return validate_mapping(ExperimentConfig, data, source)


def read_yaml(path: str | Path, what: str = "config") -> Any:
    """Parse a YAML file; a missing, unreadable or malformed file is one ``error:`` line."""
    path = Path(path)
    try:
        text = read_text(path)
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
    relative = os.path.expanduser(relative)
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
    relative = os.path.expanduser(relative)  # ~/data.csv, ~user/data.csv
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
    path = Path(os.path.expanduser(relative))  # output.dir: ~/results is in the home folder
    return path if path.is_absolute() else Path(os.path.normpath(config_path.parent / path))


def output_dir(cfg: ExperimentConfig, config_path: Path, override: Path | None = None) -> Path:
    """Where a run of ``cfg`` writes: ``override`` (``--output-dir``) or :func:`resolve_output` of ``output.dir``."""
    return override if override is not None else resolve_output(cfg.output.dir, config_path)


def load_config(path: str | Path) -> ExperimentConfig:
    """Read and validate a YAML experiment config."""
    return parse_config(read_yaml(path), str(path))
