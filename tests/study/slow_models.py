"""Model loads that outlast their Slurm job (the cluster's end of a job, without a real model
running for minutes): what ``study`` runs in place of
:func:`enade_bench.study.execute.load_model` in :data:`CLI`.

``slow`` (and ``lost``) sleep in their load, so the time-limit signal stops them; ``stuck`` ignores that signal
(as a load stuck in C code never sees it: blocking it in one thread is not enough, another
thread of the process takes it), so only Slurm's kill at the limit ends it. ``flaky`` (and
``preempted``) sleeps in its first load only (the file ``$ENADE_BENCH_TEST_ONCE`` marks it done):
a try lost with its node (or preempted), then one that runs. Every other model loads for real.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from enade_bench.backends.base import Backend
from enade_bench.config import ExperimentConfig
from enade_bench.study.execute import load_model

#: ``study`` with these loads (the function pickles by this module's name, which each job imports).
CLI = [
    sys.executable,
    "-c",
    "import enade_bench.study.execute as e, tests.study.slow_models as s; "
    "e.load_model = s.slow_load; from enade_bench.cli.main import entry_point; entry_point()",
]


def slow_load(cfg: ExperimentConfig) -> Backend:
    """The model of ``cfg``; ``slow``, ``stuck`` and ``lost`` never finish loading (see the module)."""
    if cfg.name in {"flaky", "preempted"}:
        once = Path(os.environ["ENADE_BENCH_TEST_ONCE"])
        if once.exists():
            return load_model(cfg)
        once.touch()
        time.sleep(600)
    if cfg.name not in {"slow", "stuck", "lost"}:
        return load_model(cfg)
    if cfg.name == "stuck":
        signal.signal(signal.SIGUSR2, signal.SIG_IGN)
    time.sleep(600)
    raise RuntimeError(f"{cfg.name}: the job outlived its time limit")
