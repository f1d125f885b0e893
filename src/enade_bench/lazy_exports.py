"""A package's names imported when first read (PEP 562), so importing one module of the
package (a command's parser) does not import what its other modules need."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """The module-level ``__getattr__`` of ``package``: each name of ``exports`` (name -> the
    module defining it) is imported on first read and kept in the package's namespace."""
    namespace = vars(sys.modules[package])  # the package, being initialised

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
