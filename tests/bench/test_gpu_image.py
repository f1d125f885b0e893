"""The GPU arm against the GPU machine's image, on the CPU (issue 35, item 1).

``bench/gpu/run_gpu.sh`` runs the ``gpu`` test through pytest and the arm (ours and lm-eval's HF
backend) on a machine without network: every distribution they import must be in the image
(``../shared/gpu_image_packages.txt``) or among the wheels ``bench/gpu/prepare.sh`` carries
(``bench/gpu/wheels.txt``).  The closure is what a small run of both really imports here
(``gpu_closure.py``, in a subprocess); a distribution counts as needed when the first module to
import it is ours, the standard library's, or a distribution that is itself needed and not in
the image (what an image package imports is the image's own affair: its version there comes with
its own dependencies).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT, SHARED_DATA, require_shared

IMAGE = SHARED_DATA.parent / "gpu_image_packages.txt"
WHEELS = REPO_ROOT / "bench" / "gpu" / "wheels.txt"
PREPARE = REPO_ROOT / "bench" / "gpu" / "prepare.sh"
#: Import names that are ours (the checkout travels as source, on PYTHONPATH: src and its root).
OURS = {"enade_bench", "bench", "tests", "__main__", "__mp_main__"}


def canonical(name: str) -> str:
    """A distribution name as PEP 503 normalises it."""
    return re.sub(r"[-_.]+", "-", name).lower()


def listed(path: Path) -> set[str]:
    return {
        canonical(line.strip())
        for line in path.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }


def _owners() -> dict[str, str]:
    """Installed file (absolute, normalised path) -> its distribution (no ``resolve`` of each of the
    environment's ~10^5 files: a module's file is looked up as imported, then resolved)."""
    owners = {}
    for dist in metadata.distributions():
        name = canonical(dist.metadata["Name"])
        for file in dist.files or ():
            owners[os.path.normpath(str(dist.locate_file(file)))] = name
    return owners


def needed_distributions(lines: list[tuple[str, str, str]], image: set[str]) -> dict[str, str]:
    """Distributions the run needs outside the image: name -> the module that first imported it."""
    owners = _owners()
    dist_of = {
        name: owners.get(os.path.normpath(file)) or owners.get(os.path.realpath(file)) if file else None
        for name, file, _ in lines
    }
    stdlib = sys.stdlib_module_names
    needed: dict[str, str] = {}

    def module_dist(name: str) -> str | None:
        while name:  # a module's own file, else its package's
            if dist_of.get(name):
                return dist_of[name]
            name = name.rpartition(".")[0]
        return None

    changed = True
    while changed:  # until no more: a distribution that a needed one (or we) imports is needed
        changed = False
        for name, _, by in lines:
            dist = dist_of.get(name)
            parent = name.rpartition(".")[0]
            if dist is None or dist in image or dist in needed or (parent and module_dist(parent) == dist):
                continue
            top = by.split(".")[0]
            by_dist = module_dist(by)
            if top in OURS or by == "" or (by_dist is None and top in stdlib) or by_dist in needed:
                needed[dist] = by
                changed = True
    return needed


@pytest.mark.slow
def test_what_the_arm_imports_is_in_the_image_or_carried(tmp_path: Path) -> None:
    if not IMAGE.exists():
        pytest.skip(f"needs {IMAGE} (the GPU image's package list beside the checkout)")
    enem = require_shared("enem", "questions", "pt-br")
    from bench.speed.shapes import default_tokenizer_dir

    listing = tmp_path / "modules.tsv"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT / "src"), str(REPO_ROOT)])}
    run = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).with_name("gpu_closure.py")),
            str(enem),
            default_tokenizer_dir(),
            str(listing),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    lines = [tuple(line.split("\t")) for line in listing.read_text().splitlines()]
    names = {name for name, _, _ in lines}
    assert {"lm_eval.models.huggingface", "bench.speed.gpu", "enade_bench.backends.hf_packed"} <= names
    assert "tests.backends.test_gpu" in names or any(n.endswith("test_gpu") for n in names)
    image, carried = listed(IMAGE), listed(WHEELS)
    needed = needed_distributions(lines, image)  # type: ignore[arg-type]
    assert {"lm-eval", "pydantic"} <= set(needed)  # the closure reaches what the image lacks
    missing = {d: by for d, by in needed.items() if d not in carried and d != "enade-bench"}
    assert not missing, f"imported on the card but neither in the image nor in {WHEELS.name}: {missing}"


def test_every_carried_wheel_can_be_made_here() -> None:
    """prepare.sh makes each wheel at the version installed here: each must be installed."""
    absent = []
    for name in listed(WHEELS):
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            absent.append(name)
    assert not absent, f"{WHEELS.name} names distributions not installed here: {absent}"


def test_prepare_fails_on_a_wheel_it_cannot_make(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels.txt"
    wheels.write_text("# one real, one not installed\npydantic\nenade-bench-no-such-wheel\n")
    run = subprocess.run(
        ["bash", str(PREPARE)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PY": sys.executable, "WHEELS": str(wheels)},
    )
    assert run.returncode == 2
    assert run.stderr.startswith("error: ") and "enade-bench-no-such-wheel" in run.stderr
    assert "pydantic" not in run.stderr.split(":")[-1]
    assert "Traceback" not in run.stderr
