"""ENADE-QA: Portuguese health-sciences questions of Brazil's ENADE (the canonical layout).

Prompt sets shipped here (``prompts.preset``): ``enade_qa``, the benchmark's published
prompt (the default), and ``team``, the enade-bench team's prompt; the team's worked
examples (``prompts/few_shot_examples.yaml``) serve the one- and few-shot strategies.
"""

from pathlib import Path

from enade_bench.benchmarks.base import CsvExam, PromptSets
from enade_bench.dataset.presets import DatasetPreset

PROMPTS = Path(__file__).parent / "prompts"

#: ENADE-QA's canonical layout (the columns are the canonical field names).
PRESET = DatasetPreset("enade")

BENCHMARK = CsvExam(
    name="enade",
    preset=PRESET,
    prompts=PromptSets(
        templates={"enade_qa": PROMPTS / "enade_qa.yaml", "team": PROMPTS / "team.yaml"},
        default={"pt-BR": "enade_qa"},
        examples={"pt-BR": PROMPTS / "few_shot_examples.yaml"},
    ),
)
