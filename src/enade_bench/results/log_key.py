"""What a resume log is keyed on, and why a log will not resume.

A log's header holds the settings that change a strategy's prompts or the model's
outputs (flat ``dotted.key: value`` pairs, :class:`LogKey`) and their sha256, the
fingerprint. A rerun resumes the log when the fingerprints match; otherwise the
refusal names each setting that changed with its old and new value. Settings that only
change how fast a run goes (concurrency, retries, timeouts), the spelling of the data and
prompt files' paths (:data:`PATH_SETTINGS`) and the answer key are not among them: correctness is recomputed from the key on disk
(:func:`enade_bench.runner.work.with_current_key`).

Logs written before the settings were recorded (no ``fingerprint_version``) hold only
an opaque fingerprint: such a log resumes when it equals :attr:`LogKey.legacy` (the
fingerprint the older version computed for the same setup), and its header is then
rewritten in the current form; otherwise it is refused, saying that the older version
cannot tell which setting changed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import urlsplit, urlunsplit

from pydantic import JsonValue

#: 2: the header holds ``settings`` (flat) and their sha256; 1 (absent): an opaque sha256.
FINGERPRINT_VERSION = 2
#: Longest value shown in a refusal (a prompt file's sha256 is cut to its start).
_SHOWN = 40
#: Where the data and prompt files are, as the config spells the path: not keyed on (the same
#: file by an absolute or a relative path resumes). Their content is: each logged record's
#: question hash is checked against the data on disk, the prompt files' sha256 are settings.
#: Headers written while they were keyed on still hold them; they are left out when compared.
PATH_SETTINGS = ("dataset.path", "prompts.dir")
#: Where the API server is: provenance, not a setting that changes the answers.  A log written
#: against another host or port resumes, with a warning (``${VLLM_HOST}`` on whichever node a
#: job lands); another scheme, path or query does not.
ENDPOINT_SETTINGS = ("model.api.base_url", "model identity.api.base_url")


def _without_host(value: JsonValue) -> JsonValue:
    """A URL without its host and port (``http://a:8000/v1`` -> ``http:///v1``); other values as they are."""
    if not isinstance(value, str) or "://" not in value:
        return value
    try:
        parts = urlsplit(value)
    except ValueError:
        return value
    return urlunsplit((parts.scheme, "", parts.path, parts.query, parts.fragment))


def _endpoints_hostless(settings: dict[str, JsonValue]) -> dict[str, JsonValue]:
    return {k: _without_host(v) if k in ENDPOINT_SETTINGS else v for k, v in settings.items()}


def flatten(prefix: str, value: JsonValue) -> dict[str, JsonValue]:
    """``{"a": {"b": 1}}`` -> ``{"prefix.a.b": 1}`` (lists and scalars are leaves).

    >>> flatten("evaluation", {"seed": 1, "truncate": {"side": "left"}})
    {'evaluation.seed': 1, 'evaluation.truncate.side': 'left'}
    """
    if isinstance(value, dict) and value:
        out: dict[str, JsonValue] = {}
        for key, inner in value.items():
            out.update(flatten(f"{prefix}.{key}" if prefix else str(key), inner))
        return out
    return {prefix: value}


def _shown(value: JsonValue) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def changes(old: dict[str, JsonValue], new: dict[str, JsonValue]) -> list[str]:
    """``key: old -> new`` for every setting that differs (``(absent)`` for a missing one)."""
    out = []
    for key in sorted(set(old) | set(new)):
        if old.get(key, ...) != new.get(key, ...):
            before = _shown(old[key]) if key in old else "(absent)"
            after = _shown(new[key]) if key in new else "(absent)"
            out.append(f"{key}: {before} -> {after}")
    return out


@dataclass(frozen=True)
class LogKey:
    """The settings a strategy's log is keyed on; ``legacy``: the pre-version-2 fingerprint."""

    settings: dict[str, JsonValue]
    legacy: str | None = None
    #: Setting prefixes that are not known here (``validate`` has no model loaded: ``model identity``).
    unknown: tuple[str, ...] = field(default=())

    @cached_property
    def fingerprint(self) -> str:
        """sha256 of the settings (sorted JSON)."""
        text = json.dumps(self.settings, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def header(self) -> dict[str, JsonValue]:
        """The first line of a log: kind, fingerprint, its version and the settings."""
        return {
            "kind": "header",
            "fingerprint": self.fingerprint,
            "fingerprint_version": FINGERPRINT_VERSION,
            "settings": self.settings,
        }

    def _known(self, settings: dict[str, JsonValue]) -> dict[str, JsonValue]:
        return {k: v for k, v in settings.items() if not k.startswith(self.unknown)}

    def refusal(self, header: dict[str, JsonValue]) -> str | None:
        """Why a log with this ``header`` cannot be resumed by this setup (``None``: it can)."""
        old = header.get("settings")
        if header.get("fingerprint_version") == FINGERPRINT_VERSION and isinstance(old, dict):
            old = {k: v for k, v in old.items() if k not in PATH_SETTINGS}
            if not self.unknown and header.get("fingerprint") == self.fingerprint:
                return None
            changed = changes(
                _endpoints_hostless(self._known(old)), _endpoints_hostless(self._known(self.settings))
            )
            if not changed:
                return None
            return (
                f"cannot resume: {len(changed)} setting(s) that change the answers differ from the log's "
                f"({'; '.join(changed)}); put them back, or rerun with --no-resume (asks every question "
                "again) or choose another output.dir"
            )
        if self.legacy is not None and header.get("fingerprint") == self.legacy:
            return None
        if self.unknown:
            return None  # decided when the model loads (the old fingerprint hashes its identity)
        return (
            "cannot resume: this log was written by an older enade-bench, which recorded no settings, "
            "and its setup differs from this run's (config, data file, prompts or model; that version "
            "counted a corrected answer key too), so which setting changed cannot be told; rerun with "
            "--no-resume (asks every question again) or choose another output.dir"
        )

    def moved(self, header: dict[str, JsonValue]) -> list[str]:
        """``key: old -> new`` for each endpoint that moved to another host or port since the log
        was written (a resumable change, said in a warning)."""
        old = header.get("settings")
        if not isinstance(old, dict):
            return []
        return [
            f"{key}: {old[key]} -> {self.settings[key]}"
            for key in ENDPOINT_SETTINGS
            if key in old
            and key in self.settings
            and old[key] != self.settings[key]
            and _without_host(old[key]) == _without_host(self.settings[key])
        ]

    def upgrades(self, header: dict[str, JsonValue]) -> bool:
        """Whether a resumable ``header`` is in an older form (to be rewritten as :meth:`header`)."""
        return (
            header.get("fingerprint_version") != FINGERPRINT_VERSION
            or header.get("fingerprint") != self.fingerprint
        )
