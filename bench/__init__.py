"""Performance benchmark: enade-bench scoring against lm-evaluation-harness (issue 7).

Run it with ``enade-bench bench`` or ``python bench/run_bench.py``; see
docs/performance.md.  This folder is not part of the installed package:
``lm-eval`` is a benchmark-only dependency (the ``bench`` extra).
"""
