"""Resumed records take the grouping fields of their loaded questions (logs written before schema 2)."""

import json
from pathlib import Path

from tests.conftest import require_shared

from enade_bench.benchmarks.enem import PRESET as ENEM
from enade_bench.config import DatasetConfig
from enade_bench.dataset.loader import load_dataset
from enade_bench.results.log_key import LogKey
from enade_bench.results.store import IntermediateLog, read_result
from enade_bench.runner.work import with_current_fields

STORED = Path(__file__).resolve().parents[1] / "results" / "data"


def test_v1_log_resumes_with_the_questions_fields(tmp_path: Path) -> None:
    """The stored version-1 log of an ENEM run, resumed against the same ENEM file: every record
    gets ENEM's fields, exactly as the migrated results file of that run has them."""
    csv = require_shared("enem", "questions", "pt-br", "ENEM_2022_LC_CO_PROVA_1072.csv")
    questions = load_dataset(DatasetConfig(path=str(csv), preset="enem"), preset=ENEM).questions
    path = tmp_path / "log.jsonl"
    path.write_bytes((STORED / "v1_enem_intermediate.jsonl").read_bytes())
    fingerprint = json.loads(path.read_text(encoding="utf-8").splitlines()[0])["fingerprint"]
    done = with_current_fields(IntermediateLog(path, LogKey({}, legacy=fingerprint)).load(), questions)
    migrated = {r.key: r for r in read_result(STORED / "v1_enem_results.json").records}
    assert {k: r.model_copy(update={"options": None}) for k, r in done.items()} == migrated
    options = {q.id: list(q.options) for q in questions}
    assert all(r.options == options[r.id] for r in done.values())  # as if run in one go (issue 62)
    assert {r.fields["booklet"] for r in done.values()} == {1072}
