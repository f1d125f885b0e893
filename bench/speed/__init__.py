"""Performance benchmark: enade-bench scoring against lm-evaluation-harness.

Run it with ``python -m bench`` (:mod:`bench.__main__`) from the checkout root; see
``docs/performance.md``.  It is measurement code, not the product: it lives in the checkout's
``bench/`` folder, is not installed, and imports ``enade_bench`` as any user does.  ``lm-eval``
is a benchmark-only dependency (the ``bench`` extra): it is imported only when the lm-eval side
runs, and its absence is an ``error:`` line naming the extra.
"""
