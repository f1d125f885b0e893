"""One prefill per chunk, then decoding on a preallocated cache: the cache.

Generation under a policy with ``packed_prefill`` (CUDA, :mod:`.hf_batching`) runs a chunk as
(:func:`.hf_packed.generate_packed`):

1. the chunk's common prefix, up to its last whole block, from the run-wide store
   (:mod:`.hf_prefix`; one call when it is not stored yet);
2. **one** call on one row: the rest of the prefix, then every question's own tokens end to
   end, ``[rest][question 1][question 2]…`` (no padding).  Each question attends to the
   prefix and causally to itself only: one FlexAttention call per layer over the whole row
   (:mod:`.hf_flex`);
3. the keys and values of that call are placed once in a :class:`SlotCache`, **one** row of
   columns preallocated for the whole decode (``1 × kv-heads × (prefix + Σ (question + new
   tokens)) × dim``): the prefix **once**, then each question's region, its own tokens followed
   by one column per decode step.  No row holds a copy of the prefix: every row reads the same
   columns (a paged cache whose pages are the prefix, shared, and each row's region);
4. one decode loop: each step writes every row's token's keys and values in place at that row's
   next column (``index_copy_``, no concatenation, no copy of the cache) and attends, in one
   FlexAttention call per layer, each row's query (query batch = rows) over that one cache
   (key batch 1): the BlockMask has a batch dimension and gives row ``b`` the prefix's tiles and
   the tiles of its own region that it has written (:func:`.hf_flex.row_block_mask`), the mask
   ``pos[kv] <= b < reach[kv]`` of a packed row (prefix keys: ``pos = -1``, ``reach = rows``;
   row ``b``'s written keys: ``pos = b``, ``reach = b + 1``; a column not written yet: seen by
   none).  The same shapes every step.

The decode batch is padded to a power of two, at least 4 (:func:`decode_rows`): a padding row reads and
writes one column of its own, at the cache's end, and nothing else.  The batch is then a constant
of the decode graph, a few of them over a run (chunks of 3 and 4 rows share 4), and Inductor
can choose FlexAttention's decoding kernel on CUDA (:mod:`.hf_flex`).

Memory: ``prefix + Σ_rows (own tokens + new tokens)`` columns per layer, not ``rows × (prefix +
longest question + new tokens)``: S3's 964-token few-shot prefix is held once, not once per row.

Grouped-query attention is native (FlexAttention's ``enable_gqa``): no key/value head is
repeated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from enade_bench.backends.hf_device import to_device
from enade_bench.backends.hf_flex import BLOCK, FlexPlan, row_block_mask


def decode_rows(rows: int) -> int:
    """The decode batch of ``rows`` questions: the next power of two, at least 4."""
    return max(4, 1 << (rows - 1).bit_length())


@dataclass
class SlotCache:
    """A key/value cache preallocated for a whole decode in one row of columns, written in place.

    ``width`` columns (whole blocks): the prefix (``prefix`` columns, once), then each decode row's
    region (its question's own tokens, then one column per decode step), then a column for each
    padding row (:func:`decode_rows`).  ``columns`` (on the
    device): the cache column of each key of the prefill (the stored prefix, then the prefill
    row's tokens).  The model calls :meth:`update` in every layer: in the prefill (batch 1) it
    returns the prefix's cached states and the row's, and places them at ``columns``; in a decode
    step (batch = rows) it writes each row's key at that row's column of the step (:attr:`cursor`)
    and returns the whole cache (batch 1), which every row's query reads through its BlockMask.
    ``pos`` and ``reach`` are the decode mask's vectors (module docstring), updated in place by
    :meth:`advance`.
    """

    width: int
    prefix: int
    columns: torch.Tensor
    pos: torch.Tensor
    reach: torch.Tensor
    ends: torch.Tensor  # each row's first column after its question (its first decode step's)
    moves: torch.Tensor  # 1 for a row, 0 for a padding row (which writes one column every step)
    past: Any = None  # the store's batch-1 cache of the first ``past`` prefix tokens, or None
    cursor: torch.Tensor | None = None  # each row's column of the decode step
    layers: list[tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list)

    @classmethod
    def for_rows(
        cls, prefix: int, own: Sequence[int], steps: int, width: int, device: torch.device, past: Any = None
    ) -> SlotCache:
        """The cache of ``len(own)`` rows after a shared ``prefix``, padded to :func:`decode_rows`: row
        ``r`` holds ``own[r]`` question tokens and ``steps`` decode steps; ``width`` columns, at least
        ``prefix + Σ (own + steps)`` and one per padding row.

        Row ``r``'s region starts at ``prefix + Σ_{i<r} (own[i] + steps)``: a prefill key of question
        ``r`` at index ``i`` among the questions' tokens goes to ``prefix + i + r·steps``.  Built on
        ``device`` from one copy of ``own`` (no read-back: ``repeat_interleave`` is told its size).
        """
        n, tokens = len(own), sum(own)
        rows = torch.arange(decode_rows(n), device=device)
        own_at = to_device(list(own), device)
        owner = torch.repeat_interleave(rows[:n], own_at, output_size=tokens)
        placed = prefix + torch.arange(tokens, device=device) + steps * owner
        columns = torch.cat((torch.arange(prefix, device=device), placed))
        size = -(-width // BLOCK) * BLOCK
        pos = torch.full((size,), rows.numel() + BLOCK, dtype=torch.long, device=device)  # seen by none
        reach = torch.zeros(size, dtype=torch.long, device=device)
        pos[:prefix], reach[:prefix] = -1, n  # the prefix: every row, no padding row
        pos[placed], reach[placed] = owner, owner + 1  # a question's tokens: its row only
        spare = prefix + tokens + n * steps + rows[n:] - n  # a padding row's own column
        pos[spare], reach[spare] = rows[n:], rows[n:] + 1
        ends = torch.cat((prefix + torch.cumsum(own_at, 0) + steps * rows[:n], spare))
        return cls(
            width=width,
            prefix=prefix,
            columns=columns,
            pos=pos,
            reach=reach,
            ends=ends,
            moves=(rows < n).long(),
            past=past,
        )

    def advance(self, step: int) -> FlexPlan:
        """Decode step ``step``: each row's column (:attr:`cursor`) marked as its own; the step's plan."""
        self.cursor = self.ends + step * self.moves
        rows = torch.arange(self.ends.numel(), device=self.ends.device)
        self.pos.index_copy_(0, self.cursor, rows)
        self.reach.index_copy_(0, self.cursor, rows + 1)
        return FlexPlan(
            row_block_mask(self.pos, self.reach, 1, self.width, rows=rows.numel()),
            pos=self.pos,
            reach=self.reach,
            kind="decode",
        )

    def update(
        self, key: torch.Tensor, value: torch.Tensor, layer: int, *args: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if len(self.layers) <= layer:  # the prefill: batch 1, the packed row
            if self.past is not None:
                key = torch.cat((self.past.layers[layer].keys, key), dim=2)
                value = torch.cat((self.past.layers[layer].values, value), dim=2)
            self.layers.append((self._place(key), self._place(value)))
            return key, value
        keys, values = self.layers[layer]
        assert self.cursor is not None
        keys.index_copy_(2, self.cursor, key.transpose(0, 2))  # rows × Hkv × 1 × d -> 1 × Hkv × rows × d
        values.index_copy_(2, self.cursor, value.transpose(0, 2))
        return keys, values

    def _place(self, states: torch.Tensor) -> torch.Tensor:
        """The cache of one layer from the prefill's states (``1 × Hkv × (prefix + row) × d``)."""
        slots = states.new_zeros((1, states.shape[1], self.width, states.shape[3]))
        return slots.index_copy_(2, self.columns, states)

    def get_seq_length(self, layer: int = 0) -> int:
        return self.width
