"""Measurement code of the checkout: benchmarks, GPU runs and timing scripts, not the product.

Nothing here is installed with enade-bench (``src/enade_bench`` holds only the product); it
imports the product like any user and runs from the checkout's root:

* ``python -m bench``: our scoring speed against lm-evaluation-harness, on the CPU or a GPU
  (:mod:`bench.speed`; docs/performance.md);
* ``python -m bench.speed.<module>``: its single measurements (``tree_pairs``, ``scoring_paths``,
  ``profile_scoring``, ``vllm_parity``);
* ``bench/gpu/``: the GPU check on a bare GPU machine (``prepare.sh``, ``run_gpu.sh``);
* ``bench/cli/``, ``bench/report/`` and the scripts beside this file: one measurement each,
  run as ``python bench/….py`` (their docstrings say how).

Results, and the logs of the runs the docs quote, are in ``bench/results/``.
"""
