"""Comparing models question by question: scores, pairs, compact letters, item flips."""
