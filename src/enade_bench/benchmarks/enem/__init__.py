"""ENEM: Brazil's national high-school exam (files of ``../shared/data/enem/questions``).

The psychometric analyses of ENEM runs (INEP's 3PL parameters, booklet linking)
live in :mod:`enade_bench.psychometrics.enem` and the report.
"""

from enade_bench.benchmarks.base import CsvExam
from enade_bench.dataset.presets import ENEM

BENCHMARK = CsvExam(name="enem", preset=ENEM)
