"""``--batch-submit`` / ``--batch-fetch``: run an API experiment through the provider's batch API.

Submit builds every generation request of the run (every planned strategy, every
shuffle, every sample), skips what the intermediate files already hold and what
an earlier submit already sent, and writes ``{name}_batch_manifest.json`` in the
output folder: the job ids and, for each request id, its strategy, question,
shuffle, permutation, sample and prompt hash.  No prompt text and no key are
stored there.

Fetch polls every job not yet collected, downloads the results of ended jobs,
records answers and permanent errors in the manifest, re-queues transient
failures (rate limits, 5xx, expired or cancelled requests) as a new job, appends
every completed question to the strategy's intermediate file, and, once a
strategy is complete, writes exactly the files a live run writes.  Running it
again downloads nothing twice and rewrites the same files.
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import JsonValue, ValidationError

from enade_bench.backends.api.backend import ApiBackend, assemble_generation
from enade_bench.backends.api.batch_clients import BatchClient, BatchResult, JobStatus, make_batch_client
from enade_bench.backends.api.resilience import PermanentFailure
from enade_bench.backends.api.wire import Outcome, sampling
from enade_bench.errors import UserError
from enade_bench.masking import echoes_word, holds_secret, keep_identifiers, known_secrets, mask, weak_secrets
from enade_bench.masking.decoded import mask_words
from enade_bench.regular_file import read_text
from enade_bench.results.manifest import MANIFEST_FORMAT, BatchJob, BatchManifest, BatchOutcome, BatchRequest
from enade_bench.results.records import QuestionRecord
from enade_bench.results.store import IntermediateLog, atomic_write_text, dump_json
from enade_bench.results.summary import BatchTiming
from enade_bench.runner.execute import ChunkExecutor
from enade_bench.runner.outputs import RunOutcome
from enade_bench.runner.plan import BatchMode, Experiment, StrategyPlan
from enade_bench.runner.work import (
    rescored_note,
    sha256_text,
    with_current_fields,
    with_current_key,
)
from enade_bench.runner.write import log_key, write_results

T = TypeVar("T")

#: What a record says when its batch answer echoed a secret (``extra.withheld``).
MASKED_NOTE = (
    "raw output masked when the batch was collected (it held a form of a secret, written ***); "
    "the prediction was extracted from the masked text"
)
#: One request of a batch job: its id and the provider's request body.
Request = tuple[str, dict[str, JsonValue]]
#: Requests per job (well under every provider's limit: OpenAI 50k, Anthropic 100k).
MAX_REQUESTS_PER_JOB = 10_000
#: Times a request is sent before a transient failure is recorded as its error.
MAX_ATTEMPTS = 4


@dataclass
class _Plan:
    """One strategy's shared plan, with what is already done and its log."""

    plan: StrategyPlan
    executor: ChunkExecutor
    log: IntermediateLog
    done: dict[tuple[str, int], QuestionRecord]
    n_samples: int

    def request_id(self, index: int, sample: int) -> str:
        return f"{self.plan.label}-{index:05d}-{sample}"


@dataclass
class _Manifest:
    path: Path
    data: BatchManifest

    @classmethod
    def load(cls, path: Path, exp: Experiment) -> _Manifest:
        if not path.exists():
            api = exp.config.model.api
            assert api is not None
            return cls(
                path, BatchManifest(experiment=exp.config.name, provider=api.provider, model=api.model)
            )
        try:
            text = read_text(path)
        except OSError as exc:
            raise UserError(f"{path}: unreadable batch manifest ({exc})") from None
        try:
            data = BatchManifest.model_validate_json(text)
        except ValidationError as exc:
            if any(e["type"] == "json_invalid" for e in exc.errors()):
                raise UserError(f"{path}: unreadable batch manifest ({exc.errors()[0]['msg']})") from None
            data = None
        if data is None or data.format != MANIFEST_FORMAT or data.experiment != exp.config.name:
            raise UserError(f"{path}: not a batch manifest of experiment '{exp.config.name}'")
        return cls(path, data)

    def save(self) -> None:
        # the job and request ids are sent back to the provider: written as they are, never
        # withheld (a provider's id may happen to hold a fragment of a secret)
        keep_identifiers(i for job in self.data.jobs for i in (job.id, *job.request_ids))
        atomic_write_text(self.path, dump_json(self.data.model_dump(mode="json")))


