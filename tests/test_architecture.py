"""The import layers of ``src/enade_bench``: no circle, no arrow from a lower layer up.

Every ``import`` in the package (function-level ones included) is read with
:mod:`ast`; each sub-package has a layer, and a module may import only from its
own sub-package or a lower layer.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "enade_bench"

#: Layer of each top-level sub-package (or module): higher layers may import lower ones.
LAYERS: dict[str, int] = {
    "errors": 0,
    "yaml_io": 0,
    "file_names": 0,
    "regular_file": 0,  # files opened for reading: regular files only, never blocking on a FIFO
    "masking": 0,
    "environ": 0,  # environment variables set for a block and restored
    "lazy_exports": 0,  # the PEP 562 __getattr__ of packages that export names lazily
    "json_io": 1,  # reads JSON, refusing deep nesting with a UserError (errors: 0)
    "config": 1,
    "results": 2,
    "psychometrics": 5,  # above metrics: DIF and θ comparisons adjust p-values with metrics.multiplicity
    "dataset": 3,
    "strategies": 3,
    "scoring": 4,
    "metrics": 4,
    "prompts": 4,
    "backends": 5,
    "report": 6,
    "runner": 7,
    "compare": 7,
    "benchmarks": 8,
    "study": 9,
    "cli": 10,
    "__main__": 11,  # python -m enade_bench: the cli entry point
}
#: Pure layers: no I/O stack, no model backend, no exam.
PURE = {
    "scoring": {"backends", "runner"},
    "psychometrics": {"backends", "runner", "report", "benchmarks"},
    "metrics": {"backends", "runner", "report", "benchmarks"},
}
#: INEP's column names: only the ENEM benchmark's folder knows INEP's tables.
INEP_NAMES = ("CO_PROVA", "NU_PARAM_", "TX_GABARITO", "CO_POSICAO", "IN_ITEM_ABAN")


def _part(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "enade_bench" or len(parts) < 2:
        return None
    return parts[1]


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module or ""]).rstrip(".")
            else:
                module = node.module or ""
            # `from pkg import submodule` imports the submodule; `_graph` keeps what exists
            yield from (f"{module}.{alias.name}" for alias in node.names)


@cache
def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for imported in _imports(path):
            # `from pkg import module` names a module; otherwise the longest known prefix
            target = imported
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                targets.add(target)
        graph[name] = targets
    return graph


def test_every_sub_package_has_a_layer() -> None:
    parts = {p.name.removesuffix(".py") for p in SRC.iterdir() if not p.name.startswith("_")}
    parts.discard("py.typed")
    assert parts <= set(LAYERS), f"add a layer for {sorted(parts - set(LAYERS))}"


@pytest.mark.parametrize("module", sorted(_graph()))
def test_no_import_runs_up_a_layer(module: str) -> None:
    own = _part(module)
    if own is None:
        return
    for target in _graph()[module]:
        other = _part(target)
        if other is None or other == own:
            continue
        assert LAYERS[other] < LAYERS[own], (
            f"{module} (layer {LAYERS[own]}) imports {target} ({LAYERS[other]})"
        )
        assert other not in PURE.get(own, set()), f"{module} must stay pure but imports {target}"


def test_runner_imports_no_benchmark() -> None:
    graph = _graph()
    for module, targets in graph.items():
        if _part(module) == "runner":
            assert not {t for t in targets if _part(t) == "benchmarks"}, module


def test_inep_tables_are_known_only_to_the_enem_benchmark() -> None:
    enem = SRC / "benchmarks" / "enem"
    for path in SRC.rglob("*.py"):
        if enem in path.parents:
            continue
        text = path.read_text(encoding="utf-8")
        assert not [n for n in INEP_NAMES if n in text], f"{path} names INEP's columns"


def test_each_exam_lives_in_its_own_folder() -> None:
    """No module outside an exam's folder imports it, except the registry-driven layers above."""
    graph = _graph()
    for module, targets in graph.items():
        if _part(module) in {"benchmarks", "study", "cli"}:
            continue
        exams = {t for t in targets if t.startswith("enade_bench.benchmarks.")}
        assert not exams, f"{module} imports {sorted(exams)}"
    assert not (SRC / "eeval").exists() and not (SRC / "psychometrics" / "enem.py").exists()


def test_no_circle() -> None:
    graph = _graph()
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in graph.get(node, ()):
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt]
                pytest.fail("import circle: " + " -> ".join(cycle))
            if nxt in graph and state.get(nxt) is None:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for node in sorted(graph):
        if state.get(node) is None:
            visit(node, [node])
