"""One backend class for every provider: generation everywhere, log-probabilities where served.

Requests run on a thread pool of ``max_concurrency`` workers under a
requests-per-minute budget, each one through :func:`.resilience.call_with_retries`.
:meth:`ApiBackend.generate_stream` yields each prompt's :class:`Generation` as soon
as its samples are in, so the runner can write every answer to the intermediate
file the moment it arrives.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import operator
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

from enade_bench.backends.api import wire
from enade_bench.backends.api.clients import base_url_for, endpoint_for, make_sdk_client
from enade_bench.backends.api.keys import NO_KEY, redact
from enade_bench.backends.api.resilience import (
    AuthStreak,
    MalformedReply,
    PermanentFailure,
    RateLimiter,
    RetryPolicy,
    call_with_retries,
)
from enade_bench.backends.api.wire import ProviderJson
from enade_bench.backends.base import ContinuationScore, Generation, GenerationParams
from enade_bench.backends.chat_render import (
    CHAT_MESSAGES,
    CHAT_TEMPLATE_RENDERED,
    RAW,
    has_chat_template,
    letter_token_ids,
    render_text,
)
from enade_bench.backends.model_info import load_tokenizer
from enade_bench.config import ApiConfig
from enade_bench.errors import UserError
from enade_bench.masking import public_url, remember, url_secrets
from enade_bench.prompts.builder import PromptParts
from enade_bench.results.identity import ApiIdentity, ModelIdentity, PromptForm
from enade_bench.results.records import Usage

T = TypeVar("T")


def capabilities_for(cfg: ApiConfig) -> frozenset[str]:
    """Methods a provider can run.

    ``first_token`` needs ``top_logprobs`` (OpenAI chat, OpenAI-compatible servers);
    ``log_prob`` needs prompt log-probabilities (``echo``), which only
    OpenAI-compatible *completions* servers such as vLLM return.
    """
    if cfg.provider == "openai_compatible":
        extra = {"first_token", "log_prob"} if cfg.completions_endpoint else {"first_token"}
        return frozenset({"generation", *extra})
    if cfg.provider == "openai":
        return frozenset({"generation", "first_token"})
    return frozenset({"generation"})


def uses_completions(cfg: ApiConfig) -> bool:
    """Prompts go to ``/v1/completions`` as text (else to a chat endpoint as messages)."""
    return cfg.provider == "openai_compatible" and cfg.completions_endpoint


def api_prompt_form(cfg: ApiConfig, tokenizer: Any) -> PromptForm:
    """Messages for chat endpoints; completions: the tokenizer's chat template, else raw text."""
    if not uses_completions(cfg):
        return CHAT_MESSAGES
    return CHAT_TEMPLATE_RENDERED if has_chat_template(tokenizer) else RAW


def prefill_note(cfg: ApiConfig, prompt_form: PromptForm) -> str:
    """How scoring prompts end (the local backends prefill ``Resposta:`` in the assistant turn)."""
    if uses_completions(cfg):
        return "in the rendered text" if prompt_form == CHAT_TEMPLATE_RENDERED else "plain text"
    if cfg.provider == "openai_compatible":
        return "assistant turn continued (continue_final_message)"
    return "none: this provider's chat API cannot continue an assistant turn"