class _SafeClient:
    """The provider's batch client, each call retried like a live request; refusals are errors."""

    def __init__(self, backend: ApiBackend, client: BatchClient) -> None:
        self.backend = backend
        self.client = client

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        try:
            return self.backend.call(fn)
        except PermanentFailure as exc:
            raise UserError(f"batch API ({self.backend.provider}): {what} refused: {exc}") from None

    def submit(self, requests: Sequence[Request], label: str) -> str:
        return self._call("submit", lambda: self.client.submit(requests, label))

    def status(self, job_id: str) -> JobStatus:
        return self._call(f"status of {job_id}", lambda: self.client.status(job_id))

    def results(self, job_id: str, request_ids: Sequence[str]) -> dict[str, BatchResult]:
        return self._call(f"results of {job_id}", lambda: self.client.results(job_id, request_ids))


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _plans(exp: Experiment, plans: Sequence[StrategyPlan]) -> list[_Plan]:
    cfg = exp.config
    n_samples = cfg.evaluation.n_samples if sampling(cfg.evaluation.temperature) else 1
    out = []
    for plan in plans:
        executor = ChunkExecutor(exp.model, plan, cfg.evaluation, exp.extract_fn)
        log = IntermediateLog(plan.paths.intermediate, log_key(exp, plan.strategy))
        raw = with_current_fields(log.load(), exp.questions)
        done = with_current_key(raw, exp.questions, log.path)
        note = rescored_note(raw, done, log.path)
        if note is not None:
            print(f"note: {plan.label}: {note}", file=sys.stderr)
        out.append(_Plan(plan, executor, log, done, n_samples))
    return out


def _body(backend: ApiBackend, plan: _Plan, index: int, sample: int) -> dict[str, JsonValue]:
    params = plan.executor.generation_params(0)
    seed = plan.plan.seeds[plan.plan.items[index].key] + sample
    return backend.request_body(plan.plan.prompts[index], params.temperature, seed, params.max_new_tokens)


def _submit_jobs(client: BatchClient, manifest: _Manifest, requests: list[Request], label: str) -> list[str]:
    ids = []
    for start in range(0, len(requests), MAX_REQUESTS_PER_JOB):
        part = requests[start : start + MAX_REQUESTS_PER_JOB]
        job_id = client.submit(part, label)
        manifest.data.jobs.append(
            BatchJob(id=job_id, request_ids=[rid for rid, _ in part], submitted_at=_now(), collected=False)
        )
        manifest.save()  # a crash between jobs must not lose a job id
        ids.append(job_id)
    return ids


def submit_requests(
    exp: Experiment, plans: list[_Plan], client: BatchClient, manifest: _Manifest
) -> list[str]:
    """Submit every request not yet done nor already submitted; print what was sent."""
    backend = exp.model
    assert isinstance(backend, ApiBackend)
    known = manifest.data.requests
    new: list[Request] = []
    for plan in plans:
        for index, item in enumerate(plan.plan.items):
            if item.key in plan.done:
                continue
            prompt_hash = sha256_text(backend.render(plan.plan.prompts[index]))
            for sample in range(plan.n_samples):
                rid = plan.request_id(index, sample)
                if rid in known:
                    continue
                known[rid] = BatchRequest(
                    strategy=plan.plan.strategy.id,
                    question_id=item.question.id,
                    shuffle=item.shuffle,
                    permutation=list(item.permutation or []) or None,
                    sample=sample,
                    prompt_hash=prompt_hash,
                    attempts=1,
                )
                new.append((rid, _body(backend, plan, index, sample)))
    if not new:
        print(f"nothing to submit ({len(known)} requests already submitted); run --batch-fetch")
        return []
    jobs = _submit_jobs(client, manifest, new, exp.config.name)
    print(f"submitted {len(new)} requests in {len(jobs)} job(s): {', '.join(jobs)}")
    print(f"wrote {manifest.path}; collect with --batch-fetch")
    return jobs


