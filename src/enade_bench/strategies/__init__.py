"""Evaluation strategies S1–S7 and seeded option shuffling."""
