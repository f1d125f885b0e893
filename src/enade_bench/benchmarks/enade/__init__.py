"""ENADE-QA: Portuguese health-sciences questions of Brazil's ENADE (the canonical layout).

Prompt presets: ``enade_qa``, the benchmark's published prompt (the default when a
config has no ``prompts`` block), and the team-written ``prompts/default.yaml``
selected with ``prompts: {dir: prompts}``.
"""

from pathlib import Path

from enade_bench.benchmarks.base import CsvExam
from enade_bench.dataset.presets import ENADE

PROMPTS = Path(__file__).parent / "prompts"

BENCHMARK = CsvExam(
    name="enade",
    preset=ENADE,
    prompt_presets={"enade_qa": PROMPTS / "enade_qa.yaml"},
    default_prompts="enade_qa",
)
