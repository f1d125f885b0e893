"""An exam of your own (``dataset.benchmark: generic``, the default).

A CSV or JSONL file in the canonical layout, or mapped onto it with
``dataset.columns`` (see ``docs/bring_your_own_exam.md``), answered with a neutral
prompt in the exam's language (``dataset.language``: ``pt-BR`` or ``en``) that names
no subject, and neutral worked examples for the one- and few-shot strategies.
"""

from pathlib import Path

from enade_bench.benchmarks.base import CsvExam, PromptSets
from enade_bench.dataset.presets import CANONICAL

PROMPTS = Path(__file__).parent / "prompts"

BENCHMARK = CsvExam(
    name="generic",
    preset=CANONICAL,
    prompts=PromptSets(
        templates={f"neutral_{lang}": PROMPTS / f"neutral_{lang}.yaml" for lang in ("pt-BR", "en")},
        default={lang: f"neutral_{lang}" for lang in ("pt-BR", "en")},
        examples={lang: PROMPTS / f"examples_{lang}.yaml" for lang in ("pt-BR", "en")},
    ),
)
