"""A small OpenAI-compatible server backed by a real local model (test helper).

Answers ``/v1/chat/completions`` and ``/v1/completions`` in the documented
OpenAI shapes, including the parts ``transformers serve`` leaves out:
``logprobs`` / ``top_logprobs`` (chat), ``logprobs`` + ``echo`` with
``max_tokens: 0`` (completions, as vLLM does), and vLLM's
``continue_final_message`` for an assistant prefill.  Every number comes from
the model's forward pass; decoding is greedy.  Loopback only.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import torch
from api_fakes import FakeServer, Reply, Request


class LocalOpenAIServer(FakeServer):
    def __init__(self, model: Any, tokenizer: Any, model_name: str = "smollm2") -> None:
        super().__init__(self._route)
        self.model = model
        self.tok = tokenizer
        self.model_name = model_name
        self._model_lock = threading.Lock()

    # -- model helpers ------------------------------------------------------------------------
    @torch.inference_mode()
    def _logprobs(self, ids: list[int]) -> torch.Tensor:
        """log-softmax at every position of ``ids`` (row i: distribution of token i+1)."""
        logits = self.model(input_ids=torch.tensor([ids])).logits[0].float()
        return torch.log_softmax(logits, dim=-1)

    def _tops(self, row: torch.Tensor, k: int) -> list[tuple[str, float]]:
        values, indices = torch.topk(row, k)
        out: dict[str, float] = {}
        for v, i in zip(values.tolist(), indices.tolist(), strict=True):
            out.setdefault(self.tok.decode([i]), v)
        return list(out.items())

    @torch.inference_mode()
    def _greedy(self, ids: list[int], max_tokens: int) -> tuple[list[int], list[torch.Tensor], str]:
        """Greedy decoding with ``generate`` (KV cache); raw log-softmax of each step."""
        if max_tokens <= 0:
            return [], [], "length"
        out = self.model.generate(
            input_ids=torch.tensor([ids]),
            attention_mask=torch.ones(1, len(ids), dtype=torch.long),
            do_sample=False,
            max_new_tokens=max_tokens,
            output_logits=True,
            return_dict_in_generate=True,
            pad_token_id=self.tok.pad_token_id
            if self.tok.pad_token_id is not None
            else self.tok.eos_token_id,
            top_p=None,
            top_k=None,
            temperature=None,
        )
        eos = self.model.generation_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos])
        new: list[int] = []
        rows: list[torch.Tensor] = []
        for token, logits in zip(out.sequences[0, len(ids) :].tolist(), out.logits, strict=False):
            if token in eos_ids:
                return new, rows, "stop"
            new.append(int(token))
            rows.append(torch.log_softmax(logits[0].float(), dim=-1))
        return new, rows, "length"

    # -- endpoints ------------------------------------------------------------------------------
    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        cont = bool(body.get("continue_final_message"))
        text = self.tok.apply_chat_template(
            body["messages"],
            tokenize=False,
            continue_final_message=cont,
            add_generation_prompt=body.get("add_generation_prompt", not cont),
        )
        ids = self.tok(text, add_special_tokens=False)["input_ids"]
        new, rows, finish = self._greedy(ids, int(body.get("max_tokens") or 16))
        logprobs = None
        if body.get("logprobs"):
            k = int(body.get("top_logprobs") or 0)
            logprobs = {
                "content": [
                    {
                        "token": self.tok.decode([t]),
                        "logprob": float(row[t]),
                        "bytes": None,
                        "top_logprobs": [
                            {"token": s, "logprob": v, "bytes": None} for s, v in self._tops(row, k)
                        ],
                    }
                    for t, row in zip(new, rows, strict=True)
                ],
                "refusal": None,
            }
        return {
            "id": "chatcmpl-local",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model_name,
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": self.tok.decode(new, skip_special_tokens=True),
                        "refusal": None,
                    },
                    "logprobs": logprobs,
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": len(ids),
                "completion_tokens": len(new),
                "total_tokens": len(ids) + len(new),
            },
        }

    def _completion_choice(self, index: int, prompt: str, body: dict[str, Any]) -> dict[str, Any]:
        ids = self.tok(prompt)["input_ids"]
        k = body.get("logprobs")
        echo = bool(body.get("echo"))
        new, rows, finish = self._greedy(ids, int(body.get("max_tokens", 16)))
        tokens: list[str] = []
        values: list[float | None] = []
        tops: list[dict[str, float] | None] = []
        if echo:
            lp = self._logprobs(ids)
            tokens = [self.tok.decode([t]) for t in ids]
            values = [None] + [float(lp[i - 1, ids[i]]) for i in range(1, len(ids))]
            tops = [None] + [dict(self._tops(lp[i - 1], k)) if k else {} for i in range(1, len(ids))]
        tokens += [self.tok.decode([t]) for t in new]
        values += [float(row[t]) for t, row in zip(new, rows, strict=True)]
        tops += [dict(self._tops(row, k)) if k else {} for row in rows]
        offsets, pos = [], 0
        for token in tokens:
            offsets.append(pos)
            pos += len(token)
        text = (prompt if echo else "") + self.tok.decode(new, skip_special_tokens=True)
        logprobs = (
            None
            if k is None
            else {"tokens": tokens, "token_logprobs": values, "top_logprobs": tops, "text_offset": offsets}
        )
        return {"index": index, "text": text, "logprobs": logprobs, "finish_reason": finish}

    def _completions(self, body: dict[str, Any]) -> dict[str, Any]:
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        return {
            "id": "cmpl-local",
            "object": "text_completion",
            "created": int(time.time()),
            "model": self.model_name,
            "choices": [self._completion_choice(i, p, body) for i, p in enumerate(prompts)],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }

    def _route(self, req: Request) -> Reply:
        with self._model_lock:
            if req.method == "POST" and req.path == "/v1/chat/completions":
                return Reply(200, self._chat(req.json()))
            if req.method == "POST" and req.path == "/v1/completions":
                return Reply(200, self._completions(req.json()))
            if req.method == "GET" and req.path == "/v1/models":
                return Reply(200, {"object": "list", "data": [{"id": self.model_name, "object": "model"}]})
        return Reply(404, {"error": {"message": f"no route {req.path}", "type": "invalid_request_error"}})
