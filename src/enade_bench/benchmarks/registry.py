"""The registry of benchmarks: ``dataset.benchmark`` -> the benchmark that runs it.

A benchmark is found, in this order, as

1. a **built-in** exam (a folder beside this file, listed in :data:`BUILTIN`);
2. an **installed plug-in**: a distribution that declares an entry point in the group
   ``enade_bench.benchmarks`` (``my_exam = "my_package.exam:BENCHMARK"``);
3. a **folder** given on the command line (``--include-path DIR``): ``DIR`` itself is a
   benchmark folder, or each of its sub-folders is one;
4. a **folder named in the config**: ``dataset.benchmark: ./my_exam/`` (relative to the
   config file first).

A benchmark folder holds an ``__init__.py`` that defines ``BENCHMARK`` (see
``docs/adding_an_exam.md``); its name is ``BENCHMARK.name``.  A name that two sources
claim is an ``error:`` naming both, never silently one of them.  Nothing is imported
until it is asked for: a broken plug-in breaks only the configs that use it.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from enade_bench.benchmarks.base import Benchmark
from enade_bench.benchmarks.builtin import BUILTIN, STUDY_KEYS
from enade_bench.config import ExperimentConfig, resolve_input
from enade_bench.errors import UserError, as_given

__all__ = ["BUILTIN", "DEFAULT", "ENTRY_POINT_GROUP", "Registry", "Source", "load_folder"]

#: The entry-point group through which installed packages add benchmarks.
ENTRY_POINT_GROUP = "enade_bench.benchmarks"


@dataclass(frozen=True)
class Source:
    """Where a benchmark name comes from (for messages) and how to load it."""

    where: str
    #: ``module:attribute`` of a built-in or an installed plug-in.
    target: str | None = None
    #: A benchmark folder (``--include-path``).
    folder: Path | None = None

    def benchmark(self) -> Benchmark:
        """Import the benchmark (modules are cached by Python, so once)."""
        if self.folder is not None:
            return load_folder(self.folder)
        module, _, attr = str(self.target).partition(":")
        try:
            obj = getattr(importlib.import_module(module), attr or "BENCHMARK")
        except Exception as exc:  # noqa: BLE001 - any failure of a plug-in's import is the user's to see
            raise UserError(
                f"benchmark {self.where}: cannot load {self.target} ({type(exc).__name__}: {exc})"
            ) from None
        return _checked(obj, self.where)


def _checked(obj: object, where: str) -> Benchmark:
    if not isinstance(obj, Benchmark):
        raise UserError(
            f"benchmark {where}: BENCHMARK is not a benchmark (it needs a 'name', 'prepare(cfg, source, "
            "options)' and 'run(exp, options)'; see docs/adding_an_exam.md)"
        )
    return obj


def load_folder(folder: Path) -> Benchmark:
    """The ``BENCHMARK`` of a benchmark folder (its ``__init__.py``), imported as a package."""
    folder = folder.resolve()
    init = folder / "__init__.py"
    if not folder.is_dir():
        raise UserError(f"benchmark folder not found: {as_given(folder)}")
    if not init.is_file():
        raise UserError(
            f"{as_given(folder)}: not a benchmark folder (expected an __init__.py defining BENCHMARK)"
        )
    name = f"enade_bench_plugin_{abs(hash(str(folder))):x}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(folder)])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # noqa: BLE001 - the plug-in's own error, shown in one line
            del sys.modules[name]
            raise UserError(
                f"{as_given(init)}: cannot load the benchmark ({type(exc).__name__}: {exc})"
            ) from None
    if not hasattr(module, "BENCHMARK"):
        raise UserError(f"{as_given(init)}: defines no BENCHMARK (see docs/adding_an_exam.md)")
    return _checked(module.BENCHMARK, as_given(folder))


def _known(sources: dict[str, Source]) -> str:
    """What can be named instead: the built-ins, the installed plug-ins found (in which environment),
    the ``--include-path`` folders."""
    builtin = [n for n in sources if n in BUILTIN]
    installed = [s.where for n, s in sources.items() if n not in BUILTIN and s.target is not None]
    folders = [s.where for s in sources.values() if s.folder is not None]
    parts = [f"expected a built-in exam ({', '.join(builtin)})"]
    parts.append(
        f"an installed plug-in: {', '.join(installed)}"
        if installed
        else f"an installed plug-in (none found: no entry point in the group '{ENTRY_POINT_GROUP}' "
        f"in the environment of {sys.executable}; is the plug-in installed there?)"
    )
    if folders:
        parts.append(f"a plug-in folder of --include-path: {', '.join(folders)}")
    return ", ".join(parts) + ", or the folder of a benchmark plug-in (./my_exam/)"


def _folders(include_paths: Iterable[Path]) -> list[Path]:
    """The benchmark folders of ``--include-path`` entries: the folder itself or its sub-folders."""
    found = []
    for entry in include_paths:
        path = Path(entry)
        if not path.is_dir():
            raise UserError(f"--include-path: folder not found '{path}'")
        if (path / "__init__.py").is_file():
            found.append(path)
        else:
            found += sorted(p for p in path.iterdir() if (p / "__init__.py").is_file())
    return found


@dataclass
class Registry:
    """Every benchmark that can be named: built-ins, installed plug-ins, ``--include-path`` folders."""

    include_paths: Sequence[Path] = ()
    _sources: dict[str, Source] | None = field(default=None, repr=False)

    def sources(self) -> dict[str, Source]:
        """Name -> where it comes from; an error when two sources claim one name."""
        if self._sources is not None:
            return self._sources
        sources = {
            name: Source(f"'{name}' (built-in)", f"{module}:BENCHMARK") for name, module in BUILTIN.items()
        }
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            dist = ep.dist.name if ep.dist is not None else "an installed package"
            _claim(sources, ep.name, Source(f"'{ep.name}' (entry point of {dist})", ep.value))
        for folder in _folders(self.include_paths):
            benchmark = load_folder(folder)
            _claim(sources, benchmark.name, Source(f"'{benchmark.name}' ({folder})", folder=folder))
        self._sources = sources
        return sources

    def get(self, name: str, config_path: Path | None = None) -> Benchmark:
        """The benchmark ``name`` (a registered name or a folder path) selects."""
        if "/" in name or "\\" in name or name.startswith("."):
            return load_folder(resolve_input(name, config_path) if config_path else Path(name))
        sources = self.sources()
        if name not in sources:
            where = f"{config_path}: " if config_path else ""
            raise UserError(f"{where}key 'dataset.benchmark': got '{name}'; {_known(sources)}")
        benchmark = sources[name].benchmark()
        if benchmark.name != name:
            raise UserError(f"benchmark {sources[name].where}: its BENCHMARK is named '{benchmark.name}'")
        return benchmark

    def for_config(self, cfg: ExperimentConfig, config_path: Path) -> Benchmark:
        """The benchmark of an experiment config (``dataset.benchmark``)."""
        return self.get(cfg.dataset.benchmark, config_path)

    def for_study(self, data: Any, path: Path) -> Benchmark:
        """The benchmark of a study YAML: its ``benchmark``, or the built-in exam whose key it has
        (:data:`~enade_bench.benchmarks.builtin.STUDY_KEYS`: a study with a ``year`` is ENEM's)."""
        if not isinstance(data, dict):
            raise UserError(f"{path}: expected a YAML mapping at the top level")
        name = data.get("benchmark", next((exam for key, exam in STUDY_KEYS.items() if key in data), None))
        if name is None:
            raise UserError(
                f"{path}: missing required key 'benchmark' (the exam: enade, eeval, generic, enem, "
                "a plug-in's name or folder)"
            )
        return self.get(str(name), path)


def _claim(sources: dict[str, Source], name: str, source: Source) -> None:
    if name in sources:
        raise UserError(f"benchmark name '{name}' is claimed twice: {sources[name].where} and {source.where}")
    sources[name] = source


#: The registry of built-ins and installed plug-ins (commands add ``--include-path`` folders).
DEFAULT = Registry()
