"""``--quiet``: silence the model libraries' progress bars and chatter, keep their errors.

``transformers`` draws a "Loading weights" bar and logs warnings, ``huggingface_hub``
and ``datasets`` draw download and conversion bars; none of them look at our
``--quiet``.  :func:`quiet_libraries` turns their progress bars off and their
loggers down to errors for the duration of a command, and puts the previous
settings back afterwards (so an in-process caller, such as the tests, is left
as it was).  Errors still reach stderr: the ``error:`` line of the command, and
the libraries' own error-level log records.

``datasets`` is only imported for ``hf://`` paths and takes seconds to import,
so when it is not loaded yet its switch is the environment variable
``HF_DATASETS_DISABLE_PROGRESS_BARS`` (read when it is imported; restored here,
but a ``datasets`` imported under ``--quiet`` keeps its bars off in that process).

Our own ``retry:`` lines (an API request waiting more than 5 s,
:mod:`enade_bench.backends.api.resilience`) are chatter too: :func:`waits_announced`
is false inside the block.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from enade_bench.environ import environ_set

_DATASETS_ENV = "HF_DATASETS_DISABLE_PROGRESS_BARS"
#: Whether long retry waits print their line (off under ``--quiet``); a flag, not a context
#: variable, since the API backends wait in worker threads.
_WAITS = {"announce": True}


def waits_announced() -> bool:
    """Whether a long API retry wait prints its ``retry:`` line (false under ``--quiet``)."""
    return _WAITS["announce"]


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    from transformers.utils import logging as tf_logging  # noqa: PLC0415 (heavy or optional dependency, imported at use)

    verbosity = tf_logging.get_verbosity()
    bars = tf_logging.is_progress_bar_enabled()
    tf_logging.set_verbosity_error()
    tf_logging.disable_progress_bar()
    try:
        yield
    finally:
        tf_logging.set_verbosity(verbosity)
        if bars:
            tf_logging.enable_progress_bar()


@contextmanager
def _quiet_hub() -> Iterator[None]:
    from huggingface_hub import utils as hub_utils  # noqa: PLC0415 (heavy or optional dependency, imported at use)

    disabled = hub_utils.are_progress_bars_disabled()
    hub_utils.disable_progress_bars()
    try:
        yield
    finally:
        if not disabled:
            hub_utils.enable_progress_bars()


@contextmanager
def _quiet_datasets() -> Iterator[None]:
    if "datasets" not in sys.modules:
        with environ_set({_DATASETS_ENV: "1"}):
            yield
        return
    import datasets  # noqa: PLC0415 (heavy or optional dependency, imported at use)
    from datasets.utils import logging as ds_logging  # noqa: PLC0415 (heavy or optional dependency, imported at use)

    verbosity = ds_logging.get_verbosity()
    disabled = datasets.are_progress_bars_disabled()
    ds_logging.set_verbosity(logging.ERROR)
    if not disabled:
        datasets.disable_progress_bars()
    try:
        yield
    finally:
        ds_logging.set_verbosity(verbosity)
        if not disabled:
            datasets.enable_progress_bars()


@contextmanager
def quiet_libraries(quiet: bool = True) -> Iterator[None]:
    """Within the block, no progress bars or warnings from transformers, huggingface_hub, datasets.

    Parameters
    ----------
    quiet
        ``False`` makes this a no-op (so callers can write
        ``with quiet_libraries(args.quiet):``).
    """
    if not quiet:
        yield
        return
    with ExitStack() as stack:
        stack.callback(_WAITS.__setitem__, "announce", _WAITS["announce"])
        _WAITS["announce"] = False
        # transformers first: on import it copies huggingface_hub's switch as its own default.
        for silence in (_quiet_transformers, _quiet_hub, _quiet_datasets):
            try:
                stack.enter_context(silence())
            except ImportError:  # a library that is not installed prints nothing either
                continue
        yield


@contextmanager
def gguf_conversion_bar() -> Iterator[None]:
    """Make transformers' GGUF conversion bar follow transformers' own progress-bar switch.

    ``transformers.modeling_gguf_pytorch_utils`` draws "Converting and
    de-quantizing GGUF tensors" with ``tqdm`` directly, ignoring
    ``transformers.utils.logging.disable_progress_bar()``; under ``--quiet``
    (:func:`quiet_libraries`) the bar is disabled for the duration of the block.
    """
    from transformers.utils import logging as tf_logging  # noqa: PLC0415 (heavy or optional dependency, imported at use)

    if tf_logging.is_progress_bar_enabled():
        yield
        return
    import transformers.modeling_gguf_pytorch_utils as gguf_utils  # noqa: PLC0415 (heavy or optional dependency, imported at use)

    original = gguf_utils.tqdm
    gguf_utils.tqdm = functools.partial(original, disable=True)
    try:
        yield
    finally:
        gguf_utils.tqdm = original
