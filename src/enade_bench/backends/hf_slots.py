"""One prefill per chunk, then decoding on a preallocated cache: the cache.

Generation under a policy with ``packed_prefill`` (CUDA, :mod:`.hf_batching`) runs a chunk as
(:func:`.hf_generate.generate_packed`):

1. the chunk's common prefix, up to its last whole block, from the run-wide store
   (:mod:`.hf_prefix`; one call when it is not stored yet);
2. **one** call on one row: the rest of the prefix, then every question's own tokens end to
   end, ``[rest][question 1][question 2]…`` (no padding).  Each question attends to the
   prefix and causally to itself only: one FlexAttention call per layer over the whole row
   (:mod:`.hf_flex`);
3. the keys and values of that call are placed once in a :class:`SlotCache` preallocated for
   the whole decode (``rows × kv-heads × (prefix + longest question + new tokens) × dim``):
   the prefix in every row, each question's own tokens in its rows, the gap after a shorter
   question masked;
4. one decode loop: each step writes its token's keys and values in place at the step's
   column (``index_copy_``, no concatenation, no copy of the cache) and attends, in one
   FlexAttention call per layer, each row over the tiles of the columns it has written
   (:func:`.hf_flex.decode_block_mask`): the same shapes every step.

Grouped-query attention is native (FlexAttention's ``enable_gqa``): no key/value head is
repeated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass
class SlotCache:
    """A key/value cache preallocated for a whole decode, written in place.

    ``rows`` decode rows, ``width`` columns: the prefix (``prefix`` columns, the same in every
    row), each row's question (``owner[row]``'s span of the prefill row, at most ``room``
    columns), then one column per decode step.  The model calls :meth:`update` in every layer:
    in the prefill (batch 1) it returns the prefix's cached states and the row's, and places
    them in the slots; in a decode step it writes the step's column (:attr:`cursor`) in place and
    returns the columns in use.
    """

    rows: int
    width: int
    prefix: int
    room: int
    past: Any = None  # the store's batch-1 cache of the first ``past`` prefix tokens, or None
    gather: torch.Tensor | None = None  # rows × room: prefill-row columns of each row's question
    cursor: torch.Tensor | None = None  # the decode step's column (a 1-element tensor)
    limit: int = 0  # columns returned to the attention in a decode step (the whole width)
    layers: list[tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list)

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
        keys.index_copy_(2, self.cursor, key)
        values.index_copy_(2, self.cursor, value)
        return keys[:, :, : self.limit], values[:, :, : self.limit]

    def _place(self, states: torch.Tensor) -> torch.Tensor:
        """The slots of one layer from the prefill row's states (``1 × Hkv × (prefix + row) × d``)."""
        slots = states.new_zeros((self.rows, states.shape[1], self.width, states.shape[3]))
        slots[:, :, : self.prefix] = states[:, :, : self.prefix]
        if self.gather is not None:
            own = states[0][:, self.prefix + self.gather.reshape(-1)]  # Hkv × rows·room × d
            slots[:, :, self.prefix : self.prefix + self.room] = own.reshape(
                states.shape[1], self.rows, self.room, -1
            ).transpose(0, 1)
        return slots

    def get_seq_length(self, layer: int = 0) -> int:
        return self.limit
