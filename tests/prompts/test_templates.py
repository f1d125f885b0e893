"""Prompt and worked-examples files: a wrong shape is one clear error line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tests.conftest import TEAM_EXAMPLES, TEAM_PROMPT

from enade_bench.errors import UserError
from enade_bench.prompts.templates import load_prompt_set


def test_a_bare_list_of_examples_asks_for_the_top_level_key(tmp_path: Path) -> None:
    listed = yaml.safe_load(TEAM_EXAMPLES.read_text(encoding="utf-8"))["examples"]
    path = tmp_path / "examples.yaml"
    path.write_text(yaml.safe_dump(listed, allow_unicode=True), encoding="utf-8")
    with pytest.raises(UserError) as caught:
        load_prompt_set(TEAM_PROMPT, path)
    message = str(caught.value)
    # before: "key '(top level)': Input should be a valid dictionary or instance of Examples"
    assert "instance of Examples" not in message and "\n" not in message
    assert message.startswith(
        f"{path}: the file holds a list at the top level; expected a top-level 'examples:' key"
    )
    assert "e.g. examples: [{id: ex1," in message
    path.write_text(yaml.safe_dump({"examples": listed}, allow_unicode=True), encoding="utf-8")
    assert len(load_prompt_set(TEAM_PROMPT, path).examples) == len(listed)


def test_a_template_file_that_is_not_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("- instruction: x\n", encoding="utf-8")
    with pytest.raises(UserError, match="holds a list at the top level; expected a mapping of keys"):
        load_prompt_set(path)
