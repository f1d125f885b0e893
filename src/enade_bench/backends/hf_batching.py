"""How the HF backend batches on its device: a small policy the engine consults.

The batching choices of :mod:`.hf_prefix`, :mod:`.hf_generate` and :mod:`.hf_attention`
depend on what costs time on the device, so they are data, built from the device
(as vLLM's ``SchedulerConfig`` is), not constants:

* **CPU** (two cores, matrix products bound by the tokens they see): every token
  costs about the same, padding is paid in full, and a decode step of one row is
  much cheaper than one of 32.  Rows whose prompts fall into families with different
  long prefixes (:func:`.hf_prefix.prefix_groups`) decode as separate groups, each in
  its own loop; scoring attention runs one SDPA call per question tree (faster here than
  FlexAttention's eager form, docs/performance.md).
* **CUDA** (a GPU): a model call has a fixed cost (kernel launches, reading the
  weights) that a decode step of one row pays as fully as one of 32.  Greedy generation
  prefills the whole chunk in one call, its questions packed in one row (no padding), and
  decodes it in *one* loop on a preallocated cache (:mod:`.hf_packed`, :mod:`.hf_slots`).  Sampling, and models whose attention cannot be
  switched, prefill groups apart (each its own padded batch) and decode greedy groups in
  one loop, their key/value caches padded to a common length and the padding masked out
  (:func:`.hf_generate.generate_shared`).  Scoring, the packed prefill and the decode step
  make **one** FlexAttention call per layer over the whole row or cache, its block-sparse
  mask built once per model call from each key's segment (:mod:`.hf_flex`).

The cost model behind a split (:func:`.hf_prefix.prefix_groups`): a group costs its
prefix plus its right-padded suffix batch, in tokens; a split must save a quarter of
the group's cost and :attr:`BatchingPolicy.split_cost` tokens per extra group.  On
CPU an extra group also costs a decode loop (``split_cost = 256``); on CUDA, where the
groups share one loop, only one more prefill call (``split_cost = 64``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: The devices with a policy of their own; anything else (``mps``, ``xpu``) is run as ``cpu``.
Device = Literal["cpu", "cuda"]


@dataclass(frozen=True)
class BatchingPolicy:
    """Batching decisions of the HF backend for one device (module docstring).

    Attributes
    ----------
    device
        ``cpu`` or ``cuda``.
    split_cost
        Tokens an extra prefix group must save (:func:`.hf_prefix.prefix_groups`).
    shared_decode
        Greedy generation: all prefix groups of a chunk decode in one loop (their caches
        padded to one length) instead of one loop per group.
    flex_attention
        Attention over a packed row (scoring, the packed prefill) and the decode step: one
        FlexAttention call per layer (:mod:`.hf_flex`), compiled on CUDA, instead of one SDPA
        call per question tree and layer.
    packed_prefill
        Greedy generation: the chunk's questions prefilled in one call, packed in one row,
        then one decode loop on a preallocated cache
        (:func:`.hf_packed.generate_packed`); ``split_cost`` and ``shared_decode`` then apply only
        to sampling and to models that cannot run it.
    compile_decode
        With ``packed_prefill``: the decode step through ``torch.compile`` (CUDA graphs), off
        until measured faster on a card (:mod:`.hf_packed`).
    tokenize_ahead
        The next chunk's prompts tokenised on a worker thread while the current chunk runs
        (:mod:`.hf_ahead`); not on a CPU, where the thread would take a core from the model.
    """

    device: Device = "cpu"
    split_cost: int = 256
    shared_decode: bool = False
    flex_attention: bool = False
    packed_prefill: bool = False
    compile_decode: bool = False
    tokenize_ahead: bool = False

    @classmethod
    def for_device(cls, device: str) -> BatchingPolicy:
        """The policy for a torch device type (``"cuda"``, ``"cuda:1"``, ``"cpu"``, …)."""
        if str(device).split(":")[0] == "cuda":
            return cls(
                device="cuda",
                split_cost=64,
                shared_decode=True,
                flex_attention=True,
                packed_prefill=True,
                tokenize_ahead=True,
            )
        return cls()
