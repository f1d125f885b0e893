"""lm-evaluation-harness side: the model wrapper and the two ``multiple_choice`` tasks.

The tasks are built programmatically from documents whose text is exactly what
our methods score (rendered by our backend, chat template and ``Resposta:``
prefill included):

* ``enade_bench_log_prob``: ``doc_to_text`` = the S5 context, choices = the option
  texts, ``target_delimiter`` = ``" "`` (so each continuation is ``" " + option``,
  the continuation our S5 scores);
* ``enade_bench_log_prob_one_shot``: the same with the S6 (one-shot) context, whose
  worked example is part of the text lm-eval reads (``num_fewshot`` stays 0);
* ``enade_bench_first_token``: ``doc_to_text`` = the first_token context, choices =
  ``A`` .. ``E`` with the same delimiter, i.e. ``" A"`` .. ``" E"``.

``TASK_CONFIGS`` is the same configuration lm-eval reads from a task YAML; only
``custom_dataset`` (the in-memory documents) is added at run time.
"""

from __future__ import annotations

import functools
import time
from typing import Any, TypedDict

from pydantic import JsonValue

from bench.speed.records import LmEvalPredictions, Metrics, ScoringDoc


class TaskConfig(TypedDict, total=False):
    """What lm-eval's task YAML says (the keys these tasks use)."""

    task: str
    output_type: str
    test_split: str
    doc_to_text: str
    doc_to_choice: str
    doc_to_target: str
    target_delimiter: str
    metric_list: list[dict[str, str]]
    generation_kwargs: dict[str, object]


TASK_CONFIGS: dict[str, TaskConfig] = {
    "log_prob": {
        "task": "enade_bench_log_prob",
        "output_type": "multiple_choice",
        "test_split": "test",
        "doc_to_text": "ctx_log_prob",
        "doc_to_choice": "options",
        "doc_to_target": "gold",
        "target_delimiter": " ",
        "metric_list": [{"metric": "acc"}, {"metric": "acc_norm"}],
    },
    "log_prob_one_shot": {
        "task": "enade_bench_log_prob_one_shot",
        "output_type": "multiple_choice",
        "test_split": "test",
        "doc_to_text": "ctx_log_prob_one_shot",
        "doc_to_choice": "options",
        "doc_to_target": "gold",
        "target_delimiter": " ",
        "metric_list": [{"metric": "acc"}, {"metric": "acc_norm"}],
    },
    "first_token": {
        "task": "enade_bench_first_token",
        "output_type": "multiple_choice",
        "test_split": "test",
        "doc_to_text": "ctx_first_token",
        "doc_to_choice": "letters",
        "doc_to_target": "gold",
        "target_delimiter": " ",
        "metric_list": [{"metric": "acc"}],
    },
}


class _Recording:
    """Mixed into an lm-eval model: keeps each request's answer and the time in the model
    (``loglikelihood``; ``generate_until`` for the generation arm)."""

    model_seconds: float
    captured: list[tuple[Any, tuple[float, bool]]]
    generated: list[tuple[Any, str]]

    def reset_capture(self) -> None:
        self.model_seconds = 0.0
        self.captured = []
        self.generated = []

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        start = time.perf_counter()
        out = super().generate_until(requests, disable_tqdm=True)  # type: ignore[misc]
        self.model_seconds += time.perf_counter() - start
        self.generated += list(zip(requests, out, strict=True))
        return list(out)

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
        start = time.perf_counter()
        out = super().loglikelihood(requests, disable_tqdm=True)  # type: ignore[misc]
        self.model_seconds += time.perf_counter() - start
        self.captured += list(zip(requests, out, strict=True))
        return list(out)

    def predictions(self, method: str, docs: list[ScoringDoc]) -> LmEvalPredictions:
        """Per-question scores and the prediction under *our* rule for ``method``.

        ``log_prob``: highest mean token log-probability (lm-eval's own ``acc`` uses
        the sum, ``acc_norm`` the byte-normalised sum); ``first_token``: highest
        log-probability of `` A`` .. `` E``.
        """
        sums: dict[str, list[float]] = {d["qid"]: [0.0] * len(d["options"]) for d in docs}
        counts: dict[str, list[int]] = {d["qid"]: [0] * len(d["options"]) for d in docs}
        contexts: dict[str, str] = {}
        for request, (loglik, _) in self.captured:
            qid = request.doc["qid"]
            context, continuation = request.args
            sums[qid][request.idx] = float(loglik)
            counts[qid][request.idx] = len(self._encode_pair(context, continuation)[1])  # type: ignore[attr-defined]
            contexts[qid] = context
        letters = "ABCDE"
        preds: dict[str, str] = {}
        for qid, values in sums.items():
            keys = [s / c if c else s for s, c in zip(values, counts[qid], strict=True)]
            if method == "first_token":
                keys = values
            preds[qid] = letters[max(range(len(keys)), key=lambda i: (keys[i], -i))]
        same_context = sum(contexts.get(d["qid"]) == doc_context(d, method) for d in docs)
        out = LmEvalPredictions(predictions=preds, scores=sums, contexts_identical=same_context)
        if method.startswith("log_prob"):
            out["n_tokens"] = counts
        return out


