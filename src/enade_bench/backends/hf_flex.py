"""One FlexAttention call per decoder layer over a packed row (the CUDA policy's attention).

Tree scoring (:mod:`.hf_tree`) and the packed prefill (:mod:`.hf_packed`) lay a chunk's
questions end to end in one row after a cached prefix.  Each token may attend to the
prefix, to its ancestor segments and causally to its own segment; nothing of another
question.  With every subtree laid out as one contiguous span (depth first, as
:func:`.hf_radix.radix_units` does; a question of the packed prefill is one segment whose
parent is the prefix), that mask is two numbers per key:

.. math::

    \\text{attend}(q, k) \\iff \\text{pos}_k \\le q < \\text{reach}_k,

where :math:`\\text{pos}_k` is key :math:`k`'s place in the row (:math:`-1` for the cached
prefix) and :math:`\\text{reach}_k` the end of the subtree of :math:`k`'s segment (the
row's end for the prefix).  A key of an ancestor segment is before the query and its
subtree holds the query; a key of the query's own segment is causal; a key of a sibling
subtree or of another question ends before the query.  This is FlexAttention's document
masking (``document_id[q] == document_id[kv]``) generalised to prefix sharing, the
pattern of its ``mask_mod`` examples.

The :class:`~torch.nn.attention.flex_attention.BlockMask` is built **once per model call**
on the model's device from those two vectors, block by block (:func:`row_block_mask`: a
``128 × 128`` tile is *full* when every pair in it attends, *partial* when some may, and
skipped otherwise), with no dense ``row × keys`` mask and no host synchronisation, and
every layer shares it.  Each layer then makes **one** ``flex_attention`` call over the
whole row (grouped-query attention native, ``enable_gqa``): no per-question gather, no
padding, no copy of keys or values.  A decode step on the preallocated cache of
:mod:`.hf_slots` is one ``flex_attention`` call too, with the same mask: one query per row
(query batch = rows) over one cache that holds the prefix once (key batch 1), the BlockMask
with a batch dimension giving each row the prefix's tiles and the tiles of its own columns
written so far (a query's place is ``b + q``: its row in a decode step, its token in a row).

On CUDA the call is ``torch.compile``'d (:func:`kernel`, dynamic shapes: one compilation
serves every chunk); elsewhere FlexAttention runs eager (a dense reference, for tests:
the CPU policy keeps its per-question SDPA path, docs/performance.md).  A decode step's
batch is static in its graph (:mod:`.hf_slots` pads it to a power of two), so that Inductor
may choose its flex-decoding kernel.  Each compiled graph (:data:`Graph`: device, dtype,
scoring, prefill or decode, the decode batch) is proven on its own: should compiling it or
its first call fail, the chunk runs again on the SDPA path, the CPU policy's own code, and
so does every later call that needs that kind of graph in that dtype
(:func:`attend_or_fall_back`).

The mask function is a module-level function reading the current call's vectors from
:data:`_MASK` (one model call at a time per process): a compiled kernel sees the same
function every call and the vectors as inputs, so no chunk recompiles it for a new closure.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import torch
from torch.fx.experimental import _config as fx_config

from enade_bench.backends.hf_attention import switched_attention
from enade_bench.backends.hf_batching import BatchingPolicy
from enade_bench.backends.hf_device import to_device

#: The name the attention is registered under with transformers' ``AttentionInterface``.
FLEX_ATTENTION = "enade_flex"
#: The BlockMask's tile (FlexAttention's default sparse block size).
BLOCK = 128


@dataclass
class _MaskInputs:
    """The current call's mask vectors (on the model's device, padded to whole blocks)."""

    pos: torch.Tensor = field(default_factory=lambda: torch.zeros(0, dtype=torch.long))
    reach: torch.Tensor = field(default_factory=lambda: torch.zeros(0, dtype=torch.long))


_MASK = _MaskInputs()


def _row_mask(b: torch.Tensor, h: torch.Tensor, q: torch.Tensor, kv: torch.Tensor) -> torch.Tensor:
    """``mask_mod`` of a packed row: ``pos[kv] <= at < reach[kv]``, ``at = b + q`` the query's place.

    A prefill or a scoring call is one row (``b = 0``, ``q`` its token); a decode step is one
    query per row (``q = 0``, ``b`` the row) over one cache shared by every row (:mod:`.hf_slots`).
    """
    at = b + q
    return (_MASK.pos[kv] <= at) & (at < _MASK.reach[kv])


def _blocks(n: int) -> int:
    return (n + BLOCK - 1) // BLOCK


def _ordered(tiles: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``batch × q-blocks × kv-blocks`` booleans -> BlockMask's ``(num_blocks, indices)``, head 1."""
    num = tiles.sum(dim=-1, dtype=torch.int32)
    order = torch.argsort(tiles.to(torch.int32), dim=-1, descending=True, stable=True).to(torch.int32)
    return num[:, None].contiguous(), order[:, None].contiguous()


