"""Prompt templates (YAML, editable) and their rendering into messages."""

from enade_bench.prompts.builder import PromptParts, build_prompt, option_view
from enade_bench.prompts.templates import Example, PromptSet, load_prompt_set

__all__ = ["Example", "PromptParts", "PromptSet", "build_prompt", "load_prompt_set", "option_view"]