def _collect(exp: Experiment, plans: list[_Plan], client: BatchClient, manifest: _Manifest) -> int:
    """Poll and download ended jobs; re-queue transient failures. Returns pending job count."""
    backend = exp.model
    assert isinstance(backend, ApiBackend)
    requests, outcomes = manifest.data.requests, manifest.data.outcomes
    requeue: list[str] = []
    pending = 0
    for job in manifest.data.jobs:
        if job.collected:
            continue
        status = client.status(job.id)
        detail = backend.redact(status.detail)  # a provider's status text is written and printed
        if status.state == "pending":
            pending += 1
            print(f"job {job.id}: {detail}")
            continue
        results = client.results(job.id, job.request_ids)
        for rid in job.request_ids:
            result = results.get(rid, BatchResult(error="missing from the batch results", retry=True))
            if result.retry and requests[rid].attempts < MAX_ATTEMPTS:
                requeue.append(rid)
            else:
                error = None if result.error is None else backend.redact(result.error)
                text, masked = result.text, None
                weak = weak_secrets()  # a short key echoed as a word is masked too (issue 61)
                if text is not None and (holds_secret(text, known_secrets()) or echoes_word(text, weak)):
                    text, masked = mask_words(mask(text), weak), True  # kept scorable, never in clear
                outcomes[rid] = BatchOutcome(text=text, error=error, masked=masked, usage=result.usage)
        job.collected, job.status = True, detail
        manifest.save()
        print(f"job {job.id}: {detail}, collected")
    if requeue:
        by_rid = {
            plan.request_id(i, k): (plan, i, k)
            for plan in plans
            for i in range(len(plan.plan.items))
            for k in range(plan.n_samples)
        }
        bodies = []
        for rid in requeue:
            plan, index, sample = by_rid[rid]
            requests[rid].attempts += 1
            bodies.append((rid, _body(backend, plan, index, sample)))
        jobs = _submit_jobs(client, manifest, bodies, exp.config.name)
        pending += len(jobs)
        print(f"re-queued {len(requeue)} failed requests in job(s) {', '.join(jobs)}")
    return pending


def _finish(exp: Experiment, plans: list[_Plan], manifest: _Manifest) -> RunOutcome:
    """Log every completed question; write the result files of complete strategies."""
    outcomes, requests = manifest.data.outcomes, manifest.data.requests
    backend = exp.model
    done: list[RunOutcome] = []
    for plan in plans:
        new: list[QuestionRecord] = []
        missing = 0
        for index, item in enumerate(plan.plan.items):
            if item.key in plan.done:
                continue
            rids = [plan.request_id(index, k) for k in range(plan.n_samples)]
            if not all(rid in outcomes for rid in rids):
                missing += 1
                continue
            if requests[rids[0]].prompt_hash != sha256_text(backend.render(plan.plan.prompts[index])):
                raise UserError(
                    f"{manifest.path}: the prompt of {item.question.id} changed since --batch-submit "
                    "(config, data or prompts edited); submit again into a new output dir"
                )
            gen = assemble_generation(
                [Outcome(outcomes[r].text, outcomes[r].error, usage=outcomes[r].usage) for r in rids]
            )
            record = plan.executor.generation_record(item, plan.plan.prompts[index], gen)
            if any(outcomes[r].masked for r in rids):
                note = MASKED_NOTE
                record = record.model_copy(update={"extra": {**(record.extra or {}), "withheld": note}})
            new.append(record)
        if exp.config.output.save_intermediate and new:
            plan.log.ensure_header()
            plan.log.append(new)
        plan.done.update({r.key: r for r in new})
        label = plan.plan.strategy.id or exp.config.name
        if missing:
            print(
                f"{label}: {len(plan.plan.items) - missing}/{len(plan.plan.items)} items answered; waiting for the rest"
            )
            continue
        timing = BatchTiming(items_computed=len(new), jobs=[j.id for j in manifest.data.jobs])
        records = [plan.done[item.key] for item in plan.plan.items]
        done.append(write_results(exp, plan.plan, records, timing if new else None))
    return RunOutcome.combine(done)


def run_batch(exp: Experiment, plans: Sequence[StrategyPlan], mode: BatchMode) -> RunOutcome:
    """``--batch-submit`` (``mode="submit"``) or ``--batch-fetch``: the outcome of complete strategies."""
    backend = exp.model
    if not isinstance(backend, ApiBackend):
        raise UserError("--batch-submit/--batch-fetch: need model.type 'api' with a provider's batch API")
    scoring = [p.label for p in plans if p.strategy.method != "generation"]
    if scoring:
        raise UserError(
            f"--batch-submit/--batch-fetch: batch APIs run generation only; {', '.join(scoring)} "
            "need log-probabilities (choose --strategy S1..S4 or S7)"
        )
    client = _SafeClient(backend, make_batch_client(backend))
    manifest = _Manifest.load(exp.output_dir / f"{exp.config.name}_batch_manifest.json", exp)
    pending_plans = _plans(exp, plans)
    if mode == "submit":
        submit_requests(exp, pending_plans, client, manifest)
        return RunOutcome()
    if not manifest.path.exists():
        raise UserError(f"{manifest.path}: no batch manifest; run --batch-submit first")
    pending = _collect(exp, pending_plans, client, manifest)
    outcome = _finish(exp, pending_plans, manifest)
    if pending:
        print(f"pending: {pending} job(s) still running; run --batch-fetch again later")
    return outcome
