"""Accuracy with confidence intervals, subgroup breakdowns and position bias (BPC)."""

from enade_bench.metrics.accuracy import breakdown, field_breakdowns, summarize, wilson_interval
from enade_bench.metrics.position_bias import position_bias

__all__ = ["breakdown", "field_breakdowns", "position_bias", "summarize", "wilson_interval"]
