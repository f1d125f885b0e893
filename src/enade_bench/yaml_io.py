"""YAML as every input file is read: safe, and a key given twice is an error, not a silent overwrite."""

from __future__ import annotations

from typing import Any

import yaml


class DuplicateKeyError(yaml.MarkedYAMLError):
    """A mapping names the same key twice (e.g. a second ``evaluation:`` block)."""


class StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses duplicate keys (PyYAML keeps the last one silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)  # type: ignore[no-untyped-call]
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: SafeLoader's own error follows
                continue
            if first is not None:
                raise DuplicateKeyError(
                    None,
                    None,
                    f"duplicate key '{key}' (first at line {first.start_mark.line + 1}; "
                    "a later one would silently replace it: merge them)",
                    key_node.start_mark,
                )
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


def safe_load(text: str) -> Any:
    """Parse YAML text like ``yaml.safe_load``, refusing duplicate keys."""
    return yaml.load(text, Loader=StrictLoader)  # a SafeLoader subclass: safe
