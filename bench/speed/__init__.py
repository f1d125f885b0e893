"""Performance benchmark: enade-bench scoring against lm-evaluation-harness.

Run it with ``enade-bench bench`` (or ``python -m bench``) from the
checkout root; see ``docs/performance.md``.  ``lm-eval`` is a benchmark-only
dependency (the ``bench`` extra): it is imported only when the lm-eval side runs,
and its absence is an ``error:`` line naming the extra.
"""
