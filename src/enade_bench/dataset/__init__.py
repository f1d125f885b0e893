"""Questions: the canonical schema and loaders for CSV, JSONL and Hugging Face datasets."""

from enade_bench.dataset.loader import LoadedDataset, load_dataset
from enade_bench.dataset.schema import LETTERS, Question

__all__ = ["LETTERS", "LoadedDataset", "Question", "load_dataset"]
