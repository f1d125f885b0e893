"""Pure scoring functions: answer extraction and choices from option scores (no I/O)."""
