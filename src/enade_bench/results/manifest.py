"""``{name}_batch_manifest.json``: what a batch run submitted, and what came back.

No prompt text and no key are stored: each request is named by its strategy,
question, shuffle, permutation, sample and prompt hash.
"""

from __future__ import annotations

from pydantic import Field

from enade_bench.results.records import Usage
from enade_bench.results.summary import Closed

MANIFEST_FORMAT = "enade_bench.batch/1"


class BatchJob(Closed):
    """One job sent to the provider's batch API."""

    id: str
    request_ids: list[str]
    submitted_at: str
    collected: bool
    status: str | None = Field(default=None, exclude_if=lambda v: v is None)


class BatchRequest(Closed):
    """One generation request (one sample of one work item)."""

    strategy: str | None
    question_id: str
    shuffle: int
    permutation: list[int] | None
    sample: int
    prompt_hash: str
    attempts: int


class BatchOutcome(Closed):
    """The answer to one request, or its permanent error (already redacted)."""

    text: str | None
    error: str | None
    #: The answer echoed a secret: kept with the secret masked (``***``), so that it can still
    #: be scored; the record says so in ``extra.withheld``.
    masked: bool | None = Field(default=None, exclude_if=lambda v: v is None)
    #: The tokens the provider counted (absent: none reported).
    usage: Usage | None = Field(default=None, exclude_if=lambda v: v is None)


class BatchManifest(Closed):
    """Every job, request and outcome of one experiment's batch run."""

    format: str = MANIFEST_FORMAT
    experiment: str
    provider: str
    model: str
    jobs: list[BatchJob] = Field(default_factory=list)
    requests: dict[str, BatchRequest] = Field(default_factory=dict)
    outcomes: dict[str, BatchOutcome] = Field(default_factory=dict)
