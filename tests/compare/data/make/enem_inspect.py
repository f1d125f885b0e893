"""inspect_ai task: the 10 ENEM questions of ``questions.py`` as multiple choice (run beside questions.jsonl)."""

from inspect_ai import Task, task
from inspect_ai.dataset import FieldSpec, json_dataset
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice


@task
def enem_2022_ch() -> Task:
    fields = FieldSpec(
        input="question", target="answer", id="id", choices="choices", metadata=["year", "area"]
    )
    return Task(dataset=json_dataset("questions.jsonl", fields), solver=multiple_choice(), scorer=choice())
