"""HELM run folders for the same answers as the lm-eval fixture, in HELM's documented format.

HELM (crfm-helm) is not installed here, so its output is written from its own dataclasses
(``asdict_without_nones`` of ``RunSpec``, ``ScenarioState``/``RequestState``/``Instance`` and
``PerInstanceStats``/``Stat``/``MetricName``; ``benchmark/runner.py`` writes them), as the
``enem_challenge`` run entry (``run_specs/enem_challenge_specs.py``: multiple_choice_joint,
exact-match metrics) would for each model.  The model's answer is the letter lm-eval's
``enem_mc`` task chose (highest log-likelihood, what its ``acc`` scores); the stats are the
exact-match family, 0/1 for one completion, plus a few of the counts HELM adds.

Usage: ``python helm_runs.py LM_EVAL_DIR OUT_DIR``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

LETTERS = "ABCDE"
MODELS = {
    "SmolLM2-135M-Instruct": "HuggingFaceTB/SmolLM2-135M-Instruct",
    "gemma-3-270m-it": "google/gemma-3-270m-it",
}
INSTRUCTIONS = (
    "Dê uma resposta selecionando uma letra entre as opções fornecidas. Se as opções forem A, B, C, D e E, "
    "sua resposta deve consistir em uma única letra que corresponde a resposta correta.\n"
    "Exemplo: Qual é a capital da França?\nA. Londres\nB. Paris\nC. Roma\nD. Berlim\nE. Sydney\nResposta: B"
)


def stat(name: str, value: float) -> dict[str, object]:
    """A ``Stat`` of one value (``Stat(name).add(value)``), as ``asdict_without_nones`` writes it."""
    return {
        "name": {"name": name, "split": "test"},
        "count": 1,
        "sum": value,
        "sum_squared": value * value,
        "min": value,
        "max": value,
        "mean": value,
        "variance": 0.0,
        "stddev": 0.0,
    }


def adapter_spec(model: str) -> dict[str, object]:
    return {
        "method": "multiple_choice_joint",
        "global_prefix": "",
        "global_suffix": "",
        "instructions": INSTRUCTIONS,
        "input_prefix": "Pergunta: ",
        "input_suffix": "\n",
        "reference_prefix": "A. ",
        "reference_suffix": "\n",
        "chain_of_thought_prefix": "",
        "chain_of_thought_suffix": "\n",
        "output_prefix": "Resposta: ",
        "output_suffix": "\n",
        "instance_prefix": "\n",
        "substitutions": [],
        "max_train_instances": 0,
        "num_outputs": 5,
        "num_train_trials": 1,
        "num_trials": 1,
        "sample_train": True,
        "model_deployment": model,
        "model": model,
        "temperature": 0.0,
        "max_tokens": 1,
        "stop_sequences": ["\n"],
        "multi_label": False,
    }


def run(samples: Path, name: str, model: str, out: Path) -> None:
    folder = out / f"enem_challenge:model={model.replace('/', '_')}"
    folder.mkdir(parents=True, exist_ok=True)
    spec = adapter_spec(model)
    states, per_instance = [], []
    for line in samples.read_text(encoding="utf-8").splitlines():
        sample = json.loads(line)
        doc = sample["doc"]
        logliks = [float(r[0]) for r in sample["filtered_resps"]]
        chosen = LETTERS[max(range(len(logliks)), key=logliks.__getitem__)]
        instance = {
            "input": {"text": doc["question"]},
            "references": [
                {"output": {"text": text}, "tags": ["correct"] if LETTERS[i] == doc["answer"] else []}
                for i, text in enumerate(doc["choices"])
            ],
            "split": "test",
            "id": f"id{sample['doc_id']}",
        }
        options = "".join(f"{letter}. {text}\n" for letter, text in zip(LETTERS, doc["choices"], strict=True))
        prompt = f"{INSTRUCTIONS}\n\nPergunta: {doc['question']}\n{options}Resposta:"
        request = {
            "model_deployment": model,
            "model": model,
            "embedding": False,
            "prompt": prompt,
            "temperature": 0.0,
            "num_completions": 1,
            "top_k_per_token": 5,
            "max_tokens": 1,
            "stop_sequences": ["\n"],
            "echo_prompt": False,
            "top_p": 1,
            "presence_penalty": 0,
            "frequency_penalty": 0,
        }
        result = {
            "success": True,
            "embedding": [],
            "cached": False,
            "completions": [
                {
                    "text": f" {chosen}",
                    "logprob": max(logliks),
                    "tokens": [{"text": f" {chosen}", "logprob": max(logliks)}],
                }
            ],
        }
        states.append(
            {
                "instance": instance,
                "train_trial_index": 0,
                "output_mapping": dict(zip(LETTERS, doc["choices"], strict=True)),
                "request": request,
                "result": result,
                "num_train_instances": 0,
                "prompt_truncated": False,
                "num_conditioning_tokens": 0,
            }
        )
        right = float(chosen == doc["answer"])
        stats = [
            stat("num_references", 5.0),
            stat("num_train_trials", 1.0),
            stat("num_train_instances", 0.0),
            stat("prompt_truncated", 0.0),
            stat("exact_match", right),
            stat("quasi_exact_match", right),
            stat("prefix_exact_match", right),
            stat("quasi_prefix_exact_match", right),
        ]
        per_instance.append({"instance_id": instance["id"], "train_trial_index": 0, "stats": stats})
    run_spec = {
        "name": f"enem_challenge:model={model}",
        "scenario_spec": {
            "class_name": "helm.benchmark.scenarios.enem_challenge_scenario.ENEMChallengeScenario",
            "args": {},
        },
        "adapter_spec": spec,
        "metric_specs": [
            {
                "class_name": "helm.benchmark.metrics.basic_metrics.BasicGenerationMetric",
                "args": {
                    "names": [
                        "exact_match",
                        "quasi_exact_match",
                        "prefix_exact_match",
                        "quasi_prefix_exact_match",
                    ]
                },
            }
        ],
        "data_augmenter_spec": {
            "perturbation_specs": [],
            "should_augment_train_instances": False,
            "should_include_original_train": False,
            "should_skip_unchanged_train": False,
            "should_augment_eval_instances": False,
            "should_include_original_eval": False,
            "should_skip_unchanged_eval": False,
            "seeds_per_instance": 1,
        },
        "groups": ["enem_challenge"],
    }
    files = {
        "run_spec.json": run_spec,
        "scenario_state.json": {"adapter_spec": spec, "request_states": states},
        "per_instance_stats.json": per_instance,
    }
    for file, content in files.items():
        (folder / file).write_text(json.dumps(content, indent=2, ensure_ascii=False), encoding="utf-8")
    print(name, "->", folder)


def main(lm_eval: Path, out: Path) -> None:
    for name, model in MODELS.items():
        (samples,) = sorted(lm_eval.glob(f"*{name}/samples_enem_mc_*.jsonl"))
        run(samples, name, model, out)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