def doc_context(doc: ScoringDoc, method: str) -> str:
    """The context of ``doc`` that ``method``'s task reads (its ``doc_to_text``)."""
    if method == "log_prob":
        return doc["ctx_log_prob"]
    if method == "log_prob_one_shot":
        return doc["ctx_log_prob_one_shot"]
    return doc["ctx_first_token"]


def make_lm(model_dir: str, batch_size: int) -> Any:
    """An ``HFLM`` on ``model_dir`` (float32, CPU) that records its log-likelihoods."""
    from lm_eval.models.huggingface import HFLM  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    class RecordingHFLM(_Recording, HFLM):  # type: ignore[misc]
        """HFLM that keeps each request's answer and the time spent in ``loglikelihood``."""

    lm = RecordingHFLM(
        pretrained=model_dir,
        tokenizer=model_dir,
        dtype="float32",
        device="cpu",
        batch_size=batch_size,
    )
    lm.reset_capture()
    return lm


def make_lm_from(model: Any, tokenizer: Any, batch_size: int) -> Any:
    """An ``HFLM`` around a model already loaded (the GPU arm: the same weights, dtype and card as ours)."""
    from lm_eval.models.huggingface import HFLM  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    class RecordingHFLM(_Recording, HFLM):  # type: ignore[misc]
        """HFLM that keeps each request's answer and the time spent in the model methods."""

    lm = RecordingHFLM(pretrained=model, tokenizer=tokenizer, batch_size=batch_size)
    lm.reset_capture()
    return lm


def make_vllm_lm(model_dir: str, batch_size: int | str, engine_args: dict[str, JsonValue]) -> Any:
    """lm-eval's ``VLLM`` (``--model vllm``) on ``model_dir``, float32, recording its answers.

    ``engine_args`` are the same vLLM settings our side uses (``max_model_len``,
    ``enforce_eager`` ...), passed through as ``--model_args`` would; lm-eval's own
    defaults (seed 1234, prefix caching as vLLM's default) are kept.
    """
    from lm_eval.models.vllm_causallms import VLLM  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    class RecordingVLLM(_Recording, VLLM):  # type: ignore[misc]
        """VLLM that keeps each request's answer and the time spent in ``loglikelihood``."""

    lm = RecordingVLLM(
        pretrained=model_dir, tokenizer=model_dir, dtype="float32", batch_size=batch_size, **engine_args
    )
    lm.reset_capture()
    return lm


def build_task(method: str, docs: list[ScoringDoc]) -> Any:
    """The ``ConfigurableTask`` for ``method`` over ``docs`` (kept in memory)."""
    import datasets  # noqa: PLC0415 (optional or heavy dependency, imported at use)
    from lm_eval.api.task import ConfigurableTask  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    config: dict[str, object] = {**TASK_CONFIGS[method]}
    rows = [{**d, "options": list(d["options"]), "letters": list(d["letters"])} for d in docs]
    config["custom_dataset"] = lambda **_: datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})
    return ConfigurableTask(config=config)


@functools.cache
def task_manager() -> Any:
    """An lm-eval ``TaskManager`` without lm-eval's own task index.

    ``simple_evaluate`` builds a full ``TaskManager()`` when given none: about 4 s indexing
    every task YAML lm-eval ships, on each call, for the objects built here that need no
    index (``ConfigurableTask`` instances).  One empty manager serves every call.
    """
    from lm_eval.tasks import TaskManager  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    return TaskManager(include_defaults=False)


def evaluate_task(lm: Any, method: str, docs: list[ScoringDoc]) -> Metrics:
    """``lm_eval.simple_evaluate`` on the task; returns lm-eval's own metrics."""
    from lm_eval import simple_evaluate  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    task = build_task(method, docs)
    results = simple_evaluate(
        model=lm,
        tasks=[task],
        num_fewshot=0,
        bootstrap_iters=0,
        log_samples=False,
        verbosity="ERROR",
        task_manager=task_manager(),
    )
    metrics = (results or {}).get("results", {}).get(TASK_CONFIGS[method]["task"], {})
    return {k: v for k, v in metrics.items() if isinstance(v, (int, float))}
