"""ENEM: Brazil's national high-school exam, with INEP's 3PL item parameters.

Everything about ENEM lives in this folder: the file layout of the question files
(:data:`PRESET`), the ENEM prompts, INEP's item tables and booklet linking
(:mod:`.inep`), the one function that finds the ENEM data folder (:mod:`.data`), the
published LLM response patterns (:mod:`.published`), the psychometric analysis of
ENEM runs (:mod:`.analysis`, with its tables and figures) and the study
(:mod:`.study`).
"""

from pathlib import Path

from enade_bench.benchmarks.base import PromptSets
from enade_bench.benchmarks.enem.benchmark import EnemBenchmark
from enade_bench.benchmarks.enem.inep import ENEM_FILE_NAME, v1_fields
from enade_bench.dataset.presets import DatasetPreset
from enade_bench.dataset.schema import LETTERS
from enade_bench.results.store import V1Fields, register_v1_fields

PROMPTS = Path(__file__).parent / "prompts"

#: The files of ``../shared/data/enem/questions``: ``area`` is the ``test`` column (CH, CN,
#: LC, MT), ``booklet`` the INEP booklet code of the file name (0 when unknown: linked by
#: answer key in the analysis), ``language`` the row's language (LC items 1-5 exist in
#: English and Spanish), ``question_number`` its booklet position.
PRESET = DatasetPreset(
    "enem",
    columns={"year": "year", "stem": "body", **{letter: letter for letter in LETTERS}, "answer": "answer"},
    id_template="{file_stem}:{question_number}:{language}",
    fields=("year", "area", "booklet", "language", "question_number"),
    field_columns={"area": "test"},
    file_fields=ENEM_FILE_NAME,
    int_fields=frozenset({"year", "booklet", "question_number"}),
    breakdowns=("year", "area", "booklet", "language"),
)

BENCHMARK = EnemBenchmark(
    name="enem",
    preset=PRESET,
    prompts=PromptSets(
        templates={f"enem_{lang}": PROMPTS / f"enem_{lang}.yaml" for lang in ("pt-BR", "en")},
        default={lang: f"enem_{lang}" for lang in ("pt-BR", "en")},
    ),
)

# Results files written before each exam had its own fields (schema version 1).
register_v1_fields("enem", V1Fields(v1_fields, {"component": "area"}))  # type: ignore[arg-type]
