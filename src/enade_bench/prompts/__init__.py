"""Prompt templates (YAML, editable) and their rendering into messages."""