class ApiBackend:
    """A model behind a provider's API (see :func:`capabilities_for` for what it can run)."""

    def __init__(self, cfg: ApiConfig, api_key: str, client: Any | None = None) -> None:
        self.cfg = cfg
        self.base_url = base_url_for(cfg)  # ${VAR} expanded, user-info refused
        # the key, the URL's user-info and every value of its query (sent as default_query), whatever
        # their names (?subscription-key=, code=): every output withholds a text holding one from now on
        query = list(endpoint_for(cfg).query.values())
        self._secrets = [s for s in (api_key, *url_secrets(self.base_url), *query) if s != NO_KEY]
        remember(self._secrets)
        self.client = client if client is not None else make_sdk_client(cfg, api_key)
        self.completions = uses_completions(cfg)
        self.policy = RetryPolicy(
            cfg.max_retries, cfg.retry_base_delay_s, cfg.retry_max_delay_s, cfg.max_retry_after_s
        )
        self._auth = AuthStreak()
        self.limiter = RateLimiter(cfg.requests_per_minute)
        self.tokenizer: Any = None
        if cfg.tokenizer is not None:
            self.tokenizer = load_tokenizer(cfg.tokenizer)
        self.prompt_form: PromptForm = api_prompt_form(cfg, self.tokenizer)
        self._identity = ModelIdentity(
            backend="api",
            name=cfg.model,
            engine="api",
            prompt_form=self.prompt_form,
            api=ApiIdentity(
                provider=cfg.provider,
                base_url=None if self.base_url is None else public_url(self.base_url),
                endpoint="completions" if self.completions else "chat",
                tokenizer=cfg.tokenizer,
                prefill=prefill_note(cfg, self.prompt_form),
            ),
        )

    def text_prompt(self, prompt: PromptParts) -> str:
        """The text sent to ``/v1/completions``: chat-templated with a tokenizer, else plain."""
        if self.tokenizer is not None:
            return render_text(self.tokenizer, prompt, has_chat_template(self.tokenizer))
        return prompt.plain_text()

    # -- Backend protocol -------------------------------------------------------------
    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    @property
    def capabilities(self) -> frozenset[str]:
        return capabilities_for(self.cfg)

    def render(self, prompt: PromptParts) -> str:
        """What is sent: the plain-text prompt (completions) or the messages, as JSON."""
        if self.completions:
            return self.text_prompt(prompt)
        if self.cfg.provider == "google":
            request = wire.gemini_request(self.cfg, prompt, temperature=None, seed=None)
            shown: Any = {"system_instruction": prompt.system, "contents": request["contents"]}
        elif self.cfg.provider == "anthropic":
            shown = {"system": prompt.system, "messages": [{"role": "user", "content": prompt.user}]}
        else:
            shown = wire.chat_messages(prompt, prefill=self.cfg.provider == "openai_compatible")
        return json.dumps(shown, ensure_ascii=False)

    @property
    def provider(self) -> str:
        """The provider's name (``model.api.provider``)."""
        return self.cfg.provider

    def redact(self, text: str) -> str:
        """``text`` with this backend's key (and fragments of it) removed."""
        return redact(text, self._secrets)

    # -- requests -----------------------------------------------------------------------
    def call(self, fn: Callable[[], T]) -> T:
        """Run one request through the rate budget and the retry policy."""
        endpoint = None if self.base_url is None else public_url(self.base_url)
        label = f"{self.cfg.provider} ({self.cfg.model}" + (f" at {endpoint})" if endpoint else ")")
        return call_with_retries(fn, self.policy, self.limiter, label, self._secrets, streak=self._auth)

    def request_body(
        self, prompt: PromptParts, temperature: float | None, seed: int | None, max_tokens: int | None = None
    ) -> ProviderJson:
        """The generation request for one sample (also the body of a batch line).

        ``max_tokens``: the larger of ``model.api.max_tokens`` and this value (the
        evaluation's budget, larger for chain of thought).
        """
        cfg = self.cfg
        limit = max(cfg.max_tokens, max_tokens or 0)
        if cfg.provider == "anthropic":
            return wire.anthropic_body(cfg, prompt, temperature=temperature, max_tokens=limit)
        if cfg.provider == "google":
            return wire.gemini_request(cfg, prompt, temperature=temperature, seed=seed, max_tokens=limit)
        if self.completions:
            body = wire.openai_completion_body(cfg, self.text_prompt(prompt), max_tokens=limit, logprobs=None)
            self._exact_tokens(body)
            if wire.sampling(temperature):
                body.update(temperature=temperature, seed=seed)
            return body
        return wire.openai_chat_body(cfg, prompt, temperature=temperature, seed=seed, max_tokens=limit)

    def _exact_tokens(self, body: ProviderJson) -> None:
        """A rendered chat template carries its own special tokens: the server must add none."""
        if self.prompt_form == CHAT_TEMPLATE_RENDERED:
            body.setdefault("add_special_tokens", False)

    def send(self, body: ProviderJson) -> ProviderJson:
        """Send one request body once (no retries); the response as plain data."""
        rest = dict(body)
        if self.cfg.provider == "anthropic":
            model, max_tokens, messages = rest.pop("model"), rest.pop("max_tokens"), rest.pop("messages")
            resp = self.client.messages.create(
                model=model, max_tokens=max_tokens, messages=messages, extra_body=rest
            )
            return _as_json(resp)
        if self.cfg.provider == "google":
            from google.genai import types  # noqa: PLC0415 (optional or heavy dependency, imported at use)

            resp = self.client.models.generate_content(
                model=self.cfg.model,
                contents=rest["contents"],
                config=types.GenerateContentConfig(**rest["config"]),
            )
            return _as_json(resp, mode="json", exclude_none=True)
        model = rest.pop("model")
        if "prompt" in rest:
            resp = self.client.completions.create(model=model, prompt=rest.pop("prompt"), extra_body=rest)
        else:
            messages = rest.pop("messages")
            resp = self.client.chat.completions.create(model=model, messages=messages, extra_body=rest)
        return _as_json(resp)

    def parse(self, data: ProviderJson) -> wire.Outcome:
        """The answer in a generation response (live or from a batch file), with the tokens it reports."""
        return dataclasses.replace(self._answer(data), usage=wire.usage_of(self.cfg.provider, data))

    def _answer(self, data: ProviderJson) -> wire.Outcome:
        if self.cfg.provider == "anthropic":
            return wire.parse_anthropic(data)
        if self.cfg.provider == "google":
            return wire.parse_gemini(data)
        if self.completions:
            choices = data.get("choices") or []
            if not choices:
                return wire.Outcome(None, "malformed reply: empty response (no choices)", malformed=True)
            return wire.Outcome(choices[0].get("text") or "")
        return wire.parse_openai_chat(data)[0]

    def _sample(
        self, prompt: PromptParts, temperature: float | None, seed: int | None, max_tokens: int
    ) -> wire.Outcome:
        body = self.request_body(prompt, temperature, seed, max_tokens)

        def once() -> wire.Outcome:
            start = time.perf_counter()
            data = self.send(body)
            seconds = time.perf_counter() - start
            outcome = self.parse(data)
            if outcome.malformed:
                raise MalformedReply(outcome.error or "malformed reply")
            if outcome.error is not None:
                raise PermanentFailure(outcome.error)
            return dataclasses.replace(outcome, usage=(outcome.usage or Usage()) + Usage(seconds=seconds))

        try:
            return self.call(once)
        except PermanentFailure as exc:
            return wire.Outcome(None, str(exc))

    def _pool_map(self, tasks: Sequence[Callable[[], T]]) -> Iterator[tuple[int, T]]:
        """Run tasks concurrently; yield ``(index, result)`` as each finishes.

        The first exception cancels what has not started; every result that came back
        (those finished with it, and those in flight then) is yielded before it propagates,
        so that no answer received is lost.
        """
        pool = ThreadPoolExecutor(max_workers=self.cfg.max_concurrency)
        futures: dict[Future[T], int] = {pool.submit(task): i for i, task in enumerate(tasks)}
        failure: BaseException | None = None
        stopped = False
        try:
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in sorted(finished, key=futures.__getitem__):
                    if future.cancelled():
                        continue
                    exc = future.exception()
                    if exc is None:
                        yield futures[future], future.result()
                    elif failure is None:
                        failure = exc
                        for other in pending:
                            other.cancel()
            if failure is not None:
                raise failure
        except (KeyboardInterrupt, GeneratorExit):
            stopped = True  # Ctrl-C, or the consumer stopped: do not wait for the requests in flight
            raise
        finally:
            pool.shutdown(wait=not stopped, cancel_futures=True)

    # -- generation ---------------------------------------------------------------------
    def generate_stream(
        self, prompts: Sequence[PromptParts], params: GenerationParams, seeds: Sequence[int] | None = None
    ) -> Iterator[tuple[int, Generation]]:
        """Yield ``(prompt index, Generation)`` as soon as all samples of a prompt are in.

        ``n_samples`` independent requests per prompt when sampling (seeds
        ``seeds[i] + k``; ``seeds`` defaults to ``params.seed`` for every prompt),
        one request when greedy.  Permanent failures become
        ``Generation(texts=[...], error=reason)``.
        """
        n = params.n_samples if wire.sampling(params.temperature) else 1
        firsts = list(seeds) if seeds is not None else [params.seed] * len(prompts)
        tasks: list[Callable[[], wire.Outcome]] = []
        for prompt, first in zip(prompts, firsts, strict=True):
            for k in range(n):
                tasks.append(
                    functools.partial(
                        self._sample, prompt, params.temperature, first + k, params.max_new_tokens
                    )
                )
        got: dict[int, dict[int, wire.Outcome]] = {}
        for index, outcome in self._pool_map(tasks):
            i, k = divmod(index, n)
            got.setdefault(i, {})[k] = outcome
            if len(got[i]) == n:
                yield i, assemble_generation([got[i][k] for k in range(n)])

    def generate(self, prompts: Sequence[PromptParts], params: GenerationParams) -> list[Generation]:
        results = dict(self.generate_stream(prompts, params))
        return [results[i] for i in range(len(prompts))]

    # -- log-probabilities (openai / openai_compatible) ---------------------------------
    def _scoring_call(self, body: ProviderJson, what: str) -> ProviderJson:
        try:
            return self.call(lambda: self.send(body))
        except PermanentFailure as exc:
            raise UserError(
                f"model.api: {what} request refused by the server ({exc}); does it return logprobs?"
            ) from None

    def letter_logprobs(
        self, prompts: Sequence[PromptParts], letters: str, variants: str
    ) -> list[list[float]]:
        """Next-token log-probability of each letter from ``top_logprobs``."""
        k = self.cfg.top_logprobs
        ids: list[int] = []
        if self.completions and self.tokenizer is not None:
            ids = sorted({t for group in letter_token_ids(self.tokenizer, letters, variants) for t in group})

        def one(prompt: PromptParts) -> list[float]:
            if self.completions:
                body = wire.openai_completion_body(
                    self.cfg, self.text_prompt(prompt), max_tokens=1, logprobs=k
                )
                if ids:  # vLLM: exactly these tokens' log-probabilities (not just the top k)
                    body["logprob_token_ids"] = ids
                self._exact_tokens(body)
                tops = wire.completion_top_logprobs(self._scoring_call(body, "first_token"))
            else:
                body = wire.openai_chat_body(
                    self.cfg, prompt, temperature=None, seed=None, max_tokens=1, top_logprobs=k
                )
                tops = wire.openai_chat_top_logprobs(self._scoring_call(body, "first_token"))
            if not tops:
                raise UserError(
                    f"model.api: the server at {public_url(self.base_url or '')} returned no logprobs; "
                    "first_token needs top_logprobs (vLLM, llama.cpp server, OpenAI)"
                )
            return wire.letter_scores(tops, letters, variants)

        results = dict(self._pool_map([functools.partial(one, p) for p in prompts]))
        return [results[i] for i in range(len(prompts))]

    def continuation_logprobs(
        self, prompt: PromptParts, continuations: Sequence[str]
    ) -> list[ContinuationScore]:
        """Prompt log-probabilities of each continuation via ``echo`` (one request for all)."""
        context = self.text_prompt(prompt)
        texts = [context] + [context + c for c in continuations]
        body = wire.openai_completion_body(self.cfg, texts, max_tokens=0, logprobs=0, echo=True)
        self._exact_tokens(body)
        data = self._scoring_call(body, "log_prob")
        choices = sorted(data.get("choices") or [], key=lambda c: c.get("index") or 0)
        if len(choices) != len(texts):
            raise UserError(
                f"model.api: log_prob: expected {len(texts)} choices, the server sent {len(choices)}"
            )
        ctx_tokens, _ = wire.echo_tokens(choices[0], context)
        scores = []
        for text, choice in zip(texts[1:], choices[1:], strict=True):
            tokens, values = wire.echo_tokens(choice, text)
            if not tokens or all(v is None for v in values[1:]):
                raise UserError(
                    "model.api: the server returned no prompt logprobs; log_prob needs a completions "
                    "server that honours echo + logprobs (e.g. vLLM)"
                )
            token_lp = wire.continuation_from_echo(ctx_tokens, tokens, values)
            scores.append(ContinuationScore(float(sum(token_lp)), len(token_lp), token_lp))
        return scores


def _as_json(resp: Any, **dump: Any) -> ProviderJson:
    """An SDK response as plain data; a body the SDK could not parse (an HTML page sent with
    status 200, which the SDKs hand back as text) is a :class:`MalformedReply`."""
    if not hasattr(resp, "model_dump"):
        shown = " ".join(str(resp).split())[:80]
        raise MalformedReply(f"malformed reply: body is not JSON ({shown!r})")
    return dict(resp.model_dump(**dump))


def assemble_generation(outcomes: Sequence[wire.Outcome]) -> Generation:
    """One Generation from a prompt's samples: every text kept, errors joined, usages added."""
    # raw: the runner extracts the answer first, then withholds a text that echoes a secret
    texts = [o.text for o in outcomes if o.text is not None]
    errors = sorted({o.error for o in outcomes if o.error})
    usages = [o.usage for o in outcomes if o.usage is not None]
    usage = functools.reduce(operator.add, usages) if usages else None
    return Generation(texts=texts, error="; ".join(errors) if errors else None, usage=usage)
