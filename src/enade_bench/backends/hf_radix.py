"""Scoring contexts as radix trees, and the attention blocks that keep each question's cost its own.

:func:`radix_units` lays a chunk's contexts (beyond the chunk's common prefix) out as
radix trees: contexts that begin alike share their head (a first-token shuffle's option
orders share the stem), identical contexts run once, and a context's identical
continuations once.  So the positions fed to the model never exceed those of the
contexts run one by one.

Sharing a head must not make the *attention* grow.  Attending a whole merged tree as one
rectangle costs ``T (past + T)`` query--key pairs for its ``T`` tokens: on real ENEM text,
where many unrelated questions begin with the same token (``A``, ``O``, ``Leia``…),
merging them that way cost 2.3× the per-question pairs at 32 questions, 7.3× at 128.
:func:`attention_blocks` therefore cuts each tree into blocks, each a subtree run as one
rectangle over its ancestors' keys and its own, and keeps a subtree whole only when its
rectangle costs no more than its contexts would alone:

.. math::

    T_v (A_v + T_v) \\le \\sum_{c \\in v} m_c (A_v + m_c),

where :math:`A_v` is the prefix plus the ancestors of node :math:`v` and :math:`m_c` the
tokens of context :math:`c` from :math:`v` down (its continuations included);
otherwise the node's own segment is a block and each child is planned alike.  By
induction the blocks of a tree cost at most :math:`\\sum_c l_c (\\text{past} + l_c)`,
the pairs of every question run as its own unit, while the
positions stay those of the shared tree.  A question whose continuations hang under its
context is one block.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from enade_bench.backends.hf_prefix import common_prefix_length


@dataclass(frozen=True)
class Segment:
    """Tokens that follow ``parent`` (an earlier segment's index; ``None``: the cached prefix)."""

    tokens: Sequence[int]
    parent: int | None = None


@dataclass(frozen=True)
class Block:
    """Queries ``[start, end)`` of a tree (its flat layout) attending ``keys`` after the prefix.

    ``keys`` are ranges of the same layout, ancestors first then ``(start, end)`` itself;
    ``mask`` is boolean ``(end - start) × (past + Σ keys)``: True where a query may attend.
    """

    start: int
    end: int
    keys: tuple[tuple[int, int], ...]
    mask: torch.Tensor


Members = Sequence[tuple[int, Sequence[int]]]


def radix_units(
    contexts: Sequence[Sequence[int]], tails: Sequence[Sequence[Sequence[int]]]
) -> tuple[list[list[Segment]], list[tuple[int, int]], list[list[tuple[int, int] | None]]]:
    """The contexts as radix trees (shared heads once), each context's tails under it.

    Contexts that begin with different tokens are separate trees.  Each tree is laid
    out depth first, a node's continuations right after it, so that every subtree is
    one contiguous span (:func:`attention_blocks`).  Returns the units (segments with
    parents inside their unit, parents first), each context's last segment as
    ``(unit, segment)``, and each tail's segment (``None`` for an empty tail).
    """
    units: list[list[Segment]] = []
    ends: list[tuple[int, int]] = [(0, 0)] * len(contexts)
    tail_segs: list[list[tuple[int, int] | None]] = [[None] * len(options) for options in tails]

    def build(unit: list[Segment], members: list[int], depth: int, parent: int | None) -> None:
        n = common_prefix_length([contexts[m][depth:] for m in members])
        unit.append(Segment(contexts[members[0]][depth : depth + n], parent))
        node, depth = len(unit) - 1, depth + n
        groups: dict[int, list[int]] = {}
        seen: dict[tuple[int, ...], int] = {}  # identical tails of this node: one segment
        for m in members:
            if len(contexts[m]) > depth:
                groups.setdefault(contexts[m][depth], []).append(m)
                continue
            ends[m] = (len(units), node)
            for k, tail in enumerate(tails[m]):
                if not tail:  # nothing to run (a one-token continuation, its last token dropped)
                    continue
                key = tuple(tail)
                if key not in seen:
                    seen[key] = len(unit)
                    unit.append(Segment(tail, node))
                tail_segs[m][k] = (len(units), seen[key])
        for group in groups.values():
            build(unit, group, depth, node)

    roots: dict[int, list[int]] = {}
    for q, ctx in enumerate(contexts):
        if not ctx:
            raise ValueError(f"context {q} is empty after the shared prefix")
        roots.setdefault(ctx[0], []).append(q)
    for members in roots.values():
        unit: list[Segment] = []
        build(unit, members, 0, None)
        units.append(unit)
    return units, ends, tail_segs


def unit_members(
    n_units: int, ends: Sequence[tuple[int, int]], tail_segs: Sequence[Sequence[tuple[int, int] | None]]
) -> list[list[tuple[int, list[int]]]]:
    """Per unit, each context's last segment and its distinct continuation segments."""
    out: list[list[tuple[int, list[int]]]] = [[] for _ in range(n_units)]
    for (unit, node), segs in zip(ends, tail_segs, strict=True):
        out[unit].append((node, sorted({s for _, s in (seg for seg in segs if seg is not None)})))
    return out


def attention_blocks(segments: Sequence[Segment], members: Members, past: int) -> list[Block]:
    """The tree cut into blocks whose pairs stay within those of its contexts run alone (module docstring).

    ``members``: each context of the tree as its last segment and its continuations'
    segments.  The blocks tile the tree's layout in order.
    """
    n = len(segments)
    lengths = [len(s.tokens) for s in segments]
    starts, above, children = [0] * n, [past] * n, [[] for _ in range(n)]  # type: list[int], list[int], list[list[int]]
    flat = 0
    for i, seg in enumerate(segments):
        if seg.parent is not None and not 0 <= seg.parent < i:
            raise ValueError(f"segment {i}: parent {seg.parent} must be an earlier segment")
        starts[i], flat = flat, flat + lengths[i]
        if seg.parent is not None:
            above[i] = above[seg.parent] + lengths[seg.parent]
            children[seg.parent].append(i)
    last = list(range(n))  # the last segment of each subtree (depth-first: a contiguous span)
    for i in range(n - 1, -1, -1):
        up = segments[i].parent
        if up is not None:
            last[up] = max(last[up], last[i])
    need = [0] * n
    for end, tail_nodes in members:
        for t in tail_nodes:
            need[t] += lengths[t] * (above[t] + lengths[t])
        m = sum(lengths[t] for t in tail_nodes)
        node: int | None = end
        while node is not None:
            m += lengths[node]
            need[node] += m * (above[node] + m)
            node = segments[node].parent
    blocks: list[Block] = []

    def plan(v: int) -> None:
        end = starts[last[v]] + lengths[last[v]]
        whole = end - starts[v]
        if last[v] == v or whole * (above[v] + whole) <= need[v]:
            blocks.append(_block(segments, starts, lengths, v, last[v], past))
            return
        blocks.append(_block(segments, starts, lengths, v, v, past))
        for child in children[v]:
            plan(child)

    for root in (i for i, s in enumerate(segments) if s.parent is None):
        plan(root)
    return blocks


def _block(
    segments: Sequence[Segment],
    starts: Sequence[int],
    lengths: Sequence[int],
    first: int,
    last: int,
    past: int,
) -> Block:
    """Segments ``first..last`` (a subtree or one segment) as a block over its ancestors' keys."""
    ancestors = []
    node = segments[first].parent
    while node is not None:
        ancestors.append((starts[node], starts[node] + lengths[node]))
        node = segments[node].parent
    ancestors.reverse()
    start, end = starts[first], starts[last] + lengths[last]
    before = past + sum(b - a for a, b in ancestors)
    q = end - start
    mask = torch.zeros((q, before + q), dtype=torch.bool)
    mask[:, :before] = True
    for i in range(first, last + 1):
        rows = slice(starts[i] - start, starts[i] - start + lengths[i])
        col = before + starts[i] - start
        mask[rows, col : col + lengths[i]] = torch.ones((lengths[i], lengths[i]), dtype=torch.bool).tril()
        parent = segments[i].parent
        while parent is not None and parent >= first:
            pcol = before + starts[parent] - start
            mask[rows, pcol : pcol + lengths[parent]] = True
            parent = segments[parent].parent
    return Block(start, end, (*ancestors, (start, end)), mask)
