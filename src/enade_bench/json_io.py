"""JSON read with a bound on nesting: a deep document is one ``error:`` line, never a RecursionError.

Python's parser recurses once per level, and so do the validators and maskers that walk
the parsed value; a file nested thousands of levels deep (damaged, or made to break the
reader) would end in a traceback.  :func:`loads` refuses a document nested deeper than
:data:`MAX_DEPTH` levels, naming the file and the line where that depth is reached.
"""

from __future__ import annotations

import json
from typing import Any

from enade_bench.errors import UserError

#: Deepest nesting of arrays and objects accepted (results files need 6; questions files 3).
MAX_DEPTH = 64


def too_deep_at(text: str, limit: int = MAX_DEPTH) -> int | None:
    """The line (1-based) where ``text`` first opens a level deeper than ``limit``; ``None``: never.

    >>> too_deep_at('{"a": [1, 2]}', 1) is not None, too_deep_at('{"a": 1}', 1)
    (True, None)
    """
    depth, line, in_string, escaped = 0, 1, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            elif char == "\n":
                line += 1
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return line
        elif char in "]}":
            depth -= 1
        elif char == "\n":
            line += 1
    return None


def depth(value: Any) -> int:
    """Nesting depth of parsed JSON, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def loads(text: str | bytes, source: str, line: int = 1, **options: Any) -> Any:
    """``json.loads(text)``, refusing a document nested deeper than :data:`MAX_DEPTH` levels.

    ``source`` names the file in the message; ``line`` is the line ``text`` starts on (one
    line of a JSON-lines file); ``options`` go to :func:`json.loads`.  Other parse errors (``json.JSONDecodeError``) propagate
    for the caller to word.

    Raises
    ------
    UserError
        ``{source}: line N: JSON nested deeper than 64 levels (…)``.
    """
    try:
        value = json.loads(text, **options)
        deep = depth(value) > MAX_DEPTH
    except RecursionError:
        deep = True
    if not deep:
        return value
    shown = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    at = too_deep_at(shown)
    where = line + (at - 1 if at is not None else 0)
    raise too_deep(source, where)


def too_deep(source: str, line: int) -> UserError:
    """The error of a document nested too deep at ``line`` of ``source``."""
    return UserError(
        f"{source}: line {line}: JSON nested deeper than {MAX_DEPTH} levels (a damaged file, or not "
        "the file expected)"
    )
