"""``--quiet`` silences the model libraries' progress bars and warnings, not their errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from enade_bench.backends.quiet import gguf_conversion_bar, quiet_libraries

ROOT = Path(__file__).resolve().parents[2]


def test_quiet_libraries_switches_off_and_restores() -> None:
    import huggingface_hub.utils as hub_utils
    from transformers.utils import logging as tf_logging

    level = tf_logging.get_verbosity()
    assert tf_logging.is_progress_bar_enabled()
    with quiet_libraries(True):
        assert not tf_logging.is_progress_bar_enabled()
        assert hub_utils.are_progress_bars_disabled()
        assert tf_logging.get_verbosity() == tf_logging.ERROR
    assert tf_logging.is_progress_bar_enabled() and not hub_utils.are_progress_bars_disabled()
    assert tf_logging.get_verbosity() == level
    with quiet_libraries(False):
        assert tf_logging.is_progress_bar_enabled()


def test_restores_libraries_first_imported_inside_the_block() -> None:
    # A fresh interpreter: transformers is imported under --quiet and must come back with its bars on.
    code = (
        "import sys\n"
        "from enade_bench.backends.quiet import quiet_libraries\n"
        "assert 'transformers' not in sys.modules\n"
        "with quiet_libraries(True):\n"
        "    pass\n"
        "from transformers.utils import logging\n"
        "import huggingface_hub.utils as hub\n"
        "print(logging.is_progress_bar_enabled(), hub.are_progress_bars_disabled())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "False"]


def test_quiet_keeps_library_errors() -> None:
    import logging

    from transformers.utils import logging as tf_logging

    logger = tf_logging.get_logger("transformers.modeling_utils")
    with quiet_libraries(True):
        assert logger.isEnabledFor(logging.ERROR)
        assert not logger.isEnabledFor(logging.WARNING)
    assert logger.isEnabledFor(logging.WARNING)


def test_gguf_conversion_bar_follows_the_switch() -> None:
    import transformers.modeling_gguf_pytorch_utils as gguf_utils

    original = gguf_utils.tqdm
    with gguf_conversion_bar():
        assert gguf_utils.tqdm is original  # progress bars on: untouched
    with quiet_libraries(True), gguf_conversion_bar():
        bar = gguf_utils.tqdm(range(3), desc="Converting and de-quantizing GGUF tensors...")
        assert bar.disable
        bar.close()
    assert gguf_utils.tqdm is original


def _run_demo(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1"}
    code = "import sys; from enade_bench.cli.main import main; sys.exit(main())"
    args = ["run", "configs/demo.yaml", "--limit", "1", "--output-dir", str(out), *extra]
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_quiet_run_of_the_packaged_model_prints_nothing_on_stderr(tmp_path: Path) -> None:
    loud = _run_demo(tmp_path / "loud")
    assert loud.returncode == 0, loud.stderr
    assert "Loading weights" in loud.stderr  # the bar this test is about (so the check below can fail)
    quiet = _run_demo(tmp_path / "quiet", "--quiet")
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""
    assert "accuracy" in quiet.stdout
    bad = _run_demo(tmp_path / "quiet" / "demo_smollm2_results.json", "--quiet")  # errors still print
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        f"error: --output-dir: '{tmp_path / 'quiet' / 'demo_smollm2_results.json'}' is a file, not a folder"
    ]
