"""enade-bench: evaluate language models on multiple-choice exams written for humans."""

__version__ = "0.1.0"
