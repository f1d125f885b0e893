"""lm-evaluation-harness side of the generation arm: a ``generate_until`` task on our prompts.

Each document carries the exact prompt our runner sends (rendered by our backend, chat
template applied), so lm-eval reads it as a plain context: ``doc_to_text`` is that
string, ``num_fewshot`` is 0 and no chat template is applied on lm-eval's side (the
worked examples of S3 are part of the text).  Decoding is greedy (``do_sample: False``),
``max_gen_toks`` is our ``max_new_tokens`` and ``until`` our stop strings (the model's
end-of-sequence text: our runner stops on the end-of-sequence token and nothing else).
"""

from __future__ import annotations

from typing import Any

from bench.speed.lmeval_tasks import TaskConfig, task_manager
from bench.speed.records import GenDoc, LmEvalGeneration

#: The task configuration (what a task YAML would say); ``generation_kwargs`` and
#: ``custom_dataset`` are filled in at run time.
GENERATION_TASK: TaskConfig = {
    "task": "enade_bench_generation",
    "output_type": "generate_until",
    "test_split": "test",
    "doc_to_text": "ctx",
    "doc_to_target": "answer",
    "metric_list": [{"metric": "exact_match"}],
}


def generation_kwargs(max_new_tokens: int, until: list[str]) -> dict[str, object]:
    """lm-eval's ``generation_kwargs``: greedy, ``max_new_tokens`` new tokens, stop at ``until``."""
    return {"until": list(until), "max_gen_toks": max_new_tokens, "do_sample": False}


def build_generation_task(docs: list[GenDoc], max_new_tokens: int, until: list[str]) -> Any:
    """The ``generate_until`` ``ConfigurableTask`` over ``docs`` (kept in memory).

    Parameters
    ----------
    docs
        Documents with ``qid``, ``ctx`` (the rendered prompt) and ``answer`` (gold letter).
    max_new_tokens
        ``max_gen_toks``.
    until
        Stop strings.

    Returns
    -------
    lm_eval.api.task.ConfigurableTask
        The task.
    """
    import datasets  # noqa: PLC0415 (optional or heavy dependency, imported at use)
    from lm_eval.api.task import ConfigurableTask  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    config: dict[str, object] = {**GENERATION_TASK}
    config["generation_kwargs"] = generation_kwargs(max_new_tokens, until)
    rows = [{"qid": d["qid"], "ctx": d["ctx"], "answer": d["answer"] or ""} for d in docs]
    config["custom_dataset"] = lambda **_: datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})
    return ConfigurableTask(config=config)


def evaluate_generation(
    lm: Any, docs: list[GenDoc], max_new_tokens: int, until: list[str]
) -> LmEvalGeneration:
    """``lm_eval.simple_evaluate`` on the generation task; the texts lm-eval generated.

    Parameters
    ----------
    lm
        A recording lm-eval model (:func:`.lmeval_tasks.make_lm`), capture reset by the caller.
    docs, max_new_tokens, until
        As :func:`build_generation_task`.

    Returns
    -------
    dict
        ``texts`` (question id -> generated text), ``contexts_identical`` (how many contexts
        lm-eval sent equal ``doc["ctx"]``), ``prompt_tokens`` (lm-eval's own encoding of the
        contexts), ``gen_kwargs`` (as lm-eval received them) and ``lm_eval_metrics``.
    """
    from lm_eval import simple_evaluate  # noqa: PLC0415 (optional or heavy dependency, imported at use)

    task = build_generation_task(docs, max_new_tokens, until)
    results = simple_evaluate(
        model=lm,
        tasks=[task],
        num_fewshot=0,
        bootstrap_iters=0,
        log_samples=False,
        verbosity="ERROR",
        task_manager=task_manager(),
    )
    # lm-eval's results: its own untyped JSON-like dict
    metrics = (results or {}).get("results", {}).get(GENERATION_TASK["task"], {})
    texts: dict[str, str] = {}
    contexts: dict[str, str] = {}
    gen_kwargs: dict[str, object] = {}
    for request, text in lm.generated:
        qid = request.doc["qid"]
        contexts[qid], gen_kwargs = request.args
        texts[qid] = text
    return LmEvalGeneration(
        texts=texts,
        contexts_identical=sum(contexts.get(d["qid"]) == d["ctx"] for d in docs),
        prompt_token_ids={qid: list(lm.tok_encode(ctx)) for qid, ctx in contexts.items()},
        gen_kwargs=dict(gen_kwargs),
        lm_eval_metrics={k: v for k, v in metrics.items() if isinstance(v, (int, float))},
    )
