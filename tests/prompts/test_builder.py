from pathlib import Path

import pytest
from tests.conftest import TEAM_EXAMPLES, TEAM_PROMPT

from enade_bench.dataset.schema import Question
from enade_bench.errors import UserError
from enade_bench.prompts.builder import build_prompt, option_view
from enade_bench.prompts.templates import load_prompt_set

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = load_prompt_set(TEAM_PROMPT, TEAM_EXAMPLES)
Q5 = Question(
    id="q", stem="Qual é o princípio?", options=("um", "dois", "três", "quatro", "cinco"), answer="B"
)
Q4 = Question(id="q4", stem="Qual?", options=("um", "dois", "três", "quatro"), answer="D")


def test_zero_shot_generation_layout() -> None:
    parts = build_prompt(Q5, Q5.options, "generation", 0, PROMPTS)
    assert "A, B, C, D ou E" in parts.user
    assert parts.user.endswith("Qual é o princípio?\nA) um\nB) dois\nC) três\nD) quatro\nE) cinco")
    assert "Exemplo:" not in parts.user and not parts.prefill
    assert parts.plain_text().endswith("E) cinco\nResposta:")
    assert parts.system and "ENADE" in parts.system


def test_four_option_items_list_four_valid_letters() -> None:
    parts = build_prompt(Q4, Q4.options, "generation", 0, PROMPTS)
    assert "A, B, C ou D" in parts.user and "E)" not in parts.user


@pytest.mark.parametrize(("shots", "n_examples"), [(1, 1), (2, 2)])
def test_examples_are_bracketed_and_precede_the_question(shots: int, n_examples: int) -> None:
    parts = build_prompt(Q5, Q5.options, "generation", shots, PROMPTS)
    assert parts.user.count("Exemplo:") == n_examples
    assert parts.user.count("Agora responda:") == 1
    for example in PROMPTS.examples[:n_examples]:
        assert f"{example.stem}\n" in parts.user
        assert f"Resposta: {example.answer}\n\n" in parts.user
    assert parts.user.index("Exemplo:") < parts.user.index("Agora responda:") < parts.user.index(Q5.stem)


def test_log_prob_prompt_has_no_options_and_example_answer_text() -> None:
    parts = build_prompt(Q5, Q5.options, "log_prob", 1, PROMPTS)
    assert "A) um" not in parts.user
    example = PROMPTS.examples[0]
    assert f"Resposta: {example.options[example.answer]}" in parts.user
    assert parts.prefill and parts.user.endswith(Q5.stem)


def test_shuffled_options_are_relabelled() -> None:
    shown = option_view(Q5, [4, 3, 2, 1, 0])
    parts = build_prompt(Q5, shown, "first_token", 0, PROMPTS)
    assert "A) cinco\nB) quatro" in parts.user and parts.prefill


def test_too_many_shots_and_bad_templates(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="3 worked examples needed"):
        build_prompt(Q5, Q5.options, "generation", 3, PROMPTS)
    (tmp_path / "t.yaml").write_text("instruction: x\ninstruction_log_prob: y\nbogus: 1\n")
    (tmp_path / "e.yaml").write_text("examples: []\n")
    with pytest.raises(UserError, match="t.yaml: key 'bogus': unknown key"):
        load_prompt_set(tmp_path / "t.yaml", tmp_path / "e.yaml")
    (tmp_path / "t.yaml").write_text("instruction: 'x {nope}'\ninstruction_log_prob: y\n")
    with pytest.raises(UserError, match=r"key 'instruction': unknown placeholder \{nope\}"):
        load_prompt_set(tmp_path / "t.yaml", tmp_path / "e.yaml")
    (tmp_path / "t.yaml").write_text("instruction: 'x ({valid_letters})'\ninstruction_log_prob: y\n")
    (tmp_path / "e.yaml").write_text("examples:\n- {id: x, stem: s, options: {A: a, B: b}, answer: C}\n")
    with pytest.raises(UserError, match="e.yaml: key 'examples.0'"):
        load_prompt_set(tmp_path / "t.yaml", tmp_path / "e.yaml")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("instruction: 'Responda ({valid_letters}) {foo}'", r"unknown placeholder \{foo\}"),
        ('instruction: \'Responda ({valid_letters}) em JSON: {"resposta": "X"}\'', "double it: {{ and }}"),
        ("instruction: 'Responda ({valid_letters}) }'", "Single '}' encountered"),
        ("instruction: 'Responda com a letra.'", "does not name the valid letters"),
        (
            "instruction: 'Responda ({valid_letters}).'\ninstruction_cot: 'Pense.'",
            "key 'instruction_cot': the instruction does not name the valid letters",
        ),
        (
            "instruction: 'Responda ({valid_letters}).'\noption_format: '{letter}) {text} {n}'",
            r"key 'option_format': unknown placeholder \{n\}",
        ),
    ],
)
def test_template_placeholders_are_checked_at_load(text: str, expected: str, tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(f"{text}\ninstruction_log_prob: y\n", encoding="utf-8")
    with pytest.raises(UserError, match=expected):
        load_prompt_set(tmp_path / "t.yaml")


def test_template_may_say_why_it_names_no_letters_and_json_braces_doubled(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(
        'instruction: \'Responda em JSON: {{"resposta": "X"}}\'\ninstruction_log_prob: y\n'
        "without_valid_letters: the options are listed just below\n",
        encoding="utf-8",
    )
    prompts = load_prompt_set(tmp_path / "t.yaml")
    assert 'JSON: {"resposta": "X"}' in build_prompt(Q5, Q5.options, "generation", 0, prompts).user


def test_prompt_file_not_utf8_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_bytes("instruction: 'Questão ({valid_letters})'\n".encode("cp1252"))
    with pytest.raises(UserError, match=r"t.yaml: not UTF-8 text \(byte 0xe3 at offset 19\); save"):
        load_prompt_set(tmp_path / "t.yaml")


def test_prompt_file_with_a_duplicate_key_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(
        "instruction: 'a ({valid_letters})'\ninstruction_log_prob: y\ninstruction: 'b ({valid_letters})'\n",
        encoding="utf-8",
    )
    with pytest.raises(UserError, match="duplicate key 'instruction' \\(first at line 1"):
        load_prompt_set(tmp_path / "t.yaml")
