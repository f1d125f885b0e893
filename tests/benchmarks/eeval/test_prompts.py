"""The two prompt templates, exactly as the benchmark writes them, and k-shot demos."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.benchmarks.eeval.helpers import raw_rows

from enade_bench.benchmarks.eeval.benchmark import PROMPTS
from enade_bench.benchmarks.eeval.loader import load_eeval
from enade_bench.benchmarks.eeval.prompts import build_eeval_prompt, load_templates
from enade_bench.config import DatasetConfig
from enade_bench.errors import UserError

HEADER = "以下是中国关于高中生物考试的单项选择题，请选出其中的正确答案。"


@pytest.fixture(scope="module")
def biology(eeval_root: Path):  # type: ignore[no-untyped-def]
    data = load_eeval(
        DatasetConfig(path=str(eeval_root / "val"), benchmark="eeval", cursos=["high_school_biology"])
    )
    templates, _ = load_templates(PROMPTS)
    return data, templates


def _block(row: dict[str, str]) -> str:
    return f"{row['question']}\nA. {row['A']}\nB. {row['B']}\nC. {row['C']}\nD. {row['D']}"


def test_answer_only_layout_zero_and_one_shot(biology, eeval_root: Path) -> None:  # type: ignore[no-untyped-def]
    data, templates = biology
    subject = data.subjects["high_school_biology"]
    q = data.dataset.questions[0]
    val = raw_rows(eeval_root / "val" / "High_School_Biology_val.csv")[0]
    dev = raw_rows(eeval_root / "dev" / "High_School_Biology_dev.csv")
    demos = data.demos[subject.key]
    zero = build_eeval_prompt(templates["ao"], subject, q.stem, q.options, demos, 0)
    assert zero.plain_text() == f"{HEADER}\n\n{_block(val)}\n答案："
    one = build_eeval_prompt(templates["ao"], subject, q.stem, q.options, demos, 1)
    assert (
        one.plain_text() == f"{HEADER}\n\n{_block(dev[0])}\n答案：{dev[0]['answer']}\n\n{_block(val)}\n答案："
    )
    assert one.prefill and one.answer_label == "答案："


def test_five_shot_uses_the_subjects_dev_split_in_order(biology, eeval_root: Path) -> None:  # type: ignore[no-untyped-def]
    data, templates = biology
    subject = data.subjects["high_school_biology"]
    q = data.dataset.questions[1]
    dev = raw_rows(eeval_root / "dev" / "High_School_Biology_dev.csv")
    text = build_eeval_prompt(
        templates["ao"], subject, q.stem, q.options, data.demos[subject.key], 5
    ).plain_text()
    positions = [text.index(_block(row) + f"\n答案：{row['answer']}") for row in dev]
    assert positions == sorted(positions)
    assert text.count("答案：") == 6


def test_chain_of_thought_layout(biology, eeval_root: Path) -> None:  # type: ignore[no-untyped-def]
    data, templates = biology
    subject = data.subjects["high_school_biology"]
    q = data.dataset.questions[0]
    dev = raw_rows(eeval_root / "dev" / "High_School_Biology_dev.csv")
    parts = build_eeval_prompt(templates["cot"], subject, q.stem, q.options, data.demos[subject.key], 2)
    text = parts.plain_text()
    assert text.endswith("\n答案：让我们一步一步思考，\n1. ")
    for row in dev[:2]:
        explanation = " ".join(row["explanation"].split())
        assert (
            f"{_block(row)}\n答案：让我们一步一步思考，\n1. {explanation}\n所以答案是{row['answer']}。"
            in text
        )
    assert text.count("所以答案是") == 2


def test_k_out_of_range(biology) -> None:  # type: ignore[no-untyped-def]
    data, templates = biology
    subject = data.subjects["high_school_biology"]
    q = data.dataset.questions[0]
    with pytest.raises(UserError, match=r"0\.\.5"):
        build_eeval_prompt(templates["ao"], subject, q.stem, q.options, data.demos[subject.key], 6)
    with pytest.raises(UserError, match="5 demonstrations needed, 2"):
        build_eeval_prompt(templates["ao"], subject, q.stem, q.options, data.demos[subject.key][:2], 5)


def test_template_errors(tmp_path: Path) -> None:
    source = (PROMPTS / "answer_only.yaml").read_text(encoding="utf-8")
    (tmp_path / "chain_of_thought.yaml").write_text(
        (PROMPTS / "chain_of_thought.yaml").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    (tmp_path / "answer_only.yaml").write_text(source + "\nfooter: x\n", encoding="utf-8")
    with pytest.raises(UserError, match="footer"):
        load_templates(tmp_path)
    (tmp_path / "answer_only.yaml").write_text(source.replace("{subject}", "{course}"), encoding="utf-8")
    with pytest.raises(UserError, match="placeholder"):
        load_templates(tmp_path)
