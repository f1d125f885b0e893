"""Comparing models question by question: scores, pairs, rank groups, item flips."""