def row_vectors(
    past: int, reach_per_token: Sequence[int] | torch.Tensor, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(pos, reach)`` over the keys ``past + row`` (module docstring), padded to whole blocks.

    ``reach_per_token[i]``: the end (exclusive, in row coordinates) of the subtree of row
    token ``i``'s segment.  Padding keys have ``pos`` past every query and ``reach`` 0.  Built
    with tensor operations on ``device``: one host-to-device copy (``reach``, non-blocking on CUDA).
    """
    own = to_device(torch.as_tensor(reach_per_token, dtype=torch.long), device)
    n = own.numel()
    keys = past + n
    pad = _blocks(keys) * BLOCK - keys
    at = torch.arange(_blocks(keys) * BLOCK, device=device) - past  # each key's place in the row
    pos = torch.where(at < 0, -1, torch.where(at < n, at, n + BLOCK))
    reach = torch.cat(
        (torch.full((past,), n, device=device), own, torch.zeros(pad, dtype=torch.long, device=device))
    )
    return pos, reach


def row_block_mask(pos: torch.Tensor, reach: torch.Tensor, q_len: int, kv_len: int, rows: int = 1) -> Any:
    """The BlockMask of :func:`_row_mask` for ``q_len`` queries over ``kv_len`` keys, batch ``rows``.

    Per ``kv`` tile: its keys' least and greatest ``pos`` and ``reach``; a tile of queries at
    ``[q0, q1]`` may attend when some key has ``pos <= q1`` and ``reach > q0`` (a bound:
    a tile kept that attends nothing is masked element-wise), and is full when every key
    has ``pos <= q0`` and ``reach > q1`` and the tile lies within ``kv_len``.  One row
    (``rows = 1``): the query tiles of the row; a decode step (``rows`` rows, ``q_len = 1``):
    row ``b``'s one query at ``b``, so each row reads its own tiles.  Everything stays on
    ``pos``'s device; no ``q_len × kv_len`` mask is made.
    """
    from torch.nn.attention.flex_attention import BlockMask  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    kb = _blocks(kv_len)
    tile_pos = pos[: kb * BLOCK].view(kb, BLOCK)
    tile_reach = reach[: kb * BLOCK].view(kb, BLOCK)
    whole = torch.arange(1, kb + 1, device=pos.device) * BLOCK <= kv_len
    if rows == 1:  # rows x query tiles: each tile's first and last query
        q0 = (torch.arange(_blocks(q_len), device=pos.device) * BLOCK)[None]
        q1 = torch.clamp(q0 + BLOCK - 1, max=q_len - 1)
    else:
        q0 = q1 = torch.arange(rows, device=pos.device)[:, None]
    q0, q1 = q0[..., None], q1[..., None]
    some = (tile_pos.amin(1) <= q1) & (tile_reach.amax(1) > q0)
    full = (tile_pos.amax(1) <= q0) & (tile_reach.amin(1) > q1) & whole
    partial_num, partial_idx = _ordered(some & ~full)
    full_num, full_idx = _ordered(full)
    return BlockMask.from_kv_blocks(
        partial_num,
        partial_idx,
        full_num,
        full_idx,
        BLOCK_SIZE=BLOCK,
        mask_mod=_row_mask,
        seq_lengths=(q_len, kv_len),
        compute_q_blocks=False,  # the transposed tiles serve the backward pass only, which never runs
    )


@dataclass(frozen=True)
class FlexPlan:
    """What every layer of one model call shares: the BlockMask and its vectors ``pos``, ``reach``.

    ``kind``: the call's graph: ``scoring`` (a scored row), ``prefill`` (a packed row) or ``decode``.
    """

    block_mask: Any
    pos: torch.Tensor
    reach: torch.Tensor
    kind: str = "scoring"

    def bind(self) -> None:
        """Make this plan's vectors the ones the mask function reads; its graph the last one entered."""
        _MASK.pos, _MASK.reach = self.pos, self.reach
        entry = (self.kind, int(self.block_mask.kv_num_blocks.shape[0]))  # a decode step's batch: static
        _ENTERED.pop(entry, None)
        _ENTERED[entry] = None


def row_plan(
    past: int, reach_per_token: Sequence[int] | torch.Tensor, device: torch.device, kind: str = "scoring"
) -> FlexPlan:
    """The plan of a packed row of ``len(reach_per_token)`` tokens after ``past`` cached ones."""
    pos, reach = row_vectors(past, reach_per_token, device)
    n = len(reach_per_token)
    return FlexPlan(row_block_mask(pos, reach, n, past + n), pos=pos, reach=reach, kind=kind)


@dataclass
class CompileSettings:
    """Where and how :func:`kernel` compiles ``flex_attention``.

    On CUDA with Inductor and dynamic shapes (its Triton kernel skips the BlockMask's empty
    tiles); a test or the CPU dry run compiles on the CPU by adding ``"cpu"`` to ``devices`` and
    naming ``backend="aot_eager"`` (Inductor's CPU kernel for FlexAttention fails to build
    with dynamic shapes in torch 2.13), or Inductor with ``dynamic=False``.
    """

    devices: frozenset[str] = frozenset({"cuda"})
    backend: Any = "inductor"
    dynamic: bool = True


COMPILE = CompileSettings()
_COMPILED: dict[tuple[str, str, bool], Callable[..., Any]] = {}


#: A compiled graph of :func:`kernel`: device, dtype, kind (:attr:`FlexPlan.kind`), query batch (a decode
#: step's is static, one graph per padded batch: :func:`.hf_slots.decode_rows`; a row's is 1).
Graph = tuple[str, str, str, int]
#: The graphs that have run a whole chunk; the errors of those that failed, by device, dtype and kind
#: (the calls that fall back); the ``(kind, batch)`` of the plans the current call bound, the last last.
_PROVEN: set[Graph] = set()
_FAILED: dict[tuple[str, str, str], str] = {}
_ENTERED: dict[tuple[str, int], None] = {}


def compiles(device: torch.device) -> bool:
    """Whether :func:`kernel` compiles on ``device`` (CUDA, or what :data:`COMPILE` adds)."""
    return device.type in COMPILE.devices


def kernel(device: torch.device) -> Callable[..., Any]:
    """``flex_attention`` for ``device``: compiled once where :func:`compiles` (dynamic shapes), eager elsewhere.

    Inside a model already being compiled (``compile_decode``) the plain function, which
    the outer compilation traces.
    """
    from torch.nn.attention.flex_attention import flex_attention  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    if not compiles(device) or torch.compiler.is_compiling():
        return flex_attention
    key = (device.type, repr(COMPILE.backend), COMPILE.dynamic)
    if key not in _COMPILED:
        compiled = torch.compile(flex_attention, dynamic=COMPILE.dynamic, backend=COMPILE.backend)
        _COMPILED[key] = unducked(compiled)
    return _COMPILED[key]


def unducked(compiled: Callable[..., Any]) -> Callable[..., Any]:
    """``compiled`` traced without duck sizing, and with Python floats as constants.

    Dynamo gives two dimensions of equal size one symbol and guards on their equality (a
    decode batch equal to the KV heads, a row whose query and key blocks coincide), so the
    next call where they differ compiles again; its own symbol each, one graph serves every
    chunk (``torch.fx.experimental._config.use_duck_shape``, read when a frame is traced).
    A float argument (the attention's ``scale``, one per model) traced as a symbol is
    specialised by the backend, which restarts the whole trace and compiles the frame twice
    (``_tensorify_python_scalars``); traced as a constant (``specialize_float``) it is compiled once.
    """
    from torch._dynamo import config as dynamo_config  # noqa: PLC0415

    def run(*args: Any, **kwargs: Any) -> Any:
        with (
            fx_config.patch(use_duck_shape=False),  # type: ignore[attr-defined]  # (install_config_module)
            dynamo_config.patch(specialize_float=True),  # type: ignore[attr-defined]
        ):
            return compiled(*args, **kwargs)

    return run


T = TypeVar("T")


def attend_or_fall_back(
    policy: BatchingPolicy,
    device: torch.device,
    dtype: torch.dtype,
    kinds: Sequence[str],
    run: Callable[[BatchingPolicy], T],
) -> tuple[T, str | None]:
    """``run(policy)``, a call needing the graphs ``kinds`` in ``dtype``; on the SDPA path where one failed.

    An error while a compiled graph runs falls back when that graph (:data:`Graph`) has not
    yet run a whole chunk (compiling it, or its first call) or when it is a compile error (a new
    shape compiled again); not running out of memory, which the runner halves.  It prints one
    warning line naming the graph and the error and runs the chunk again with the CPU policy's
    numbers (:meth:`.BatchingPolicy.for_device` ``("cpu")``: one SDPA call per question tree,
    :mod:`.hf_attention`), and so does every later call needing that kind of graph in that dtype
    on ``device``; the other graphs stay compiled.  Returns ``run``'s result and, where this call
    fell back, the graph and error (one line).
    """
    if not (policy.flex_attention and compiles(device)):
        return run(policy), None
    from torch._dynamo.exc import BackendCompilerFailed  # noqa: PLC0415 (Dynamo, loaded by compiling only)

    fallback = replace(BatchingPolicy.for_device("cpu"), device=policy.device)
    name = str(dtype).removeprefix("torch.")
    if any((device.type, name, kind) in _FAILED for kind in kinds):
        return run(fallback), None
    _ENTERED.clear()
    try:
        out = run(policy)
    except torch.OutOfMemoryError:
        raise
    except Exception as exc:  # a failure of a graph not proven falls back, named; others re-raised
        if not _ENTERED:
            raise
        kind, batch = list(_ENTERED)[-1]
        if (device.type, name, kind, batch) in _PROVEN and not isinstance(exc, BackendCompilerFailed):
            raise
        graph = f"{kind} {name}" + (f" batch {batch}" if kind == "decode" else "")
        error = f"{graph}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"  # one line
        _FAILED[device.type, name, kind] = error
        print(
            f"warning: compiled FlexAttention failed ({error}); the calls needing a {kind} graph "
            f"in {name} run on the per-question SDPA path (the CPU policy) from this chunk on",
            file=sys.stderr,
            flush=True,
        )
        return run(fallback), error
    _PROVEN.update((device.type, name, kind, batch) for kind, batch in _ENTERED)
    return out, None


def flex_attention_forward(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    *_: Any,
    flex_plan: FlexPlan | None = None,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """An ``AttentionInterface`` function: one ``flex_attention`` call with ``flex_plan``'s BlockMask.

    The caller binds the plan (:meth:`FlexPlan.bind`) once before the model call, not each
    layer; the attention mask and dropout transformers pass are not read (the plan is the mask).

    ``query``: ``batch × heads × length × dim``; ``key``, ``value``: ``batch × kv-heads × keys ×
    dim``.  Returns ``batch × length × heads × dim``, as transformers' attention functions do.
    """
    if flex_plan is None:
        raise ValueError(
            "flex attention needs a flex_plan (it runs inside tree scoring and packed generation)"
        )
    if flex_plan.kind == "decode" and compiles(query.device) and not torch.compiler.is_compiling():
        torch._dynamo.mark_static(query, 0)  # the batch a constant of the graph: Inductor's flex-decoding
    # Contiguous keys and values (a no-op but for a prefill without a cached prefix, whose keys are a
    # view): one memory layout, so no stride guard compiles the kernel again (:func:`kernel`).
    out = kernel(query.device)(
        query,
        key.contiguous(),
        value.contiguous(),
        block_mask=flex_plan.block_mask,
        scale=scaling,
        enable_gqa=key.shape[1] != query.shape[1],
    )
    return out.transpose(1, 2).contiguous(), None


def flex_attention(model: Any) -> AbstractContextManager[None]:
    """Within the block, ``model`` runs :func:`flex_attention_forward` (then its own again)."""
    return switched_attention(model, FLEX_ATTENTION, flex_attention_forward)
