"""Throwaway plug-in distributions for the registry tests.

``importlib.metadata`` finds a distribution by its ``*.dist-info`` folder on
``sys.path``; a folder holding ``<name>-<version>.dist-info/{METADATA,entry_points.txt}``
and the plug-in's module is therefore an installed plug-in once it is on the path
(exactly what ``pip install`` leaves in site-packages, minus the RECORD).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

#: A complete plug-in backend: what docs/architecture.md shows a third party writing.
PLUGIN_SOURCE = '''
from pydantic import BaseModel, ConfigDict

from enade_bench.backends import BackendSpec, Generation, backend_options
from enade_bench.results.identity import ModelIdentity


class Options(BaseModel):
    model_config = ConfigDict(extra="forbid")
    letter: str = "A"


class AlwaysBackend:
    """Answers every question with the same letter."""

    prompt_form = "raw"
    capabilities = frozenset({"generation"})

    def __init__(self, cfg):
        self.letter = backend_options(cfg, Options).letter
        self.identity = ModelIdentity(backend=cfg.type, name=f"always-{self.letter}", engine="always",
                                      prompt_form="raw", details={"letter": self.letter})

    def render(self, prompt):
        return prompt.plain_text()

    def generate(self, prompts, params):
        return [Generation(texts=[f"Resposta: {self.letter}"]) for _ in prompts]


SPEC = BackendSpec(create=AlwaysBackend, capabilities=lambda cfg: AlwaysBackend.capabilities, options=Options)


class Incomplete:
    """A broken plug-in: no prompt_form."""

    capabilities = frozenset({"generation"})

    def __init__(self, cfg):
        self.identity = ModelIdentity(backend=cfg.type, name="incomplete")

    def render(self, prompt):
        return ""
'''

_counter = itertools.count()


def install_plugin(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: str,
    entries: dict[str, str],
    source: str | None = PLUGIN_SOURCE,
    group: str = "enade_bench.backends",
) -> str:
    """Write a distribution ``dist`` whose entry points in ``group`` are ``entries``
    (``{name: "{module}:attr"}``).

    ``{module}`` in a target is replaced by a module name unique to this call (holding
    ``source``), so that no two tests share an imported module.  Returns that name.
    """
    module = f"enade_plugin_{next(_counter)}_{dist.replace('-', '_')}"
    folder = root / dist
    info = folder / f"{dist}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n", encoding="utf-8")
    lines = [f"{name} = {target.format(module=module)}" for name, target in entries.items()]
    (info / "entry_points.txt").write_text(f"[{group}]\n" + "\n".join(lines) + "\n")
    if source is not None:
        (folder / f"{module}.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    return module
