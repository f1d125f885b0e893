"""Teste de Progresso: the medical-school progress test (four options, A–D).

An example of an exam added as a plug-in: a preset (the file's own column names
and its grouping fields, ``year`` and the ``area`` of medicine), a prompt file and
two worked examples, nothing else. ``sample.csv`` holds eight questions written by
the enade-bench team in the test's style (not items of a real edition).
"""

from pathlib import Path

from enade_bench.benchmarks.base import CsvExam, PromptSets
from enade_bench.dataset.presets import DatasetPreset
from enade_bench.results.store import V1Fields, register_v1_fields

HERE = Path(__file__).parent

PRESET = DatasetPreset(
    name="progress_test",
    columns={
        "stem": "enunciado",
        "A": "alternativa_a",
        "B": "alternativa_b",
        "C": "alternativa_c",
        "D": "alternativa_d",
        "answer": "gabarito",
        "year": "ano",
    },
    id_template="tp{ano}_{numero}",
    fields=("year", "area"),
    field_columns={"area": "grande_area"},
)

BENCHMARK = CsvExam(
    name="progress_test",
    preset=PRESET,
    prompts=PromptSets(
        templates={"progress_test": HERE / "prompt.yaml"},
        default={"pt-BR": "progress_test"},
        examples={"pt-BR": HERE / "examples.yaml"},
    ),
)
# Results files written before each exam had its own fields (schema version 1).
register_v1_fields("progress_test", V1Fields.renamed({"year": "year", "area": "component"}))
